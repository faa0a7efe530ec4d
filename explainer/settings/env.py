"""The one place that reads the environment; a bad value stops start-up with a clear message."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parents[2]


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise ImproperlyConfigured(f"{name} must be set")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str, default: list[str]) -> list[str]:
    """Addresses or networks (`10.0.0.0/8`, `::1`), comma-separated; an empty value names none."""
    networks = env_list(name, default)
    for net in networks:
        try:
            ipaddress.ip_network(net, strict=False)
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {net!r} is not an address or network like 10.0.0.0/8") from None
    return networks


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default).strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of {', '.join(choices)}")
    return value


def database_from_url(url: str) -> dict:
    """Django DATABASES entry for a postgres:// or sqlite:/// URL."""
    parsed = urlparse(url)
    if parsed.scheme in {"postgres", "postgresql", "pgsql"}:
        if not parsed.path.strip("/"):
            raise ImproperlyConfigured(f"DATABASE_URL {url!r} names no database")
        return {
            "ENGINE": "django_prometheus.db.backends.postgresql",  # Django's, counting queries
            "NAME": unquote(parsed.path.lstrip("/")),
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            "CONN_MAX_AGE": 60,
        }
    if parsed.scheme == "sqlite":
        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else ""
        if not path:
            raise ImproperlyConfigured(f"DATABASE_URL {url!r}: use sqlite:///relative/or/absolute/path")
        # The web server and the qa worker write the same file: wait for the lock rather than fail,
        # and take it when a transaction starts so two writers never deadlock on an upgrade.
        return {
            "ENGINE": "django_prometheus.db.backends.sqlite3",  # Django's, counting queries
            "NAME": path,
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
        }
    raise ImproperlyConfigured(f"DATABASE_URL scheme {parsed.scheme!r} is not supported (postgres:// or sqlite:///)")


def redis_url(default: str = "redis://127.0.0.1:6379/0") -> str:
    url = env_str("REDIS_URL", default)
    if urlparse(url).scheme not in {"redis", "rediss", "unix"}:
        raise ImproperlyConfigured(f"REDIS_URL {url!r} must start with redis://, rediss:// or unix://")
    return url


def origin(name: str, default: str) -> str:
    value = env_str(name, default).rstrip("/")
    parsed = urlparse(value)
    if value and (parsed.scheme not in {"http", "https"} or not parsed.netloc):
        raise ImproperlyConfigured(f"{name}={value!r} must be an origin like https://pages.example.org")
    return value
