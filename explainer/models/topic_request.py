"""Questions the library has no page for, kept so teachers see which topics learners want next."""

from __future__ import annotations

from django.db import models

from .classroom import Classroom, Learner


class TopicRequest(models.Model):
    classroom = models.ForeignKey(
        Classroom, null=True, blank=True, on_delete=models.CASCADE, related_name="topic_requests"
    )
    learner = models.ForeignKey(Learner, null=True, blank=True, on_delete=models.SET_NULL)
    question = models.TextField()
    # The question lower-cased with its end punctuation dropped: repeats of one question count together.
    normalised = models.CharField(max_length=500, db_index=True)
    lang = models.CharField(max_length=8, default="en")
    nearest = models.JSONField(default=list, blank=True, help_text="Slugs of the nearest library pages.")
    score = models.FloatField(default=0.0, help_text="The best topic's router score; under the threshold.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"requested: {self.question[:60]}"
