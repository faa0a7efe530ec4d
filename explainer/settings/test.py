"""Tests: SQLite by default, PostgreSQL when DATABASE_URL says so; Redis database 15."""

from . import env
from .base import *  # noqa: F403
from .base import VAR_DIR, caches, channel_layers

REDIS_URL = env.redis_url("redis://127.0.0.1:6379/15")
CHANNEL_LAYERS = channel_layers(REDIS_URL)
CACHES = caches(REDIS_URL)
CELERY_BROKER_URL = REDIS_URL
DATABASES = {"default": env.database_from_url(env.env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'test.sqlite3'}"))}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not memory, so Celery workers in other processes see the rows a test commits.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
# Close connections after each request or consumer call: a kept-alive one from a worker thread would
# stop the test database from being dropped at the end of the run.
DATABASES["default"]["CONN_MAX_AGE"] = 0
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# A page nobody watches stops at once unless a test asks for the production habit of waiting.
ORPHAN_GRACE_S = env.env_int("ORPHAN_GRACE_S", 0, minimum=0)
# The test denoiser stands in for the model (tests/support/denoiser.py); children get it by MODEL_BACKEND too.
MODEL_BACKEND = env.env_str("MODEL_BACKEND", "tests.support.denoiser:DeterministicDenoiser")
# The test denoiser's page fails the render check's interaction check; tests that want repairs ask for them.
REPAIR_ATTEMPTS = env.env_int("REPAIR_ATTEMPTS", 0, minimum=0)
