"""`manage.py qa FILE_OR_PAGE_ID [--json]`: run the render check on an HTML file or a stored page."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from explainer.models import PageVersion
from explainer.render_check import check_html

EXIT_PASSED, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class Command(BaseCommand):
    help = "Render-check a generated page in Chromium. Exit 0 passed, 1 failed, 2 no such file or page."

    def add_arguments(self, parser):
        parser.add_argument("target", help="an HTML file, or the id of a stored PageVersion")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the whole report as JSON")
        parser.add_argument("--images", action="store_true", help="with --json: include the PNGs, base64")
        parser.add_argument("--thumbnail", type=Path, help="write the thumbnail PNG to this path")

    def handle(self, *args, target: str, as_json: bool, images: bool, thumbnail: Path | None, **options):
        html = self._html(target)
        if html is None:
            self.stderr.write(f"qa: {target!r} is neither a readable HTML file nor a stored page id")
            sys.exit(EXIT_BAD_INPUT)
        report = check_html(html)
        if thumbnail and report.thumbnail:
            thumbnail.write_bytes(report.thumbnail)
        if as_json:
            self.stdout.write(_dumps(report.as_dict(images=images)))
        else:
            for name, result in report.checks.items():
                mark = "ok  " if result.passed else ("FAIL" if result.required else "note")
                self.stdout.write(f"{mark} {name}: {result.detail}")
            self.stdout.write(f"{'passed' if report.passed else 'failed'} in {report.timings.get('total_s', 0):.1f} s")
        sys.exit(EXIT_PASSED if report.passed else EXIT_FAILED)

    def _html(self, target: str) -> str | None:
        path = Path(target)
        if path.is_file():
            try:
                return path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
        if target.isdigit():
            return PageVersion.objects.filter(pk=int(target)).values_list("html", flat=True).first()
        return None


def _dumps(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)
