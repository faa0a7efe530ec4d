"""`manage.py library_thumbnails [SLUG...] [--force]`: picture the library's pages for /library/.

Each page is render-checked once and the check's thumbnail kept in `LIBRARY_THUMBNAILS_DIR`; a page
pictured since it last changed is skipped, so running it again after adding pages pictures only those.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from explainer.services.library_thumbnails import Pictured, library_thumbnails_make

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class Command(BaseCommand):
    help = ("Render-check each library page once and keep its thumbnail for /library/. Exit 0 when every "
            "page has one, 1 when a page's check failed (it keeps the placeholder), 2 for an unknown slug.")

    def add_arguments(self, parser):
        parser.add_argument("slugs", nargs="*", metavar="slug", help="only these pages (default: all)")
        parser.add_argument("--force", action="store_true", help="picture pages that already have a thumbnail")

    def handle(self, *args, slugs: list[str], force: bool, **options):
        def say(result: Pictured) -> None:
            self.stdout.write(f"{result.outcome:6} {result.slug}{': ' + result.detail if result.detail else ''}")

        done = library_thumbnails_make(slugs=slugs, force=force, on_page=say)
        unknown = sorted(set(slugs) - {r.slug for r in done})
        for slug in unknown:
            self.stderr.write(f"library_thumbnails: {slug!r} is not a library page")
        failed = sum(r.outcome == "failed" for r in done)
        self.stdout.write(f"{len(done)} pages: {sum(r.outcome == 'made' for r in done)} made, "
                          f"{sum(r.outcome == 'kept' for r in done)} kept, {failed} failed")
        sys.exit(EXIT_BAD_INPUT if unknown else EXIT_FAILED if failed else EXIT_OK)
