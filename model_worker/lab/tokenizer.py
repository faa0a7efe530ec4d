"""Train the page tokenizer on the corpus and the runtime kit.

`python -m model_worker.lab.tokenizer --out FOLDER [--vocab-size N]`
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from pathlib import Path

from model_worker.clover.tokenizer import DEFAULT_VOCAB_SIZE, train_tokenizer
from model_worker.config import REPO_ROOT
from model_worker.corpus import Page, load_pages

KIT_DIR = REPO_ROOT / "static" / "kit"


def kit_texts(kit_dir: Path = KIT_DIR) -> Iterator[str]:
    """Yield the source of every kit file that generated pages import."""
    if not kit_dir.is_dir():
        return
    for path in sorted(kit_dir.rglob("*")):
        if path.is_file() and path.suffix in {".js", ".mjs", ".css", ".html"}:
            yield path.read_text(encoding="utf-8")


def tokenizer_texts(pages: Iterable[Page]) -> Iterator[str]:
    """Text the tokenizer learns from: every page, every question, and the kit source."""
    for page in pages:
        yield page.html
        for _, q in page.questions:
            yield q
    yield from kit_texts()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train the page tokenizer on the corpus and the kit.")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB_SIZE)
    args = parser.parse_args(argv)
    tok = train_tokenizer(tokenizer_texts(load_pages()), vocab_size=args.vocab_size)
    tok.save_pretrained(str(args.out))
    print(f"saved tokenizer with {len(tok)} tokens to {args.out}")


if __name__ == "__main__":
    main()
