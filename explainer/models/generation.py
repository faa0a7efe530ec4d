"""Threads of questions, the generations that answer them, and the pages they produce."""

from __future__ import annotations

import uuid

from django.db import models

from .classroom import Classroom, Learner, Topic


class Thread(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session_key = models.CharField(max_length=64, blank=True, db_index=True)
    learner = models.ForeignKey(Learner, null=True, blank=True, on_delete=models.SET_NULL, related_name="threads")
    classroom = models.ForeignKey(
        Classroom, null=True, blank=True, on_delete=models.SET_NULL, related_name="threads"
    )
    topic = models.ForeignKey(Topic, null=True, blank=True, on_delete=models.SET_NULL, related_name="threads")
    # The library page the thread is about (the router's choice, or the page grounding an open-domain
    # backend): follow-ups stay on it.
    topic_slug = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"thread {self.pk}"


class Generation(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    class Kind(models.TextChoices):
        ASK = "ask"
        FOLLOW_UP = "follow_up"
        REPAIR = "repair"  # another try at a page that failed its render check

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="generations")
    learner = models.ForeignKey(Learner, null=True, blank=True, on_delete=models.SET_NULL)
    classroom = models.ForeignKey(Classroom, null=True, blank=True, on_delete=models.SET_NULL)
    question = models.TextField()
    lang = models.CharField(max_length=8, default="en")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.ASK)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    error_code = models.CharField(max_length=40, blank=True)
    error_message = models.TextField(blank=True)
    stats = models.JSONField(default=dict, blank=True)
    # What the model said when asked whether the router's unsure lesson answers the question
    # (explainer/library/second_opinion.py): "yes", "no" or "unknown"; blank when it was not asked.
    second_opinion = models.CharField(max_length=8, blank=True, default="")
    second_opinion_lesson = models.CharField(max_length=80, blank=True, default="")  # the lesson's slug
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.question[:60]} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in {self.Status.DONE, self.Status.FAILED, self.Status.CANCELLED}


class PageVersion(models.Model):
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="pages")
    generation = models.OneToOneField(Generation, on_delete=models.CASCADE, related_name="page")
    version = models.PositiveIntegerField()
    html = models.TextField()
    # The state the page opens in, as its URL's fragment (`step=3&part=Crater`, explainer/library/page_state.py):
    # a follow-up the page itself answered is the same page shown another way. Empty: the page as written.
    state = models.CharField(max_length=2000, blank=True, default="")
    hidden = models.BooleanField(default=False, db_index=True)
    featured = models.BooleanField(default=False, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["thread", "version"]
        constraints = [models.UniqueConstraint(fields=["thread", "version"], name="unique_page_version")]

    def __str__(self) -> str:
        return f"page {self.pk} (thread {self.thread_id} v{self.version})"


class RenderCheck(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        PASSED = "passed"
        FAILED = "failed"
        ERROR = "error"

    page = models.ForeignKey(PageVersion, on_delete=models.CASCADE, related_name="checks")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    report = models.JSONField(default=dict, blank=True)
    thumbnail = models.BinaryField(null=True, blank=True, help_text="PNG bytes")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"render check {self.pk}: {self.status}"
