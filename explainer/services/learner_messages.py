"""What the generation flow tells a learner, in the learner's language (`in_lang`), in one place."""

from __future__ import annotations

from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from explainer.languages import interface_code

# Said in the question's language (`in_lang`), whatever the interface's: the English texts are the msgids of
# locale/*/LC_MESSAGES/django.po.
UNKNOWN_TOPIC = gettext_noop("The library has no page on that topic yet, so there is nothing reliable to show you.")
# The nearest topic came close but not close enough (`Route.unsure`): the library may have the page, and the
# learner is the one who can tell.
UNSURE_TOPIC = gettext_noop("I am not sure the library has a page on that, so I have not written one. "
                            "If your question is about one of the topics below, pick it.")
# Who will see the question: a class's teacher, or (asked outside a class) the library's editors.
REQUEST_PASSED_ON = {
    True: gettext_noop("Your question has been passed on to your teacher as a requested topic."),
    False: gettext_noop("Your question has been noted as a topic to add to the library."),
}
UNAVAILABLE = gettext_noop("The explainer cannot take questions right now. Please try again in a minute.")
# A follow-up the page cannot show, on a lesson the model here cannot change: what the page can show, and the
# library's topics nearest its words (`offered`) or a new question.
NOT_ON_PAGE = {
    True: gettext_noop("This page cannot show that, and the model here cannot change the library's lessons. Ask "
                       "about a part, a step or a control of this page, or pick one of the topics below."),
    False: gettext_noop("This page cannot show that, and the model here cannot change the library's lessons. Ask "
                        "about a part, a step or a control of this page, or ask a new question."),
}
TOPIC_GONE = gettext_noop("The library page this conversation was about has been removed, so it cannot be revised. "
                          "Ask a new question instead.")
PAGE_HIDDEN = gettext_noop("Your teacher hid this page, so it cannot be revised. Ask a new question instead.")
NOT_TEXT = gettext_noop("The question must be text.")
EMPTY = gettext_noop("Type a question first.")
NO_WORDS = gettext_noop("That question has no words in it. Type a question first.")
UNKNOWN_THREAD = gettext_noop("That thread does not exist or is not yours.")
CANCELLED = gettext_noop("Stopped before the page was finished.")
NOT_WRITTEN = gettext_noop("The page could not be written.")
# A page the model failed to write, by the engine's error code: what the learner can do first, then the
# engine's own words for whoever looks closer (a teacher, the operator).
MODEL_FAILED = {
    "model_unavailable": gettext_noop("The model that writes pages is not answering right now, so this page could "
                                      "not be written. Please try again in a minute."),
    "bad_reply": gettext_noop("The model's answer was not a complete page. Please ask again, perhaps in other words."),
}
# The reaper's (explainer/services/lifecycle.py).
WORKER_LOST = gettext_noop("The model worker stopped while writing this page. Please try again.")
REQUEUED = gettext_noop("The model worker stopped while writing this page; it will be written again.")
QUEUE_LOST = "Your question was lost from the queue while the server restarted. " + UNAVAILABLE
# The engine's and the reaper's errors, by code, as a learner who did not ask in English hears them (the web tier
# words them as it frames them for the socket); an English question keeps their own words, the engine's detail
# included.
STREAM_ERRORS = {
    "generation_failed": NOT_WRITTEN,
    "empty_page": gettext_noop("The model did not write a complete page."),
    "timeout": gettext_noop("Writing this page took too long, so it was stopped."),
    "prompt_too_long": gettext_noop("This question and the page together are too long for the model."),
    "worker_lost": WORKER_LOST,
    "cancelled": CANCELLED,
    "unavailable": UNAVAILABLE,
    **MODEL_FAILED,
}


def in_lang(text: str, lang: str | None) -> str:
    """`text` (a msgid) in the question's language `lang` ("en" or "zh"), English for any other."""
    with translation.override(interface_code(lang)):
        return gettext(text)


def stream_error(code: str, message: str, lang: str | None) -> str:
    """A generation's error `message` as the learner who asked in `lang` hears it (`STREAM_ERRORS`)."""
    msgid = STREAM_ERRORS.get(code)
    return message if msgid is None or interface_code(lang) == "en" else in_lang(msgid, lang)


def not_written(code: str, detail: str | None) -> str:
    """Why a page was not written, for the learner first (`MODEL_FAILED`), with the engine's `detail` after."""
    learner = MODEL_FAILED.get(code)
    if learner is None:
        return detail or NOT_WRITTEN
    return f"{learner} ({detail})" if detail else learner


def too_long(length: int, limit: int) -> str:
    return f"That question is {length} characters; please keep it under {limit}."


def unsupported_language(looks_like: str) -> str:
    return (f"Explainer answers questions in English or Chinese (中文), and this one looks like {looks_like}. "
            "Please ask it in English or Chinese.")


def unknown_language(lang: str, langs: tuple[str, ...]) -> str:
    return f"Unknown language {lang!r}: use one of {', '.join(langs)}."


def unknown_library_topic(picked: str) -> str:
    return f"The library has no topic {picked!r}."


def not_on_page(*, lang: str, offered: bool) -> str:
    """A follow-up refused because neither the page nor the model can show it (`offered`: topics are listed)."""
    return in_lang(NOT_ON_PAGE[offered], lang)


def refused_topic(*, lang: str, unsure: bool, in_class: bool) -> str:
    """An `unknown_topic` refusal: why no page was written, and who hears of the question."""
    why, who = in_lang(UNSURE_TOPIC if unsure else UNKNOWN_TOPIC, lang), in_lang(REQUEST_PASSED_ON[in_class], lang)
    return f"{why}{'' if lang == 'zh' else ' '}{who}"
