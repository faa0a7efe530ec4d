"""English word stems (Snowball), shared by the search terms and the glossary they look concepts up in."""

from __future__ import annotations

import functools


@functools.cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def stem_words(words: list[str]) -> list[str]:
    """The Snowball stems of `words`, in order."""
    return _stemmer().stemWords(words)
