"""Settings shared by every environment; values that vary come from settings.env."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from model_worker.contract import logs
from model_worker.contract.connection import async_options, sync_options

from . import env

BASE_DIR = env.BASE_DIR
VAR_DIR = BASE_DIR / "var"

# Development and tests only: production refuses it (settings/prod.py), since it signs page links.
DEV_SECRET_KEY = "dev-only-insecure-key-change-me"
SECRET_KEY = env.env_str("SECRET_KEY", DEV_SECRET_KEY)
# Off unless the environment or the dev settings turn it on: a 500 must not show the debug page.
DEBUG = env.env_bool("DEBUG", False)
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
    "axes",
    "django_prometheus",
    "explainer",
]

MIDDLEWARE = [
    # /healthz, /readyz and /metrics, before anything checks the host, redirects or counts (explainer/probes.py).
    "explainer.probes.ProbeMiddleware",
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface's language: the language cookie (the header's switch), else Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Before axes, so a locked-out sign-in is counted with the 429 axes answers.
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: answers a locked-out login with 429
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # counts failed sign-ins and refuses while locked out
    "django.contrib.auth.backends.ModelBackend",
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
    host = {"address": redis_url, "socket_timeout": 30, **async_options()}
    return {"default": {"BACKEND": "explainer.channel_layer.OutageTolerantRedisChannelLayer", "CONFIG": {"hosts": [host]}}}


CHANNEL_LAYERS = channel_layers(REDIS_URL)


def caches(redis_url: str) -> dict:
    # Shared by every process, so a throttle counted in one web worker holds in all of them.
    return {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url,
                        "KEY_PREFIX": "explainer", "OPTIONS": sync_options()}}


CACHES = caches(REDIS_URL)

# Celery: the Django side only enqueues gpu work by name and runs the qa queue.
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# The reaper (explainer/services/lifecycle.py), run by Celery beat in the `finish` worker: every
# REAPER_INTERVAL_S it sends again, or fails, generations nobody will finish (docs/reliability.md).
REAPER_INTERVAL_S = env.env_int("REAPER_INTERVAL_S", 5, minimum=1)
# A generation younger than this is left alone (its task may still be on its way to the queue).
REAPER_GRACE_S = env.env_int("REAPER_GRACE_S", 10, minimum=1)
# A worker's outcome that the `finish` worker has not recorded after this long is recorded by the reaper.
REAPER_FINISH_AFTER_S = env.env_int("REAPER_FINISH_AFTER_S", 30, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "reap-generations": {
        "task": "explainer.reap_generations",
        "schedule": float(REAPER_INTERVAL_S),
        "options": {"queue": "finish", "expires": float(REAPER_INTERVAL_S)},
    },
}

# Generated pages live on another origin when PAGE_ORIGIN is set; otherwise the same server
# serves them, always sandboxed to an opaque origin.
PAGE_ORIGIN = env.origin("PAGE_ORIGIN", "")
# The app's own origin, the one allowed to frame pages (CSP frame-ancestors); needed with PAGE_ORIGIN,
# since a page request then arrives on the page origin and cannot tell where the app lives.
APP_ORIGIN = env.origin("APP_ORIGIN", "")
# How long a page link handed to a viewer stays valid; the thread view and the teacher's views issue
# fresh links each time they are opened, so a leaked link stops working soon.
PAGE_LINK_TTL_S = env.env_int("PAGE_LINK_TTL_S", 30 * 60, minimum=60)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
# Django's own codes, so its translations apply too; the page language of "zh-hans" is "zh" (explainer/languages.py).
LANGUAGES = [("en", "English"), ("zh-hans", "中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
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

# `json`: one JSON object a line, with the generation's id on every line about one (docs/deploy.md, Logs).
LOG_FORMAT = env.env_choice("LOG_FORMAT", "text", logs.FORMATS)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"generation": {"()": logs.GenerationFilter}},
    "formatters": {"line": {"()": logs.formatter_factory(LOG_FORMAT)}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "line", "filters": ["generation"]}},
    "root": {"handlers": ["console"], "level": env.env_str("LOG_LEVEL", "INFO")},
}

# The operator's endpoints (explainer/probes.py): /metrics answers these addresses, or a request carrying
# METRICS_TOKEN as a bearer token; production serves it to none unless told (settings/prod.py).
METRICS_ALLOWED_NETWORKS = env.env_networks("METRICS_ALLOWED_NETWORKS", ["127.0.0.1", "::1"])
METRICS_TOKEN = env.env_str("METRICS_TOKEN", "")
PROMETHEUS_EXPORT_MIGRATIONS = False  # django-prometheus would query the database as every process starts

# Product limits.
QUESTION_MAX_CHARS = env.env_int("QUESTION_MAX_CHARS", 500, minimum=1)
GENERATION_STREAM_MAXLEN = env.env_int("GENERATION_STREAM_MAXLEN", 5000, minimum=100)
GENERATION_STREAM_TTL_S = env.env_int("GENERATION_STREAM_TTL_S", 3600, minimum=60)
ORPHAN_GRACE_S = env.env_int("ORPHAN_GRACE_S", 10, minimum=0)

# The library the router matches questions against: the exemplar corpus (its pages/ folder of records).
LIBRARY_DIR = Path(env.env_str("LIBRARY_DIR", str(BASE_DIR / "model_worker" / "corpus")))
# The library's thumbnails (`manage.py library_thumbnails` pictures each page once): /library/ shows a
# placeholder for a page not pictured yet.
LIBRARY_THUMBNAILS_DIR = Path(env.env_str("LIBRARY_THUMBNAILS_DIR", str(VAR_DIR / "library-thumbnails")))

# Routing that learns (docs/teacher.md): a learner's pick from an unsure refusal made within this many seconds
# of it teaches the router once they stay on the page this long (asking a follow-up there counts at once; a new
# question before then withdraws it); at most this many picks a learner a day; a question that this many
# learners picked the same page for holds for everyone.
ROUTE_LEARN_PICK_WINDOW_S = env.env_int("ROUTE_LEARN_PICK_WINDOW_S", 600, minimum=1)
ROUTE_LEARN_STAY_S = env.env_int("ROUTE_LEARN_STAY_S", 30, minimum=0)
ROUTE_LEARN_PER_DAY = env.env_int("ROUTE_LEARN_PER_DAY", 5, minimum=0)
ROUTE_LEARN_AGREE = env.env_int("ROUTE_LEARN_AGREE", 3, minimum=1)

# Rate limits (docs/reliability.md). Questions: counted in Redis per window, atomically.
ANON_QUESTIONS_PER_SESSION_HOUR = env.env_int("ANON_QUESTIONS_PER_SESSION_HOUR", 20, minimum=0)
# A browser's own limit comes first; the address's only stops one browser posing as many (cookies cleared
# each time). A class behind one school address is 30 browsers or so: 30 times the browser's limit.
ANON_QUESTIONS_PER_IP_HOUR = env.env_int("ANON_QUESTIONS_PER_IP_HOUR", 600, minimum=0)
# A learner in a class whose teacher set no daily limit still has this one (0 = none).
LEARNER_DAILY_QUESTIONS = env.env_int("LEARNER_DAILY_QUESTIONS", 100, minimum=0)
# Join attempts per IP address (django-ratelimit's "count/period" syntax).
JOIN_RATE = env.env_str("JOIN_RATE", "10/m")
RATELIMIT_USE_CACHE = "default"
# Teacher sign-in: after this many failures for one username from one address, locked out a while.
AXES_FAILURE_LIMIT = env.env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env.env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
# The socket's peer only: a client-sent X-Forwarded-For must not pick a fresh address per guess.
AXES_IPWARE_META_PRECEDENCE_ORDER = ["REMOTE_ADDR"]

# The page backend the GPU workers run (model_worker.config reads it there); the web tier asks what it can do.
MODEL_BACKEND = env.env_str("MODEL_BACKEND", "clover")
# How many more times a page that fails its render check is asked for again, with the check's errors.
REPAIR_ATTEMPTS = env.env_int("REPAIR_ATTEMPTS", 2, minimum=0)
# With a backend that can give one (a served model), a new question the router is unsure of is put to the model
# first: does the lesson answer it? (docs/model.md, Second opinion). The longest wait, in seconds, before the
# router's choice stands as it is.
SECOND_OPINION = env.env_bool("SECOND_OPINION", True)
SECOND_OPINION_TIMEOUT_S = env.env_int("SECOND_OPINION_TIMEOUT_S", 3, minimum=1)
