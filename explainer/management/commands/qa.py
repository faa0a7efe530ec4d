"""`manage.py qa FILE_OR_PAGE_ID... [--json]`: run the render check on HTML files or stored pages."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from explainer.models import PageVersion
from explainer.render_check import check_html

EXIT_PASSED, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class Command(BaseCommand):
    help = ("Render-check generated pages in Chromium, one browser for all. Exit 0 all passed, 1 one failed, "
            "2 a target is no readable file or stored page (then nothing is checked).")

    def add_arguments(self, parser):
        parser.add_argument("targets", nargs="+", metavar="target",
                            help="an HTML file, or the id of a stored PageVersion")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="print each report as JSON, one object a line, in the order given")
        parser.add_argument("--images", action="store_true", help="with --json: include the PNGs, base64")
        parser.add_argument("--thumbnail", type=Path, help="one target only: write its thumbnail PNG to this path")

    def handle(self, *args, targets: list[str], as_json: bool, images: bool, thumbnail: Path | None, **options):
        pages = {target: self._html(target) for target in targets}
        bad = [target for target, html in pages.items() if html is None]
        for target in bad:
            self.stderr.write(f"qa: {target!r} is neither a readable HTML file nor a stored page id")
        if thumbnail and len(targets) > 1:
            self.stderr.write("qa: --thumbnail takes one target")
            sys.exit(EXIT_BAD_INPUT)
        if bad:
            sys.exit(EXIT_BAD_INPUT)
        passed = True
        for target in targets:
            report = check_html(pages[target])
            passed &= report.passed
            if thumbnail and report.thumbnail:
                thumbnail.write_bytes(report.thumbnail)
            if as_json:
                self.stdout.write(json.dumps({"target": target, **report.as_dict(images=images)}, ensure_ascii=False))
                continue
            if len(targets) > 1:
                self.stdout.write(f"== {target}")
            for name, result in report.checks.items():
                mark = "ok  " if result.passed else ("FAIL" if result.required else "note")
                self.stdout.write(f"{mark} {name}: {result.detail}")
            self.stdout.write(f"{'passed' if report.passed else 'failed'} in {report.timings.get('total_s', 0):.1f} s")
        sys.exit(EXIT_PASSED if passed else EXIT_FAILED)

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
