"""The render-check pass rate before and after bounded repair, on the bench's prompt set.

`python -m model_worker.lab.repair [--prompts 8] [--attempts 2] [--follow-up TEXT] [--threads 1] [--json]`

Each prompt's page is written by the configured backend (`MODEL_BACKEND`, the demo checkpoint by
default) and render-checked in Chromium (`manage.py qa`); a page that fails is asked for again with a
`RepairNote` holding the check's errors, as the web app's repair does, up to `--attempts` times. With
`--follow-up`, the measured page is the follow-up's answer as the web app asks for it: the revision of
each first page when the backend revises pages, else the follow-up asked as a new question (the demo
checkpoint); `--revise` sends the first page whatever the backend declares. A generation that ends without a page counts as a failure, and its repair
re-asks the same request.
"""

from __future__ import annotations

import argparse
import json
import time

from model_worker.contract.pages import PageRequest, RepairNote
from model_worker.lab.bench import PROMPTS, render_reports
from model_worker.worker.run import NullSink, run_page

DEFAULT_PROMPTS = 8


def _no_page(message: str) -> dict:
    return {"passed": False, "summary": message, "checks": {"page": {"passed": False, "detail": message}},
            "repair_errors": [f"page: {message}"]}


def repair_run(backend, requests: list[PageRequest], attempts: int = 2) -> dict:
    """Write, check and repair each request's page; figures before and after every round of repairs."""
    started = time.monotonic()
    pages = [""] * len(requests)
    reports: list[dict | None] = [None] * len(requests)
    tokens = []  # of each page written, repairs included

    def write(i: int, request: PageRequest) -> None:
        try:
            outcome = run_page(backend, request, NullSink())
        except Exception as exc:  # noqa: BLE001 - the web app reports it as generation_failed; so does this
            tokens.append(0)
            reports[i] = _no_page(f"no page (generation_failed): {exc}")
            return
        tokens.append(outcome.stats.get("tokens", 0))
        if outcome.status == "done":
            pages[i], reports[i] = outcome.html, None
        else:
            reports[i] = _no_page(f"no page ({outcome.error_code}): {outcome.error_message}")

    def check(indices: list[int]) -> None:
        todo = [i for i in indices if reports[i] is None]
        for i, report in zip(todo, render_reports([pages[i] for i in todo]), strict=True):
            reports[i] = report

    for i, request in enumerate(requests):
        write(i, request)
    check(list(range(len(requests))))
    rounds = [sum(bool(r["passed"]) for r in reports)]
    for attempt in range(1, attempts + 1):
        failing = [i for i, r in enumerate(reports) if not r["passed"]]
        if not failing:
            rounds.append(rounds[-1])
            continue
        for i in failing:
            note = RepairNote(page=pages[i], errors=tuple(reports[i]["repair_errors"]), attempt=attempt)
            write(i, PageRequest(**{**requests[i].__dict__, "repair": note}))
        check(failing)
        rounds.append(sum(bool(r["passed"]) for r in reports))
    return {
        "prompts": len(requests),
        "passed_before": rounds[0],
        "passed_after_each_repair": rounds[1:],
        "passed_after": rounds[-1],
        "still_failing": [r["summary"][:200] for r in reports if not r["passed"]],
        "tokens": tokens,
        "seconds": round(time.monotonic() - started, 1),
    }


def requests_for(prompts: int, follow_up: str | None, backend, revise: bool = False) -> list[PageRequest]:
    """The bench's first `prompts` prompts; with `follow_up`, that follow-up to each prompt's first page."""
    requests = [PageRequest(question=q, lang=lang, topic=slug) for lang, q, slug in PROMPTS[:prompts]]
    if not follow_up:
        return requests
    capabilities = getattr(backend, "capabilities", None)
    if not revise and capabilities is not None and not capabilities.revises_pages:
        return [PageRequest(question=follow_up, lang=r.lang, topic=r.topic) for r in requests]
    firsts = [run_page(backend, r, NullSink()) for r in requests]
    return [PageRequest(question=follow_up, lang=r.lang, previous_page=o.html or None)
            for r, o in zip(requests, firsts, strict=True)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=DEFAULT_PROMPTS)
    parser.add_argument("--attempts", type=int, default=2, help="repairs per failing page (the web app's default)")
    parser.add_argument("--follow-up", help="measure this follow-up's revision of each page instead")
    parser.add_argument("--revise", action="store_true",
                        help="with --follow-up: send the first page even to a backend that cannot revise pages")
    parser.add_argument("--threads", type=int, help="CPU threads for a local model")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from model_worker.config import engine_settings, load_backend

    settings = engine_settings()
    if settings.backend == "clover":
        from model_worker.backends.clover import CloverBackend

        options = {"decoding": settings.decoding} if settings.decoding else {}
        backend = CloverBackend(settings.model_path, device=settings.device, threads=args.threads, **options)
    else:
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        backend = load_backend(settings)
    requests = requests_for(args.prompts, args.follow_up, backend, args.revise)
    result = {"backend": settings.backend, "follow_up": args.follow_up,
              "revised": any(r.previous_page for r in requests), **repair_run(backend, requests, args.attempts)}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return
    print(f"{result['prompts']} prompts ({settings.backend}{', follow-up' if args.follow_up else ''}): "
          f"render check {result['passed_before']}/{result['prompts']} before repair, "
          f"{' -> '.join(str(n) for n in result['passed_after_each_repair'])} after each of {args.attempts} repairs "
          f"({result['seconds']} s)")
    for reason in result["still_failing"]:
        print(f"  still failing: {reason}")


if __name__ == "__main__":
    main()
