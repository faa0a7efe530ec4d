"""What the library router learned from learners and teachers: a question to send to a library page, or never again
to one (docs/teacher.md, "Routing that learns")."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .classroom import Classroom, Learner
from .generation import Generation


class LearnedRoute(models.Model):
    class Kind(models.TextChoices):
        VARIANT = "variant"  # the question is asked of the page as one of its own questions
        WRONG = "wrong"  # the question, and its near paraphrases, never route to the page again

    class Source(models.TextChoices):
        PICK = "pick"  # a learner picked the page from an unsure refusal and stayed on it
        TEACHER = "teacher"  # a class's teacher, or a library editor outside classes, said so in review

    kind = models.CharField(max_length=16, choices=Kind.choices)
    source = models.CharField(max_length=16, choices=Source.choices)
    # The class it holds for; None: the library anonymous learners ask.
    classroom = models.ForeignKey(Classroom, null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="learned_routes")
    # Holds for every learner, in every class and outside them: a teacher approved it, or a library editor said so.
    everyone = models.BooleanField(default=False)
    question = models.TextField()
    normalised = models.CharField(max_length=500, db_index=True)  # `library.text.question_key`
    lang = models.CharField(max_length=8, default="en")
    slug = models.CharField(max_length=80, help_text="The library page's slug.")
    learner = models.ForeignKey(Learner, null=True, blank=True, on_delete=models.SET_NULL)
    session_key = models.CharField(max_length=64, blank=True, db_index=True)
    generation = models.ForeignKey(Generation, null=True, blank=True, on_delete=models.SET_NULL,
                                   help_text="A pick: the page it asked for.")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # A pick counts from then on, unless the learner asked for something else before (`withdrawn_at`).
    counts_from = models.DateTimeField(db_index=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.slug}: {self.question[:60]}"
