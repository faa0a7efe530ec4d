"""Small helpers shared by fixtures and tests that start processes."""

from __future__ import annotations

import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_BACKEND = "tests.support.denoiser:DeterministicDenoiser"
OPEN_DOMAIN_TEST_BACKEND = "tests.support.denoiser:OpenDomainDenoiser"


def listening(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
