"""pagebench's results as a table, as JSON and as one self-contained HTML file (thumbnails inlined as data
URIs, each page beside it as a file, so the report opens from file://)."""

from __future__ import annotations

import base64
import html as html_text
import statistics
from pathlib import Path

from explainer.pagebench.checklist import ITEMS
from explainer.pagebench.runner import Row


def row_dict(row: Row, *, page_file: str | None = None) -> dict:
    q = row.question
    return {
        "id": q.id, "question": q.question, "lang": q.lang, "library": q.library, "after": q.after,
        "status": row.status, "source": row.source, "topic": row.topic, "error": row.error,
        "passed": bool(row.report and row.report.passed), "repairs": row.repairs, "stats": row.stats,
        "checklist": row.checklist.as_dict() if row.checklist else None,
        "summary": row.report.summary() if row.report else None, "page": page_file,
    }


def totals(rows: list[Row]) -> dict:
    """The set's figures: pages, passes, each item's share, mean score and the medians of the timings."""
    scored = [r for r in rows if r.checklist]
    items = {name: sum(r.checklist.items[name] for r in scored) for name in ITEMS}

    def median(key):
        values = [r.stats[key] for r in rows if r.stats.get(key) is not None]
        return round(statistics.median(values), 3) if values else None

    return {"questions": len(rows), "pages": len(scored), "passed": sum(bool(r.report and r.report.passed) for r in rows),
            "items": items, "mean_score": round(sum(r.checklist.score for r in scored) / len(scored), 2) if scored else 0,
            "of": len(ITEMS), "repairs": sum(r.repairs for r in rows), "tokens": sum(r.stats.get("tokens") or 0 for r in rows),
            "median_first_token_s": median("first_token_s"), "median_seconds": median("seconds"),
            "median_tokens_per_s": median("tokens_per_s")}


def table(rows: list[Row]) -> str:
    """A plain-text table: one line a question, then the totals."""
    head = f"{'id':<20} {'src':<7} {'status':<8} {'score':>5} {'tokens':>7} {'ttft_s':>7} {'page_s':>7} {'tok/s':>7}  missing"
    lines = [head, "-" * len(head)]
    for row in rows:
        s, c = row.stats, row.checklist
        missing = ", ".join(name for name, ok in c.items.items() if not ok) if c else (row.error or "")
        lines.append(f"{row.question.id:<20} {row.source:<7} {row.status:<8} "
                     f"{(f'{c.score}/{len(ITEMS)}' if c else '-'):>5} {_num(s.get('tokens')):>7} "
                     f"{_num(s.get('first_token_s')):>7} {_num(s.get('seconds')):>7} {_num(s.get('tokens_per_s')):>7}  "
                     f"{missing[:80]}")
    t = totals(rows)
    lines.append("-" * len(head))
    lines.append(f"{t['pages']}/{t['questions']} pages, {t['passed']} passed the render check, mean checklist "
                 f"{t['mean_score']}/{t['of']}, {t['repairs']} repairs, {t['tokens']} tokens; median first token "
                 f"{t['median_first_token_s']} s, page {t['median_seconds']} s, {t['median_tokens_per_s']} tokens/s")
    lines.append("items: " + ", ".join(f"{name} {n}/{t['pages']}" for name, n in t["items"].items()))
    return "\n".join(lines)


def _num(value) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def write_report(rows: list[Row], directory: Path, *, meta: dict) -> Path:
    """`index.html` with each page's thumbnail, checklist and a link to the page (`pages/<id>.html`)."""
    pages = directory / "pages"
    pages.mkdir(parents=True, exist_ok=True)
    cards = []
    for row in rows:
        link = ""
        if row.html:
            (pages / f"{row.question.id}.html").write_text(row.html, encoding="utf-8")
            link = f"pages/{row.question.id}.html"
        cards.append(_card(row, link))
    t = totals(rows)
    esc = html_text.escape
    summary = (f"{t['pages']}/{t['questions']} pages · {t['passed']} passed the render check · mean checklist "
               f"{t['mean_score']}/{t['of']} · {t['repairs']} repairs · {t['tokens']} tokens · median first token "
               f"{_num(t['median_first_token_s'])} s · page {_num(t['median_seconds'])} s · "
               f"{_num(t['median_tokens_per_s'])} tokens/s")
    meta_line = " · ".join(f"{esc(str(k))}: {esc(str(v))}" for k, v in meta.items())
    document = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pagebench</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; background: #f6f7f9; color: #1b1f24; }}
.cards {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 16px; }}
.card {{ background: #fff; border-radius: 8px; padding: 12px; box-shadow: 0 1px 3px #0002; }}
.card img {{ width: 100%; border-radius: 4px; background: #0d1322; }}
.card h2 {{ font-size: 15px; margin: 8px 0 4px; }}
.ok {{ color: #17692f; }} .no {{ color: #a4161a; }} .muted {{ color: #5a6270; font-size: 12px; }}
ul {{ padding-left: 18px; margin: 6px 0; }}
</style></head><body>
<h1>pagebench</h1>
<p>{esc(summary)}</p>
<p class="muted">{meta_line}</p>
<div class="cards">
{"".join(cards)}
</div></body></html>
"""
    path = directory / "index.html"
    path.write_text(document, encoding="utf-8")
    return path


def _card(row: Row, link: str) -> str:
    esc = html_text.escape
    q, c, s = row.question, row.checklist, row.stats
    thumb = row.report.thumbnail if row.report is not None else None
    image = (f'<img alt="{esc(q.id)}" src="data:image/png;base64,{base64.b64encode(thumb).decode()}">'
             if thumb else '<p class="muted">no picture</p>')
    if c:
        items = "".join(f'<li class="{"ok" if ok else "no"}">{"✓" if ok else "✗"} {esc(ITEMS[name])}</li>'
                        for name, ok in c.items.items())
        checks = f"<p><b>{c.score}/{len(ITEMS)}</b> · {esc(c.title)}</p><ul>{items}</ul>"
    else:
        checks = f'<p class="no">{esc(row.status)}: {esc(row.error or "")}</p>'
    timing = (f"{s.get('tokens', '-')} tokens · first token {s.get('first_token_s', '-')} s · page "
              f"{s.get('seconds', '-')} s · {s.get('tokens_per_s', '-')} tokens/s" if s else "")
    opened = f'<a href="{esc(link)}">open the page</a>' if link else ""
    after = f" (follow-up on {esc(q.after)})" if q.after else ""
    return (f'<div class="card">{image}<h2 lang="{esc(q.lang)}">{esc(q.question)}</h2>'
            f'<p class="muted">{esc(q.id)} · {esc(q.lang)} · {"in" if q.library else "outside"} the library{after} · '
            f'{esc(row.source)}{f" · {esc(row.topic)}" if row.topic else ""} · repairs {row.repairs}</p>'
            f'{checks}<p class="muted">{esc(timing)}</p>{opened}</div>\n')
