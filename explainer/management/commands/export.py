"""`manage.py export TARGET -o page.html`: one self-contained HTML file that works offline from file://.

TARGET is a library slug (a corpus page such as `sky-blue`; with `--classroom ID`, a page the class's
teachers added) or the id of a stored generated page.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from explainer.models import PageVersion
from explainer.pages.export import ExportError, export_page
from explainer.selectors.exemplars import exemplar_html
from explainer.selectors.library_pages import library_page_for

EXIT_OK, EXIT_BAD_INPUT = 0, 2


class Command(BaseCommand):
    help = "Write a page as one HTML file with three.js and the kit inlined (no server, no network)."

    def add_arguments(self, parser):
        parser.add_argument("target", help="a library slug (sky-blue) or a generated page's id")
        parser.add_argument("-o", "--output", type=Path, required=True, help="the HTML file to write")
        parser.add_argument("--classroom", type=int, help="look the slug up in this class's own library")

    def handle(self, *args, target: str, output: Path, classroom: int | None, **options):
        html = self._html(target, classroom)
        if html is None:
            where = f"class {classroom}'s library" if classroom else "the library"
            self.stderr.write(f"export: {target!r} is neither a page in {where} nor a stored page id")
            sys.exit(EXIT_BAD_INPUT)
        try:
            exported = export_page(html)
        except ExportError as exc:
            self.stderr.write(f"export: {target!r} cannot be made self-contained: {exc}")
            sys.exit(EXIT_BAD_INPUT)
        output.write_text(exported, encoding="utf-8")
        self.stdout.write(f"wrote {output} ({len(exported.encode()) / 1024 / 1024:.1f} MB)")

    def _html(self, target: str, classroom: int | None) -> str | None:
        if classroom is not None:
            record = library_page_for(classroom=classroom, slug=target)
            return record.html if record else None
        if target.isdigit():
            return PageVersion.objects.filter(pk=int(target)).values_list("html", flat=True).first()
        return exemplar_html(target)
