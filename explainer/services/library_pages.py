"""A class's own library: teachers add kit pages (pasted, uploaded or promoted), each render-checked first."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from explainer.models import Classroom, LibraryPage, PageVersion
from explainer.pages.policy import origin_of
from explainer.render_check import check_html
from explainer.render_check.report import RenderReport
from explainer.services.page_intake import page_form_problem, page_size_problem, remote_urls
from model_worker.corpus import LANGS, TOPIC_KEY

MAX_QUESTIONS = 10
MAX_QUESTION_CHARS = 300
LANG_NAMES = {"en": "English", "zh": "Chinese"}


class LibraryPageCheckFailed(ValidationError):
    """The page failed the render check; `report` holds the check's findings and screenshots."""

    def __init__(self, report: RenderReport):
        reason = (f"the render check could not run ({report.error}); try again" if report.error
                  else f"the page failed the render check: {report.summary()}")
        super().__init__({"html": [reason]})
        self.report = report


def library_page_add(
    *, classroom: Classroom, html: str, title: str, lang: str, topic: str, questions: list[str],
    source: str, added_by=None, source_page: PageVersion | None = None,
) -> LibraryPage:
    """Validate the metadata and the page, render-check it, then store it; nothing is stored on any refusal.

    Raises ValidationError naming the field (title, lang, topic, questions, html), or
    LibraryPageCheckFailed when the page does not pass the render check.
    """
    title, topic = title.strip(), topic.strip().lower()
    questions = [q.strip() for q in questions if q.strip()]
    slug = topic if lang == "en" else f"{lang}-{topic}"
    errors = _metadata_errors(classroom=classroom, title=title, lang=lang, topic=topic, questions=questions, slug=slug)
    problem = page_size_problem(html) or page_form_problem(html) or _remote_problem(html)
    if problem:
        errors["html"] = [problem]
    if errors:
        raise ValidationError(errors)
    report = check_html(html)
    if report.error or not report.passed:
        raise LibraryPageCheckFailed(report)
    try:
        with transaction.atomic():
            return LibraryPage.objects.create(
                classroom=classroom, slug=slug, title=title, lang=lang, topic=topic, questions=questions,
                html=html, source=source, source_page=source_page, added_by=added_by,
                check_report=report.as_dict(), thumbnail=report.thumbnail,
            )
    except IntegrityError as exc:  # added by someone else while this one was being checked
        raise ValidationError({"topic": [_taken(topic, lang)]}) from exc


def library_page_promote(
    *, page: PageVersion, title: str, lang: str, topic: str, questions: list[str], added_by=None,
) -> LibraryPage:
    """Add a generated page of the class to its library (checked again, as it is now)."""
    classroom = page.thread.classroom
    if classroom is None:
        raise ValidationError({"page": ["this page was not asked in a class"]})
    return library_page_add(
        classroom=classroom, html=page.html, title=title, lang=lang, topic=topic, questions=questions,
        source=LibraryPage.Source.GENERATED, source_page=page, added_by=added_by,
    )


def library_page_delete(*, page: LibraryPage) -> None:
    page.delete()


def _metadata_errors(*, classroom, title, lang, topic, questions, slug) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if not title or len(title) > 120:
        errors["title"] = ["a title of 1 to 120 characters is required"]
    if lang not in LANGS:
        errors["lang"] = [f"the language must be one of {', '.join(LANGS)}"]
    if not TOPIC_KEY.fullmatch(topic) or len(topic) > 80 or topic.startswith("zh-"):
        errors["topic"] = ["the topic is a key of lowercase letters, digits and hyphens, such as sky-blue"]
    elif lang in LANGS and LibraryPage.objects.filter(classroom=classroom, slug=slug).exists():
        errors["topic"] = [_taken(topic, lang)]
    if not questions or len(questions) > MAX_QUESTIONS or any(len(q) > MAX_QUESTION_CHARS for q in questions):
        errors["questions"] = [f"give 1 to {MAX_QUESTIONS} questions the page answers, one a line, "
                               f"each under {MAX_QUESTION_CHARS} characters"]
    return errors


def _taken(topic: str, lang: str) -> str:
    name = LANG_NAMES.get(lang, lang)
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"this class's library already has {article} {name} page on topic {topic!r}; delete it first"


def _remote_problem(html: str) -> str | None:
    allowed = {origin_of(settings.STATIC_URL), getattr(settings, "APP_ORIGIN", ""), getattr(settings, "PAGE_ORIGIN", "")}
    remote = remote_urls(html, allowed_origins={o for o in allowed if o})
    if remote:
        return f"the page loads from other hosts, which pages may not: {', '.join(remote[:3])}"
    return None
