"""Production: everything that matters comes from the environment and must be set."""

from django.core.exceptions import ImproperlyConfigured

from . import env
from .base import *  # noqa: F403
from .base import APP_ORIGIN, PAGE_ORIGIN

DEBUG = False
SECRET_KEY = env.env_str("SECRET_KEY")
ALLOWED_HOSTS = env.env_list("ALLOWED_HOSTS", [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must list the hosts that serve the app")
if PAGE_ORIGIN and not APP_ORIGIN:
    # The page origin's CSP names the app as the one frame ancestor; without it no page can be framed.
    raise ImproperlyConfigured("PAGE_ORIGIN is set, so APP_ORIGIN (the app's own origin) must be set too")
DATABASES = {"default": env.database_from_url(env.env_str("DATABASE_URL"))}
SESSION_COOKIE_SECURE = env.env_bool("SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
