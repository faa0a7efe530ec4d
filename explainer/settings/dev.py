"""Embedded default: SQLite file under var/, local Redis, pages sandboxed on the same server."""

from .base import *  # noqa: F403
