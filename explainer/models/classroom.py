"""Classes, their learners and curated topics."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

JOIN_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(6))


class Classroom(models.Model):
    name = models.CharField(max_length=120)
    teacher = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="classrooms")
    join_code = models.CharField(max_length=12, unique=True, default=new_join_code)
    languages = models.JSONField(default=list, blank=True, help_text="Allowed question languages; empty means all.")
    topic_space_enabled = models.BooleanField(default=False)
    daily_question_limit = models.PositiveIntegerField(default=0, help_text="0 means the site's default.")
    blocklist = models.TextField(blank=True, help_text="One blocked word or phrase a line.")
    blocked_message = models.CharField(
        max_length=300, blank=True, default="Let's keep our questions about science. Try another one!"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class LearnerQuerySet(models.QuerySet):
    def on_roster(self):
        """Learners the teacher has not removed."""
        return self.filter(removed_at__isnull=True)


class Learner(models.Model):
    classroom = models.ForeignKey(Classroom, on_delete=models.CASCADE, related_name="learners")
    display_name = models.CharField(max_length=60)
    created_at = models.DateTimeField(auto_now_add=True)
    # Removal keeps the row (the browser loses it, see learner_from_session) so the teacher's usage and
    # gallery still tell one removed learner's activity from another's.
    removed_at = models.DateTimeField(null=True, blank=True)

    objects = LearnerQuerySet.as_manager()

    class Meta:
        constraints = [
            # A removed learner's name is free again: they, or someone else, may join under it.
            models.UniqueConstraint(fields=["classroom", "display_name"], condition=models.Q(removed_at__isnull=True),
                                    name="unique_learner_name_per_class")
        ]

    def __str__(self) -> str:
        return self.display_name

    @property
    def label(self) -> str:
        """The name the teacher panel shows: a removed learner's is marked, and dated (`learner_label`)."""
        return learner_label(self.display_name, self.removed_at)


def learner_label(name: str, removed_at) -> str:
    """"Mia", or "Mia (removed 2026-12-04)": dated, so two removed learners who used one name stay apart."""
    return f"{name} (removed {timezone.localdate(removed_at).isoformat()})" if removed_at else name


class Topic(models.Model):
    classroom = models.ForeignKey(Classroom, on_delete=models.CASCADE, related_name="topics")
    title = models.CharField(max_length=120)
    seed_questions = models.JSONField(default=list, blank=True)
    note_to_model = models.TextField(blank=True)
    exemplar = models.CharField(
        max_length=80, blank=True,
        help_text="Slug of a corpus page that answers this topic's new questions at once, without generating.",
    )

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title
