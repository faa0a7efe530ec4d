"""The render check: a generated page in real Chromium, under the production sandbox, judged."""

from .check import CheckOptions, check_file, check_html, check_page
from .report import RenderReport

__all__ = ["CheckOptions", "RenderReport", "check_file", "check_html", "check_page"]
