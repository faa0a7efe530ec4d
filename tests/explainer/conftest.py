"""Fixtures of the web-side tests that drive Chromium."""

from __future__ import annotations

import pytest
from playwright.sync_api import sync_playwright

from explainer.render_check.browser import launch_options


@pytest.fixture
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(**launch_options())
        yield chromium
        chromium.close()
