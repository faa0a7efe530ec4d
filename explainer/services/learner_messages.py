"""What the generation flow tells a learner, in the learner's language (`in_lang`), in one place."""

from __future__ import annotations

UNKNOWN_TOPIC = {
    "en": "The library has no page on that topic yet, so there is nothing reliable to show you. ",
    "zh": "资料库里还没有关于这个主题的页面，所以暂时没有可靠的讲解。",
}
# The nearest topic came close but not close enough (`Route.unsure`): the library may have the page, and the
# learner is the one who can tell.
UNSURE_TOPIC = {
    "en": "I am not sure the library has a page on that, so I have not written one. "
          "If your question is about one of the topics below, pick it. ",
    "zh": "我不确定资料库里有没有讲这个问题的页面，所以没有写页面。如果你问的是下面的某个主题，点一下就行。",
}
# Who will see the question: a class's teacher, or (asked outside a class) the library's editors.
REQUEST_PASSED_ON = {
    ("en", True): "Your question has been passed on to your teacher as a requested topic.",
    ("en", False): "Your question has been noted as a topic to add to the library.",
    ("zh", True): "你的问题已经作为“想学的主题”转告给你的老师。",
    ("zh", False): "你的问题已经记下，作为资料库以后要补充的主题。",
}
UNAVAILABLE = "The explainer cannot take questions right now. Please try again in a minute."
# A follow-up the page cannot show, on a lesson the model here cannot change: what the page can show, and the
# library's topics nearest its words (`offered`) or a new question.
NOT_ON_PAGE = {
    ("en", True): "This page cannot show that, and the model here cannot change the library's lessons. Ask about "
                  "a part, a step or a control of this page, or pick one of the topics below.",
    ("en", False): "This page cannot show that, and the model here cannot change the library's lessons. Ask about "
                   "a part, a step or a control of this page, or ask a new question.",
    ("zh", True): "这个页面显示不了这个，这里的模型也没法修改资料库里的课。可以问问这一页上的部件、步骤或控制，或者点下面的某个主题。",
    ("zh", False): "这个页面显示不了这个，这里的模型也没法修改资料库里的课。可以问问这一页上的部件、步骤或控制，或者提一个新问题。",
}
TOPIC_GONE = {
    "en": "The library page this conversation was about has been removed, so it cannot be revised. "
          "Ask a new question instead.",
    "zh": "这段对话讲的资料库页面已被移除，所以不能再修改。可以提一个新问题。",
}
PAGE_HIDDEN = {
    "en": "Your teacher hid this page, so it cannot be revised. Ask a new question instead.",
    "zh": "老师隐藏了这个页面，所以不能再修改它。可以提一个新问题。",
}
NOT_TEXT = "The question must be text."
EMPTY = "Type a question first."
NO_WORDS = "That question has no words in it. Type a question first."
UNKNOWN_THREAD = "That thread does not exist or is not yours."
CANCELLED = "Stopped before the page was finished."
NOT_WRITTEN = "The page could not be written."
# A page the model failed to write, by the engine's error code: what the learner can do first, then the
# engine's own words for whoever looks closer (a teacher, the operator).
MODEL_FAILED = {
    "model_unavailable": "The model that writes pages is not answering right now, so this page could not be "
                         "written. Please try again in a minute.",
    "bad_reply": "The model's answer was not a complete page. Please ask again, perhaps in other words.",
}
# The reaper's (explainer/services/lifecycle.py).
WORKER_LOST = "The model worker stopped while writing this page. Please try again."
REQUEUED = "The model worker stopped while writing this page; it will be written again."
QUEUE_LOST = "Your question was lost from the queue while the server restarted. " + UNAVAILABLE


def in_lang(texts: dict[str, str], lang: str | None) -> str:
    """The text for `lang`, English for any other."""
    return texts.get(lang or "en", texts["en"])


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
    return NOT_ON_PAGE["zh" if lang == "zh" else "en", offered]


def refused_topic(*, lang: str, unsure: bool, in_class: bool) -> str:
    """An `unknown_topic` refusal: why no page was written, and who hears of the question."""
    words = "zh" if lang == "zh" else "en"
    return (UNSURE_TOPIC if unsure else UNKNOWN_TOPIC)[words] + REQUEST_PASSED_ON[words, in_class]
