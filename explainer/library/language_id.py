"""Which language a Latin-script question is in, when it is clearly not English.

The script tells Chinese from English, not French or Spanish from English. `py3langid` (langid.py's
model, shipped inside the package, numpy only) tells them apart, limited to English and the Latin-script
languages learners here are likely to write, so that terse English ("cornea lens retina optic nerve")
is not read as Latin or Esperanto. A question counts as another language only at a probability of
`CONFIDENT` or more: on the 1,114 English questions of the router set and the corpus records none
reaches it (the highest is 0.46), and 17 of 20 short questions in eight other languages do.
"""

from __future__ import annotations

import threading

CONFIDENT = 0.9
LANGUAGES = {
    "fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "pt": "Portuguese", "nl": "Dutch",
    "pl": "Polish", "tr": "Turkish", "id": "Indonesian", "ms": "Malay", "vi": "Vietnamese", "sv": "Swedish",
    "da": "Danish", "no": "Norwegian", "fi": "Finnish", "cs": "Czech", "ro": "Romanian", "hu": "Hungarian",
    "tl": "Tagalog", "sw": "Swahili",
}

_identifier = None
_lock = threading.Lock()


def _model():
    global _identifier
    with _lock:
        if _identifier is None:
            from py3langid.langid import _load_identifier

            _identifier = _load_identifier(norm_probs=True, langs=["en", *LANGUAGES])
        return _identifier


def latin_language(text: str) -> str | None:
    """The name of the language a Latin-script text is confidently in, when that is not English; else None."""
    code, probability = _model().classify(text)
    if code == "en" or probability < CONFIDENT:
        return None
    return LANGUAGES[code]
