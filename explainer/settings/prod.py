"""Production: everything that matters comes from the environment and must be set."""

from django.core.exceptions import ImproperlyConfigured

from . import env
from .base import *  # noqa: F403
from .base import APP_ORIGIN, DEV_SECRET_KEY, MIDDLEWARE, PAGE_ORIGIN

DEBUG = False
SECRET_KEY = env.env_str("SECRET_KEY")
if not SECRET_KEY.strip() or SECRET_KEY == DEV_SECRET_KEY or SECRET_KEY.startswith("django-insecure-"):
    # Page links are signed with it: the development key would let anyone forge them.
    raise ImproperlyConfigured(
        "SECRET_KEY is empty or the development key; set a long random one, e.g. "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )
ALLOWED_HOSTS = env.env_list("ALLOWED_HOSTS", [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must list the hosts that serve the app")
if PAGE_ORIGIN and not APP_ORIGIN:
    # The page origin's CSP names the app as the one frame ancestor; without it no page can be framed.
    raise ImproperlyConfigured("PAGE_ORIGIN is set, so APP_ORIGIN (the app's own origin) must be set too")
DATABASES = {"default": env.database_from_url(env.env_str("DATABASE_URL"))}
SESSION_COOKIE_SECURE = env.env_bool("SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# HTTPS only, remembered by the browser (HSTS); a proxy that terminates TLS says so in X-Forwarded-Proto.
SECURE_HSTS_SECONDS = env.env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env.env_bool("SECURE_HSTS_PRELOAD", False)
SECURE_SSL_REDIRECT = env.env_bool("SECURE_SSL_REDIRECT", False)
if env.env_bool("BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# /metrics is served to no address unless the operator names the scraper's (or sets METRICS_TOKEN).
METRICS_ALLOWED_NETWORKS = env.env_networks("METRICS_ALLOWED_NETWORKS", [])
# The app's own pages get a Content-Security-Policy (generated pages keep their own, stricter one).
MIDDLEWARE = [*MIDDLEWARE, "explainer.security.ContentSecurityPolicyMiddleware"]
