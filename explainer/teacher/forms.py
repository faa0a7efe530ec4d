"""Forms of the teacher panel and the learner's join page."""

from __future__ import annotations

from django import forms

from explainer.models import Classroom
from explainer.selectors.exemplars import exemplar_choices

LANGUAGE_CHOICES = [("en", "English"), ("zh", "中文")]


class ClassroomCreateForm(forms.Form):
    name = forms.CharField(max_length=120)


class ClassroomSettingsForm(forms.Form):
    name = forms.CharField(max_length=120)
    languages = forms.MultipleChoiceField(
        choices=LANGUAGE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple,
        help_text="None ticked means every language.",
    )
    topic_space_enabled = forms.BooleanField(
        required=False, label="Topic space on", help_text="Politely refuse questions outside the class's topics."
    )
    daily_question_limit = forms.IntegerField(min_value=0, help_text="Questions per learner per day; 0 means no limit.")
    blocklist = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="One blocked word or phrase a line."
    )
    blocked_message = forms.CharField(max_length=300, required=False, help_text="What a learner sees when a question is blocked.")

    @classmethod
    def for_classroom(cls, classroom: Classroom, data=None):
        initial = {f: getattr(classroom, f) for f in cls.base_fields}
        return cls(data=data, initial=initial)


class TopicForm(forms.Form):
    title = forms.CharField(max_length=120)
    seed_questions = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="One question a line, in every language the class uses."
    )
    note_to_model = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    exemplar = forms.ChoiceField(
        required=False, label="Exemplar page",
        help_text="A checked page from the corpus that answers this topic's new questions at once, without "
                  "generating. Follow-ups still go to the model.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["exemplar"].choices = [("", "— none: the model writes every page —"), *exemplar_choices()]


class JoinForm(forms.Form):
    join_code = forms.CharField(max_length=20, widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters"}))
    display_name = forms.CharField(max_length=60, label="Your name in the class")
