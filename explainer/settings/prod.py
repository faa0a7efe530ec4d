"""Production: everything that matters comes from the environment and must be set."""

from . import env
from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = env.env_str("SECRET_KEY")
ALLOWED_HOSTS = env.env_list("ALLOWED_HOSTS", [])
if not ALLOWED_HOSTS:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("ALLOWED_HOSTS must list the hosts that serve the app")
DATABASES = {"default": env.database_from_url(env.env_str("DATABASE_URL"))}
SESSION_COOKIE_SECURE = env.env_bool("SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
