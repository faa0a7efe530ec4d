"""Pages a teacher added to their class's library: render-checked HTML written against the kit."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .classroom import Classroom
from .generation import PageVersion


class LibraryPage(models.Model):
    class Source(models.TextChoices):
        PASTE = "paste", "pasted"
        UPLOAD = "upload", "uploaded"
        GENERATED = "generated", "promoted from a generated page"

    classroom = models.ForeignKey(Classroom, on_delete=models.CASCADE, related_name="library_pages")
    slug = models.SlugField(max_length=90, help_text="The topic, with zh- in front for a Chinese page.")
    title = models.CharField(max_length=120)
    lang = models.CharField(max_length=8)
    topic = models.CharField(max_length=80, help_text="Shared by the English and the Chinese page of one topic.")
    questions = models.JSONField(default=list, help_text="Questions a learner might ask that this page answers.")
    html = models.TextField()
    source = models.CharField(max_length=16, choices=Source.choices)
    source_page = models.ForeignKey(PageVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    check_report = models.JSONField(default=dict, blank=True, help_text="The render check it passed.")
    thumbnail = models.BinaryField(null=True, blank=True, help_text="PNG bytes")
    added_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic", "lang"]
        constraints = [models.UniqueConstraint(fields=["classroom", "slug"], name="unique_library_slug_per_class")]

    def __str__(self) -> str:
        return f"{self.slug} ({self.classroom})"
