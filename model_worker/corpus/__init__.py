"""The exemplar corpus: interactive pages written against the kit, each with a metadata record.

The on-disk format is described in `model_worker/corpus/README.md`.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

from model_worker.contract.pages import LANGS

CORPUS_DIR = Path(__file__).resolve().parent
SUBJECTS = ("biology", "astronomy", "physics", "chemistry", "earth-science")
_FIELDS = {"slug", "file", "title", "lang", "subject", "tags", "questions_en", "questions_zh",
           "topic", "curriculum", "grade"}
TOPIC_KEY = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
# A curriculum point: an NGSS performance expectation, or a unit of one of China's compulsory-education
# science standards (义务教育科学, or 初中物理/化学/生物/地理), written "<standard>·<unit>".
NGSS_CODE = re.compile(r"(K|[1-5]|MS|HS)-(PS|LS|ESS|ETS)\d+-\d+")
CN_STANDARDS = ("义务教育科学", "初中物理", "初中化学", "初中生物", "初中地理")
GRADE_BAND = re.compile(r"(\d{1,2})-(\d{1,2})")
_TITLE = re.compile(r"<title>(.*?)</title>", re.S | re.I)


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
    topic: str = ""  # shared by the English and the Chinese page of one topic
    curriculum: tuple[str, ...] = ()  # NGSS codes and Chinese curriculum units the page serves
    grade: str = ""  # grade band, "6-8"

    @property
    def questions(self) -> tuple[tuple[str, str], ...]:
        """Every question the page answers, as (lang, question)."""
        return tuple(("en", q) for q in self.questions_en) + tuple(("zh", q) for q in self.questions_zh)


def page_title(page_html: str) -> str | None:
    """The text of a page's `<title>`, entities decoded; None when it has none."""
    found = _TITLE.search(page_html)
    return html.unescape(found[1]).strip() if found else None


def load_pages(corpus_dir: Path = CORPUS_DIR) -> list[Page]:
    """Every page under `corpus_dir/pages/`, sorted by slug, with its metadata validated."""
    pages = [_load(path) for path in sorted((corpus_dir / "pages").glob("*.json"))]
    _refuse_duplicates(pages)
    return pages


def _refuse_duplicates(pages: list[Page]) -> None:
    seen: dict[str, str] = {}
    for page in pages:
        if page.slug in seen:
            raise CorpusError(f"{page.slug}.json: duplicate slug")
        key = f"{page.topic}/{page.lang}"
        if key in seen:
            raise CorpusError(f"{page.slug}.json: topic {page.topic!r} already has a {page.lang} page ({seen[key]})")
        seen[page.slug] = seen[key] = page.slug


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
    problems += _curriculum_problems(record)
    html_path = meta_path.with_name(str(record["file"]))
    if not html_path.is_file():
        problems.append(f"{record['file']} does not exist")
    else:
        shown = page_title(html_path.read_text(encoding="utf-8"))
        if shown is not None and isinstance(record["title"], str) and shown != record["title"]:
            # The router, the learner's "Explaining: ..." and the checks of a written page read the record's.
            problems.append(f"title {record['title']!r} is not the page's <title> {shown!r}")
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
        topic=record["topic"],
        curriculum=tuple(record["curriculum"]),
        grade=record["grade"],
    )


def _curriculum_problems(record: dict) -> list[str]:
    """What is wrong with the record's `topic`, `curriculum` and `grade`."""
    problems = []
    topic = record["topic"]
    if not isinstance(topic, str) or not TOPIC_KEY.fullmatch(topic) or topic.startswith("zh-"):
        problems.append("topic must be a lowercase key with hyphens, without the zh- prefix (sky-blue)")
    points = record["curriculum"]
    if not isinstance(points, list) or not all(isinstance(p, str) for p in points):
        problems.append("curriculum must be a list of strings")
    else:
        unknown = [p for p in points if not NGSS_CODE.fullmatch(p) and not _is_cn_unit(p)]
        if unknown:
            problems.append(f"curriculum has entries that are neither NGSS codes nor <standard>·<unit>: {unknown}")
        if not any(NGSS_CODE.fullmatch(p) for p in points) or not any(_is_cn_unit(p) for p in points):
            problems.append("curriculum needs at least one NGSS code (MS-PS4-2) and one Chinese unit (初中物理·光现象)")
    band = GRADE_BAND.fullmatch(record["grade"]) if isinstance(record["grade"], str) else None
    if not band or not 1 <= int(band[1]) <= int(band[2]) <= 12:
        problems.append("grade must be a band of school grades such as 6-8")
    return problems


def _is_cn_unit(point: str) -> bool:
    standard, dot, unit = point.partition("·")
    return bool(dot) and standard in CN_STANDARDS and bool(unit.strip())
