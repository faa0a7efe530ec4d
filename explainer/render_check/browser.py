"""How the project starts Chromium: Debian's build when present, Playwright's own otherwise."""

from __future__ import annotations

import os
from pathlib import Path

CHROMIUM_PATH = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))

# Quiet, offline-friendly flags; SwiftShader gives headless WebGL without a GPU.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
]


def launch_options() -> dict:
    """Keyword arguments for `playwright.chromium.launch`."""
    options: dict = {"headless": True, "args": list(CHROMIUM_ARGS)}
    if CHROMIUM_PATH.exists():
        options["executable_path"] = str(CHROMIUM_PATH)
    # Otherwise Playwright's bundled browser, for machines where `playwright install` works.
    return options
