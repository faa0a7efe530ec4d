"""Learner pages: ask a question and watch the page being written, then revisit a thread's versions."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from explainer.selectors.classes import learner_from_session, topic_suggestions_for
from explainer.selectors.generation import (
    page_url,
    thread_for_session,
    thread_pages,
    thread_unfinished_generation,
    threads_for_session,
)
from explainer.selectors.library import library_examples


def _session_key(request) -> str:
    # The socket finds this browser's threads by its session, so every visitor gets one.
    if not request.session.session_key:
        request.session.save()
    return request.session.session_key


def _learner_context(request, thread=None) -> dict:
    learner = learner_from_session(request.session)
    session_key = _session_key(request)
    pages = list(thread_pages(thread=thread)) if thread else []
    watching = thread_unfinished_generation(thread=thread) if thread else None
    return {
        "learner": learner,
        "topics": topic_suggestions_for(learner=learner),
        # Starter questions for a learner outside a class (a class's own topics replace them): questions the
        # library answers, per UI language; the page shows the set of the language chosen.
        "suggestions": {lang: library_examples(lang=lang) for lang in ("en", "zh")},
        "thread": thread,
        # A page still being written when this one was (re)loaded: the live view resumes it.
        "watching": watching,
        "versions": [
            {"page": p.pk, "version": p.version, "question": p.generation.question, "url": page_url(p),
             "check": p.check_status or ""}
            for p in pages
        ],
        "recent_threads": threads_for_session(session_key=session_key),
    }


@require_GET
def home(request):
    return render(request, "learner/explain.html", _learner_context(request))


@require_GET
def thread_detail(request, thread_id):
    thread = thread_for_session(thread_id=thread_id, session_key=_session_key(request))
    if thread is None:
        raise Http404("No such thread in this browser.")
    return render(request, "learner/explain.html", _learner_context(request, thread))
