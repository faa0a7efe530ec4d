"""The exemplar corpus: interactive pages written against the kit, each with a metadata record.

The on-disk format is described in `model_worker/corpus/README.md`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from model_worker.backends.base import LANGS

CORPUS_DIR = Path(__file__).resolve().parent
SUBJECTS = ("biology", "astronomy", "physics", "chemistry", "earth-science")
_FIELDS = {"slug", "file", "title", "lang", "subject", "tags", "questions_en", "questions_zh"}


class CorpusError(ValueError):
    """A metadata record is missing, malformed or disagrees with its page."""


@dataclass(frozen=True)
class Page:
    slug: str
    file: str
    title: str
    lang: str
    subject: str
    tags: tuple[str, ...]
    questions_en: tuple[str, ...]
    questions_zh: tuple[str, ...]
    html: str

    @property
    def questions(self) -> tuple[tuple[str, str], ...]:
        """Every question the page answers, as (lang, question)."""
        return tuple(("en", q) for q in self.questions_en) + tuple(("zh", q) for q in self.questions_zh)


def load_pages(corpus_dir: Path = CORPUS_DIR) -> list[Page]:
    """Every page under `corpus_dir/pages/`, sorted by slug, with its metadata validated."""
    pages = [_load(path) for path in sorted((corpus_dir / "pages").glob("*.json"))]
    slugs = [p.slug for p in pages]
    if len(set(slugs)) != len(slugs):
        raise CorpusError("duplicate slugs in the corpus")
    return pages


def _load(meta_path: Path) -> Page:
    try:
        record = json.loads(meta_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise CorpusError(f"{meta_path.name}: not valid JSON ({error})") from error
    if not isinstance(record, dict) or set(record) != _FIELDS:
        raise CorpusError(f"{meta_path.name}: fields must be exactly {sorted(_FIELDS)}")
    problems = []
    if record["slug"] != meta_path.stem:
        problems.append("slug must match the file name")
    if record["file"] != f"{meta_path.stem}.html":
        problems.append("file must be <slug>.html")
    if record["lang"] not in LANGS:
        problems.append(f"lang must be one of {LANGS}")
    if record["subject"] not in SUBJECTS:
        problems.append(f"subject must be one of {SUBJECTS}")
    for key in ("tags", "questions_en", "questions_zh"):
        values = record[key]
        if not values or not all(isinstance(v, str) and v.strip() for v in values):
            problems.append(f"{key} must be a non-empty list of strings")
    if not isinstance(record["title"], str) or not record["title"].strip():
        problems.append("title must be a non-empty string")
    html_path = meta_path.with_name(str(record["file"]))
    if not html_path.is_file():
        problems.append(f"{record['file']} does not exist")
    if problems:
        raise CorpusError(f"{meta_path.name}: " + "; ".join(problems))
    return Page(
        slug=record["slug"],
        file=record["file"],
        title=record["title"],
        lang=record["lang"],
        subject=record["subject"],
        tags=tuple(record["tags"]),
        questions_en=tuple(record["questions_en"]),
        questions_zh=tuple(record["questions_zh"]),
        html=html_path.read_text(encoding="utf-8"),
    )
