"""Questions and pages that moderation stopped or set aside for a teacher's decision."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .classroom import Classroom, Learner


class ModerationItem(models.Model):
    class Kind(models.TextChoices):
        QUESTION = "question"
        PAGE = "page"

    class Status(models.TextChoices):
        BLOCKED = "blocked", "blocked at once"
        PENDING = "pending", "waiting for review"
        APPROVED = "approved"
        HIDDEN = "hidden"

    classroom = models.ForeignKey(
        Classroom, null=True, blank=True, on_delete=models.CASCADE, related_name="moderation_items"
    )
    learner = models.ForeignKey(Learner, null=True, blank=True, on_delete=models.SET_NULL)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, db_index=True)
    text = models.TextField(help_text="The question, or the page's question for a page item.")
    page = models.ForeignKey(
        "explainer.PageVersion", null=True, blank=True, on_delete=models.CASCADE, related_name="moderation_items"
    )
    matched = models.CharField(max_length=120, blank=True, help_text="The listed word or phrase that matched.")
    source = models.CharField(max_length=16, help_text="builtin, class, or topics (outside the topic space)")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.status}: {self.text[:40]}"
