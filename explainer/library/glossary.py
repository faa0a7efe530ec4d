"""The router's bilingual glossary: science words of both languages grouped into concepts (glossary.txt).

A text holding a concept's word gains the concept (`~buoyancy`) as one more search term, so 轮船 in a
Chinese page meets "ship" in an English question, and "crackle" meets 静电's page's 噼啪.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from explainer.library.stems import stem_words

GLOSSARY_FILE = Path(__file__).with_name("glossary.txt")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Glossary:
    english: tuple[tuple[tuple[str, ...], str], ...]  # (stems of a word or phrase, concept term)
    chinese: tuple[tuple[str, str], ...]  # (word, concept term)

    def concepts(self, stems: list[str], cjk_runs: list[str]) -> list[str]:
        """The concept terms of a text, once per matching word occurrence (BM25 counts them)."""
        present = set(stems)
        out = [concept for phrase, concept in self.english if all(s in present for s in phrase)
               for _ in range(min(stems.count(s) for s in phrase))]
        for word, concept in self.chinese:
            out += [concept] * sum(run.count(word) for run in cjk_runs)
        return out


def parse_glossary(text: str, stem) -> Glossary:
    """The glossary of `glossary.txt`'s format; `stem` turns a list of English words into stems."""
    english, chinese = [], []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, colon, words = line.partition(":")
        en, bar, zh = words.partition("|")
        if not colon or not bar or not name.strip():
            raise ValueError(f"glossary line {number}: expected 'concept: english, words | 中文, 词'")
        concept = "~" + name.strip()
        for word in filter(None, (w.strip().lower() for w in en.split(","))):
            english.append((tuple(stem(re.findall(r"[a-z0-9]+", word))), concept))
        for word in filter(None, (w.strip() for w in zh.split(","))):
            if not _CJK.search(word):
                raise ValueError(f"glossary line {number}: {word!r} after '|' is not Chinese")
            chinese.append((word, concept))
    return Glossary(tuple(dict.fromkeys(english)), tuple(dict.fromkeys(chinese)))


@functools.cache
def glossary() -> Glossary:
    return parse_glossary(GLOSSARY_FILE.read_text(encoding="utf-8"), stem_words)
