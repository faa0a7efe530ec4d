"""Settings shared by every environment; values that vary come from settings.env."""

from __future__ import annotations

from . import env

BASE_DIR = env.BASE_DIR
VAR_DIR = BASE_DIR / "var"

SECRET_KEY = env.env_str("SECRET_KEY", "dev-only-insecure-key-change-me")
DEBUG = env.env_bool("DEBUG", True)
ALLOWED_HOSTS = env.env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "explainer",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "explainer.urls"
ASGI_APPLICATION = "explainer.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": env.database_from_url(env.env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'explainer.sqlite3'}"))
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.redis_url()


def channel_layers(redis_url: str) -> dict:
    # redis-py 8 times socket reads out after 5 s by default, which cuts the channel layer's own
    # blocking BZPOPMIN (also 5 s) short; allow longer so an idle socket is not torn down.
    host = {"address": redis_url, "socket_timeout": 30}
    return {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [host]}}}


CHANNEL_LAYERS = channel_layers(REDIS_URL)

# Celery: the Django side only enqueues gpu work by name and runs the qa queue.
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = False

# Generated pages live on another origin when PAGE_ORIGIN is set; otherwise the same server
# serves them, always sandboxed to an opaque origin.
PAGE_ORIGIN = env.origin("PAGE_ORIGIN", "")
# The app's own origin, the one allowed to frame pages (CSP frame-ancestors); needed with PAGE_ORIGIN,
# since a page request then arrives on the page origin and cannot tell where the app lives.
APP_ORIGIN = env.origin("APP_ORIGIN", "")
# How long a page link handed to a viewer stays valid.
PAGE_LINK_TTL_S = env.env_int("PAGE_LINK_TTL_S", 7 * 24 * 3600, minimum=60)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh", "中文")]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
MEDIA_URL = "/media/"
MEDIA_ROOT = VAR_DIR / "media"

LOGIN_URL = "/teacher/login/"
LOGIN_REDIRECT_URL = "/teacher/"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.env_str("LOG_LEVEL", "INFO")},
}

# Product limits.
QUESTION_MAX_CHARS = env.env_int("QUESTION_MAX_CHARS", 500, minimum=1)
GENERATION_STREAM_MAXLEN = env.env_int("GENERATION_STREAM_MAXLEN", 5000, minimum=100)
GENERATION_STREAM_TTL_S = env.env_int("GENERATION_STREAM_TTL_S", 3600, minimum=60)
ORPHAN_GRACE_S = env.env_int("ORPHAN_GRACE_S", 10, minimum=0)
# The page backend the GPU workers run (model_worker.config reads it there); the web tier asks what it can do.
MODEL_BACKEND = env.env_str("MODEL_BACKEND", "clover")
# How many more times a page that fails its render check is asked for again, with the check's errors.
REPAIR_ATTEMPTS = env.env_int("REPAIR_ATTEMPTS", 2, minimum=0)
