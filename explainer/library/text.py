"""A question's text before routing: normalised, checked for content, and its script told."""

from __future__ import annotations

import re
import unicodedata

# Scripts whose letters make a question "in another language" (Latin-script questions are English
# unless `language_id` is confident they are not).
SCRIPT_NAMES = {
    "CYRILLIC": "Russian or another Cyrillic-script language",
    "ARABIC": "Arabic",
    "HEBREW": "Hebrew",
    "DEVANAGARI": "Hindi or another Devanagari-script language",
    "HANGUL": "Korean",
    "HIRAGANA": "Japanese",
    "KATAKANA": "Japanese",
    "THAI": "Thai",
    "GREEK": "Greek",
    "BENGALI": "Bengali",
    "TAMIL": "Tamil",
    "ARMENIAN": "Armenian",
    "GEORGIAN": "Georgian",
    "ETHIOPIC": "Amharic or another Ethiopic-script language",
}


# Control tokens of chat templates and of our own prompt (<|im_start|>, <|endoftext|>, <|eos|>): they mean
# nothing to a learner, and the demo model, handed them as text, writes a broken page every time.
CONTROL_TOKEN = re.compile(r"<\|[^<>|]{0,40}\|>")
# Markup pasted with a question (<b>, <script>, <img ...>): the tags go and their words stay, so the router
# reads the question ("<b>Why</b> is the sky blue?") rather than the tags.
TAG = re.compile(r"</?(?:a|abbr|b|body|br|button|code|div|em|embed|font|form|h[1-6]|head|html|i|iframe|img|"
                 r"input|li|link|meta|object|ol|p|pre|script|small|span|strong|style|sub|sup|svg|table|td|"
                 r"th|tr|u|ul)\b[^<>]{0,500}>", re.IGNORECASE)


def clean_question(text: str) -> str:
    """The question as stored and sent to the model: format characters (zero-width spaces and joiners,
    bidi marks, BOM) removed, NFC, control tokens and HTML tags removed, spaces collapsed. Full-width
    punctuation stays (Chinese uses it)."""
    text = "".join(c for c in unicodedata.normalize("NFC", text) if unicodedata.category(c) != "Cf")
    text = TAG.sub(" ", CONTROL_TOKEN.sub(" ", text))
    return " ".join(text.split())


def normalise_question(text: str) -> str:
    """The form questions are checked and matched in: `clean_question`, then NFKC (width and
    compatibility forms folded: ｂｌｕｅ is blue)."""
    return clean_question(unicodedata.normalize("NFKC", text))


def comparable(text: str) -> str:
    """The form listed words and featured questions are compared in: NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def question_key(question: str) -> str:
    """The form repeats of one question share: lower case, single spaces, no end punctuation."""
    return " ".join(question.lower().split()).rstrip("?？!！.。 ")[:500]


def has_content(text: str) -> bool:
    """True when the text has a letter or a digit: punctuation, symbols and emoji alone say nothing."""
    return any(unicodedata.category(c)[0] in "LN" for c in text)


def script_of(char: str) -> str:
    """The script of one letter, from its Unicode name: LATIN, CJK, CYRILLIC, ... ("" when unnamed)."""
    name = unicodedata.name(char, "")
    if name.startswith(("CJK ", "IDEOGRAPHIC")):
        return "CJK"
    return name.split(" ", 1)[0]


def question_language(text: str) -> tuple[str | None, str]:
    """("en" | "zh", "") for a question we can answer, else (None, the name of the language it looks like).

    The language is the script of most of its letters: Han characters are Chinese, Latin letters
    English unless the language identifier is confident of another (French, Spanish, ...); kana
    anywhere makes it Japanese, even among Han characters.
    """
    counts: dict[str, int] = {}
    for c in text:
        if unicodedata.category(c).startswith("L"):
            script = script_of(c)
            counts[script] = counts.get(script, 0) + 1
    if not counts:
        return "en", ""
    if counts.get("HIRAGANA", 0) + counts.get("KATAKANA", 0) >= 2:
        return None, SCRIPT_NAMES["HIRAGANA"]
    top = max(counts, key=counts.get)
    if top == "CJK":
        return "zh", ""
    if top == "LATIN":
        from explainer.library.language_id import latin_language

        other = latin_language(text)
        return ("en", "") if other is None else (None, other)
    return None, SCRIPT_NAMES.get(top, "a language other than English or Chinese")


def asked_language(question: str, chosen: str | None = None) -> str | None:
    """The language to answer in: the one the asker chose, else the question's own (None: neither en nor zh)."""
    return chosen or question_language(normalise_question(question))[0]
