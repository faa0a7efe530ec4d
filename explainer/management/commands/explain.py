"""`manage.py explain "QUESTION" [--lang zh] -o page.html`: one page in-process, JSON stats on stdout.

The question is routed as a learner's is, over the library as shipped (`explainer.selectors.library.shipped_index`:
nothing the router learned in a database, which this command needs none of): the topic is printed on stderr, a question no library topic fits is refused with the nearest topics, and a library
page the configured library-only backend cannot write is the stored page itself (`"source": "library"`).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from model_worker.config import backend_capabilities, engine_settings, load_backend, writable_topics
from model_worker.contract.pages import LANGS, PageRequest
from model_worker.worker.run import run_page

STAT_KEYS = ("tokens", "seconds", "tokens_per_s", "forwards", "tokens_per_forward", "forwards_per_s", "first_block_s")


class ProgressSink:
    """Reports committed blocks on stderr; the run stops only when the page ends."""

    def __init__(self, stream):
        self.stream = stream  # the command's stderr wrapper

    def on_draft(self, block: int, pieces: list[str | None]) -> None:
        pass

    def on_commit(self, block: int, text: str, tokens: int) -> None:
        self.stream.write(f"\rblock {block + 1} written", ending="")
        self.stream.flush()

    def should_stop(self) -> bool:
        return False


class Command(BaseCommand):
    help = "Write one page for a question with the configured model, run the render check, print JSON stats."

    def add_arguments(self, parser):
        parser.add_argument("question")
        parser.add_argument("--lang", choices=LANGS, default=None,
                            help="the page's language (default: the question's own)")
        parser.add_argument("-o", "--output", required=True, help="where to write the page's html")
        parser.add_argument("--previous", help="a page to revise: the question becomes a follow-up")
        parser.add_argument("--no-check", action="store_true", help="skip the render check")
        parser.add_argument("--topic", help="a library page slug to write, whatever the question says")

    def handle(self, *args, question, lang, output, previous, no_check, topic, **options):
        from explainer.library.router import DEFAULT_THRESHOLD, answer_plan, route_question, route_to_page
        from explainer.library.text import asked_language
        from explainer.selectors.answer_plan import topic_event
        from explainer.selectors.exemplars import exemplar_html
        from explainer.selectors.library import shipped_index
        from explainer.services.asking import question_clean
        from explainer.services.rejection import GenerationRejected

        try:
            question = question_clean(question)
        except GenerationRejected as exc:
            raise CommandError(exc.message) from None
        lang = asked_language(question, lang)
        previous_page = Path(previous).read_text(encoding="utf-8") if previous else None
        try:
            settings = engine_settings()
        except ValueError as exc:
            raise CommandError(f"the model settings are wrong: {exc}") from exc
        index = shipped_index()
        route = (route_to_page(index, topic, lang) if topic is not None
                 else route_question(index, question, lang, threshold=DEFAULT_THRESHOLD))
        if route is None:
            raise CommandError(f"the library has no page {topic!r}")
        open_domain = backend_capabilities(settings).open_domain
        plan = answer_plan(route, open_domain=open_domain, writable=None if open_domain else writable_topics(settings))
        topic_wire = topic_event(plan).to_wire()
        nearest = ", ".join(f"{p.slug} ({p.title})" for p in route.nearest) or "none"
        if plan.refuse:
            raise CommandError(f"no library topic fits this question (best score {route.score}); nearest: {nearest}")
        self.stderr.write(f"topic: {topic_wire['slug']} ({topic_wire['title']}), score {route.score}, "
                          f"page in {plan.lang}, {plan.source}")
        path = Path(output)
        if plan.from_library:
            html = exemplar_html(plan.topic)
            path.write_text(html, encoding="utf-8")
            stats = {"source": "library", "topic": topic_wire, "output": str(path)}
            stats["render_check"] = None if no_check else _render_check(html)
            self.stdout.write(json.dumps(stats, ensure_ascii=False, indent=2))
            return
        try:
            backend = load_backend(settings)
        except Exception as exc:
            raise CommandError(f"the model could not be loaded from {settings.model_path}: {exc}") from exc
        request = PageRequest(question=question, lang=plan.lang, previous_page=previous_page, topic=plan.topic)
        outcome = run_page(backend, request, ProgressSink(self.stderr))
        self.stderr.write("")
        stats = {key: outcome.stats.get(key) for key in STAT_KEYS}
        if outcome.status != "done":
            # What the model did write is still measured: a failed page prints its stats, then the error.
            self.stdout.write(json.dumps({**stats, "status": outcome.status, "error_code": outcome.error_code},
                                         ensure_ascii=False, indent=2))
            raise CommandError(f"no page ({outcome.error_code or outcome.status}): "
                               f"{outcome.error_message or outcome.status}")
        path.write_text(outcome.html, encoding="utf-8")
        stats["source"], stats["topic"] = "model", topic_wire
        stats["output"] = str(path)
        stats["render_check"] = None if no_check else _render_check(outcome.html)
        self.stdout.write(json.dumps(stats, ensure_ascii=False, indent=2))


def _render_check(html: str) -> dict:
    from explainer.render_check.check import check_html

    report = check_html(html)
    return {
        "passed": report.passed,
        "summary": report.summary(),
        "checks": {name: result.passed for name, result in report.checks.items()},
    }
