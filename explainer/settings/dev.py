"""Embedded default: SQLite file under var/, local Redis, pages sandboxed on the same server."""

from . import env
from .base import *  # noqa: F403

DEBUG = env.env_bool("DEBUG", True)
