"""A class's own library pages, as records the library router can index."""

from __future__ import annotations

from dataclasses import dataclass

from explainer.models import Classroom, LibraryPage


@dataclass(frozen=True)
class LibraryRecord:
    id: int
    slug: str
    title: str
    lang: str
    topic: str
    questions: tuple[str, ...]
    html: str


def library_pages(*, classroom: Classroom | int) -> list[LibraryRecord]:
    """Every page the class's teachers added (all render-checked), by topic then language."""
    rows = LibraryPage.objects.filter(classroom=classroom).order_by("topic", "lang")
    return [_record(row) for row in rows]


def library_page_for(*, classroom: Classroom | int, slug: str) -> LibraryRecord | None:
    row = LibraryPage.objects.filter(classroom=classroom, slug=slug).first()
    return _record(row) if row else None


def library_page_for_teacher(*, user, page_id: int) -> LibraryPage | None:
    qs = LibraryPage.objects.select_related("classroom")
    if not user.is_superuser:
        qs = qs.filter(classroom__teacher=user)
    return qs.filter(pk=page_id).first()


def _record(row: LibraryPage) -> LibraryRecord:
    return LibraryRecord(id=row.pk, slug=row.slug, title=row.title, lang=row.lang, topic=row.topic,
                         questions=tuple(row.questions), html=row.html)
