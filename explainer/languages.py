"""The interface's languages (Django's codes, `settings.LANGUAGES`) and the page languages they speak."""

from __future__ import annotations

# A page language (a question's, `model_worker.contract.pages.LANGS`) and the interface language that says it.
INTERFACE_CODES = {"en": "en", "zh": "zh-hans"}


def page_lang(code: str | None) -> str:
    """The page language ("en" or "zh") of an interface language code such as "zh-hans"."""
    return "zh" if (code or "").lower().startswith("zh") else "en"


def interface_code(lang: str | None) -> str:
    """The interface language code that speaks page language `lang` (English for any other)."""
    return INTERFACE_CODES.get(lang or "en", "en")
