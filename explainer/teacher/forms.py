"""Forms of the teacher panel and the learner's join page."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy

from explainer.models import Classroom
from explainer.selectors.exemplars import exemplar_choices
from explainer.services.page_intake import MAX_PAGE_BYTES

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
    daily_question_limit = forms.IntegerField(min_value=0, help_text="Questions per learner per day; 0 means the site's default.")
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
    # In the interface's language (LocaleMiddleware: the language cookie, else the browser's Accept-Language).
    join_code = forms.CharField(max_length=20, label=gettext_lazy("Join code"),
                                widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters"}))
    display_name = forms.CharField(max_length=60, label=gettext_lazy("Your name in the class"))


class LibraryPageForm(forms.Form):
    """A page for the class library: pasted, uploaded, or one of the class's generated pages."""

    html = forms.CharField(required=False, strip=False, label="Paste the HTML", widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
                           help_text="A whole page written against the page kit (docs/kit.md).")
    file = forms.FileField(required=False, label="…or upload an .html file")
    page = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="…or promote a generated page")
    title = forms.CharField(max_length=120)
    lang = forms.ChoiceField(choices=LANGUAGE_CHOICES, label="Language")
    topic = forms.CharField(max_length=80, help_text="A key such as sky-blue, shared by the English and the Chinese page.")
    questions = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}),
                                help_text="Questions this page answers, one a line: the router matches learners' questions to them.")

    def __init__(self, *args, page_choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["page"].choices = [("", "—"), *page_choices]

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        if upload is None:
            return None
        if upload.size > MAX_PAGE_BYTES:
            raise forms.ValidationError(f"the file is {upload.size / 1024 / 1024:.1f} MB; the limit is 2 MB")
        try:
            return upload.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise forms.ValidationError("not an HTML page: the file is not UTF-8 text") from exc

    def clean(self):
        data = super().clean()
        given = [name for name in ("html", "file", "page") if data.get(name)]
        if len(given) != 1 and not self.errors.get("file"):
            raise forms.ValidationError("Give exactly one page: paste it, upload it, or pick a generated page.")
        data["questions"] = [q.strip() for q in data.get("questions", "").splitlines() if q.strip()]
        return data

    @property
    def source_field(self) -> str:
        return next((name for name in ("html", "file", "page") if self.cleaned_data.get(name)), "html")
