"""Questions the library has no page for, kept so teachers see which topics learners want next."""

from __future__ import annotations

from django.db import models

from .classroom import Classroom, Learner


class TopicRequest(models.Model):
    classroom = models.ForeignKey(
        Classroom, null=True, blank=True, on_delete=models.CASCADE, related_name="topic_requests"
    )
    learner = models.ForeignKey(Learner, null=True, blank=True, on_delete=models.SET_NULL)
    session_key = models.CharField(max_length=64, blank=True, db_index=True)  # the browser that asked
    question = models.TextField()
    # The question lower-cased with its end punctuation dropped: repeats of one question count together.
    normalised = models.CharField(max_length=500, db_index=True)
    lang = models.CharField(max_length=8, default="en")
    nearest = models.JSONField(default=list, blank=True, help_text="Slugs of the nearest library pages.")
    score = models.FloatField(default=0.0, help_text="The best topic's router score; under the threshold.")
    # The router could not tell: the nearest topic may be the one (`Route.unsure`). A learner's pick among the
    # nearest of such a refusal teaches the router (`explainer.services.route_learning`).
    unsure = models.BooleanField(default=False)
    # A teacher said the page it was answered with was the wrong one (`LearnedRoute.Kind.WRONG`).
    wrong_page = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"requested: {self.question[:60]}"
