"""The prompt format the demo checkpoint was trained on, and page extraction from generated text.

A prompt is, in order (bracketed parts optional):

    [<|previous|> previous page html] [<|note|> teacher note] <|question|> lang "\\n" question
    ["\\ntopic: " slug] <|page|>

and the model continues with the page html and `<|eos|>`. The question and the topic sit last so that
they are the freshest context when the page starts; the topic (the slug of the library page the
router chose) comes after the question, so nothing a learner types can follow it. Text from outside
(question, note, previous page) is encoded with special tokens split: typing `<|eos|>` gives the
characters, never the control token.
"""

from __future__ import annotations

import re

from transformers import PreTrainedTokenizerFast

from model_worker.clover.tokenizer import EOS, NOTE, PAGE, PREVIOUS, QUESTION
from model_worker.contract.pages import LANGS


class PromptTooLong(ValueError):
    """The prompt leaves no room for a page inside the checkpoint's context."""


def build_prompt(
    tok: PreTrainedTokenizerFast,
    *,
    question: str,
    lang: str = "en",
    previous_page: str | None = None,
    topic_note: str | None = None,
    topic: str | None = None,
) -> list[int]:
    """Token ids of the prompt for one page request."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
    question = " ".join(question.split())
    if not question:
        raise ValueError("the question is empty")
    ids: list[int] = []
    if previous_page:
        ids += _special(tok, PREVIOUS) + _encode(tok, previous_page.strip())
    if topic_note and topic_note.strip():
        ids += _special(tok, NOTE) + _encode(tok, " ".join(topic_note.split()))
    if topic is not None and not TOPIC_SLUG.fullmatch(topic):
        raise ValueError(f"topic {topic!r} is not a library slug")
    text = f"{lang}\n{question}" + (f"\ntopic: {topic}" if topic else "")
    ids += _special(tok, QUESTION) + _encode(tok, text) + _special(tok, PAGE)
    return ids


def page_target(tok: PreTrainedTokenizerFast, html: str) -> list[int]:
    """Token ids the model is trained to produce after the prompt: the page, then `<|eos|>`."""
    return _encode(tok, html.strip()) + _special(tok, EOS)


def check_fits(prompt_len: int, *, context: int, min_page_tokens: int) -> None:
    """Raise `PromptTooLong` unless the prompt leaves `min_page_tokens` positions for the page."""
    if prompt_len + min_page_tokens > context:
        raise PromptTooLong(
            f"prompt is {prompt_len} tokens; the checkpoint's context is {context} tokens "
            f"and a page needs at least {min_page_tokens} of them"
        )


TOPIC_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_DOC_START = re.compile(r"<!doctype html|<html", re.IGNORECASE)
_DOC_END = re.compile(r"</html\s*>", re.IGNORECASE)


def extract_page(text: str) -> str:
    """The html document inside generated text: from its doctype to `</html>`, stray text dropped."""
    text = text.split(EOS, 1)[0]
    start = _DOC_START.search(text)
    if start:
        text = text[start.start():]
    end = _DOC_END.search(text)
    if end:
        text = text[: end.end()]
    return text.strip() + "\n"


def _encode(tok: PreTrainedTokenizerFast, text: str) -> list[int]:
    # split_special_tokens: "<|eos|>" inside text is text, not the control token.
    return tok.encode(text, add_special_tokens=False, split_special_tokens=True)


def _special(tok: PreTrainedTokenizerFast, token: str) -> list[int]:
    return [tok.convert_tokens_to_ids(token)]
