"""Page lengths in tokens of the demo tokenizer: `python -m model_worker.corpus.length [SLUG ...]`.

Prints each page's token count (all pages, or the slugs given) and the median; the library's target
is a median of at least 2,500 tokens (issue 11).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from model_worker.corpus import load_pages

TOKENIZER_DIR = Path(__file__).resolve().parents[1] / "checkpoints" / "clover-demo"
TARGET_MEDIAN = 2500


def token_counts(htmls: dict[str, str], tokenizer_dir: Path = TOKENIZER_DIR) -> dict[str, int]:
    """Tokens of each page (by slug) under the demo checkpoint's tokenizer."""
    from model_worker.clover.tokenizer import load_tokenizer  # transformers: loaded only when counting

    tok = load_tokenizer(tokenizer_dir)
    return {slug: len(tok(html, add_special_tokens=False)["input_ids"]) for slug, html in htmls.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="pages to count (default: every page)")
    args = parser.parse_args(argv)
    pages = {p.slug: p.html for p in load_pages()}
    unknown = [s for s in args.slugs if s not in pages]
    if unknown:
        print(f"no such page: {', '.join(unknown)}", file=sys.stderr)
        return 2
    counts = token_counts({s: pages[s] for s in (args.slugs or pages)})
    for slug, n in counts.items():
        print(f"{n:6d}  {slug}{'' if n >= TARGET_MEDIAN else '  (under 2,500)'}")
    print(f"{len(counts)} pages, median {statistics.median(counts.values()):.0f} tokens (target ≥ {TARGET_MEDIAN})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
