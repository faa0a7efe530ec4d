"""Fixture pages for the render check: one good page of each kind, and ways to break them."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent


def plain_page() -> str:
    """A three.js page that does not use the kit: spinning cube, click opens a note, slider resizes."""
    return (HERE / "good.html").read_text(encoding="utf-8")


def kit_page() -> str:
    """A small kit page: two parts and a timeline."""
    return (HERE / "kit.html").read_text(encoding="utf-8")


def break_plain_page(find: str, replace: str) -> str:
    """The plain page with one piece of it replaced."""
    html = plain_page()
    assert find in html, find
    return html.replace(find, replace, 1)
