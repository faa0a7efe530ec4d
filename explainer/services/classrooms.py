"""Classes, their join codes, roster and curated topics."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from explainer.models import Classroom, Learner, Thread, Topic
from explainer.models.classroom import JOIN_CODE_ALPHABET, new_join_code
from model_worker.contract.pages import LANGS as SUPPORTED_LANGUAGES


def _clean_languages(languages) -> list[str]:
    languages = sorted(set(languages or []))
    unknown = [lang for lang in languages if lang not in SUPPORTED_LANGUAGES]
    if unknown:
        raise ValidationError(f"Unsupported languages: {', '.join(unknown)}")
    return languages


def classroom_create(
    *,
    teacher,
    name: str,
    languages=(),
    topic_space_enabled: bool = False,
    daily_question_limit: int = 0,
) -> Classroom:
    name = name.strip()
    if not name:
        raise ValidationError("A class needs a name.")
    classroom = Classroom(
        teacher=teacher,
        name=name,
        languages=_clean_languages(languages),
        topic_space_enabled=topic_space_enabled,
        daily_question_limit=daily_question_limit,
    )
    classroom.full_clean()
    for _ in range(5):  # join codes are random; a clash just draws again
        try:
            with transaction.atomic():
                classroom.save()
            return classroom
        except IntegrityError:
            classroom.join_code = new_join_code()
    raise ValidationError("Could not draw a free join code; try again.")


_EDITABLE = {"name", "languages", "topic_space_enabled", "daily_question_limit", "blocklist", "blocked_message"}


def classroom_update(*, classroom: Classroom, **fields) -> Classroom:
    """Rename a class or change its settings."""
    unknown = set(fields) - _EDITABLE
    if unknown:
        raise TypeError(f"not editable: {sorted(unknown)}")
    if "languages" in fields:
        fields["languages"] = _clean_languages(fields["languages"])
    if "name" in fields:
        fields["name"] = fields["name"].strip()
    for key, value in fields.items():
        setattr(classroom, key, value)
    classroom.full_clean()
    classroom.save()
    return classroom


def classroom_rotate_join_code(*, classroom: Classroom) -> str:
    """Give the class a new join code; the old one stops working, joined learners stay."""
    old = classroom.join_code
    for _ in range(5):
        code = new_join_code()
        if code == old:
            continue
        try:
            with transaction.atomic():
                Classroom.objects.filter(pk=classroom.pk).update(join_code=code)
            classroom.join_code = code
            return code
        except IntegrityError:
            continue
    raise ValidationError("Could not draw a free join code; try again.")


def normalise_join_code(code: str) -> str:
    """Codes are read aloud and typed: ignore spaces, dashes and case."""
    return "".join(c for c in code.upper() if c in JOIN_CODE_ALPHABET)


def learner_join(*, join_code: str, display_name: str, current_learner_id: int | None = None) -> Learner:
    """Join the class with this code under a display name; a name taken by someone else is refused."""
    classroom = Classroom.objects.filter(join_code=normalise_join_code(join_code)).first()
    if classroom is None:
        raise ValidationError(gettext("No class has that join code. Check it with your teacher."), code="join_code")
    display_name = " ".join(display_name.split())
    if not display_name:
        raise ValidationError(gettext("Choose a name to show in the class."), code="display_name")
    if len(display_name) > 60:
        raise ValidationError(gettext("That name is too long (60 characters at most)."), code="display_name")
    existing = classroom.learners.on_roster().filter(display_name__iexact=display_name).first()
    if existing is not None:
        if existing.pk == current_learner_id:
            return existing
        raise ValidationError(gettext("Someone in this class already uses that name; pick another."), code="display_name")
    try:
        with transaction.atomic():
            return Learner.objects.create(classroom=classroom, display_name=display_name)
    except IntegrityError:
        raise ValidationError(gettext("Someone in this class already uses that name; pick another."), code="display_name") from None


def session_threads_move(*, old_key: str, new_key: str) -> int:
    """Threads started under one browser session belong to its successor (after joining a class)."""
    return Thread.objects.filter(session_key=old_key).update(session_key=new_key)


def learner_rename(*, learner: Learner, display_name: str) -> Learner:
    display_name = " ".join(display_name.split())
    if len(display_name) > 60:
        raise ValidationError("That name is too long (60 characters at most).")
    if not display_name or learner.classroom.learners.on_roster().exclude(pk=learner.pk).filter(
        display_name__iexact=display_name
    ).exists():
        raise ValidationError("That name is empty or already used in this class.")
    learner.display_name = display_name
    learner.save(update_fields=["display_name"])
    return learner


def learner_remove(*, learner: Learner) -> None:
    """Take a learner off the roster: their browser loses the class and its threads; the pages stay in
    the class for the teacher to review, still under the learner's name."""
    with transaction.atomic():
        # A learner's browser reaches a thread (its page, follow-ups, the live view) by the thread's
        # session key: a blank one belongs to no browser.
        Thread.objects.filter(learner=learner).update(session_key="")
        learner.removed_at = timezone.now()
        learner.save(update_fields=["removed_at"])


def _clean_seeds(seed_questions) -> list[str]:
    if isinstance(seed_questions, str):
        seed_questions = seed_questions.splitlines()
    return [q.strip() for q in seed_questions if q and q.strip()]


def topic_create(*, classroom: Classroom, title: str, seed_questions=(), note_to_model: str = "",
                 exemplar: str = "") -> Topic:
    title = title.strip()
    if not title:
        raise ValidationError("A topic needs a title.")
    return Topic.objects.create(
        classroom=classroom, title=title, seed_questions=_clean_seeds(seed_questions),
        note_to_model=note_to_model.strip(), exemplar=_clean_exemplar(exemplar),
    )


def topic_update(*, topic: Topic, title: str, seed_questions=(), note_to_model: str = "", exemplar: str = "") -> Topic:
    title = title.strip()
    if not title:
        raise ValidationError("A topic needs a title.")
    topic.title = title
    topic.seed_questions = _clean_seeds(seed_questions)
    topic.note_to_model = note_to_model.strip()
    topic.exemplar = _clean_exemplar(exemplar)
    topic.save()
    return topic


def _clean_exemplar(slug: str) -> str:
    """"" (none) or the slug of a corpus page; anything else is refused, naming it."""
    from explainer.selectors.exemplars import exemplar_html

    slug = (slug or "").strip()
    if slug and exemplar_html(slug) is None:
        raise ValidationError(f"There is no exemplar page {slug!r} in the corpus.")
    return slug


def topic_delete(*, topic: Topic) -> None:
    topic.delete()
