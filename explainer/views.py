"""Learner pages: ask a question and watch the page being written, then revisit a thread's versions."""

from __future__ import annotations

from dataclasses import replace

from django.http import Http404, HttpResponsePermanentRedirect, HttpResponseRedirect
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from django.views.i18n import JSONCatalog

from explainer.languages import interface_code
from explainer.pages.links import download_link, page_link
from explainer.selectors.backend import backend_features, backend_writable
from explainer.selectors.classes import learner_from_session, topic_suggestions_for
from explainer.selectors.generation import (
    page_awaiting_check,
    page_for_session,
    thread_first_generation,
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
    first = thread_first_generation(thread=thread) if thread else None
    writable = backend_writable()  # None for an open-domain backend: it writes every page
    return {
        "learner": learner,
        "topics": topic_suggestions_for(learner=learner),
        # Starter questions for a learner outside a class (a class's own topics replace them): questions the
        # library answers, per UI language; the page shows the set of the language chosen.
        "suggestions": {lang: library_examples(lang=lang, writable=writable) for lang in ("en", "zh")},
        "thread": thread,
        # A page still being written when this one was (re)loaded: the live view resumes it.
        "watching": watching,
        # A page written but not yet checked: the view resumes its generation for the `qa` alone.
        "checking": None if watching else page_awaiting_check(pages=pages),
        "versions": [
            {"page": p.pk, "version": p.version, "question": p.generation.question,
             "url": reverse("page_open", args=[p.pk]),
             "check": p.check_status or ""}
            for p in pages
        ],
        "recent_threads": threads_for_session(session_key=session_key),
        # What the thread's page is about, as its `topic` event said when it was asked (the reloaded view shows it).
        "topic_event": _topic_event(thread, first) if first and pages else None,
        # A thread stopped or failed before its first page: its question waits in the box, to ask again.
        "ask_again": first.question if first and not pages and not watching else "",
        "all_hidden": bool(thread and not pages and thread.pages.exists()),
    }


def _topic_event(thread, first) -> dict | None:
    """The `topic` event of the thread's first question, as the thread's topic answers it now."""
    from explainer.selectors.answer_plan import NoPlan, thread_answer_plan, topic_event

    if not thread.topic_slug:
        return None
    try:
        plan = thread_answer_plan(question=first.question, lang=first.lang, thread=thread,
                                  features=backend_features(), classroom=thread.classroom)
    except NoPlan:  # the thread's library page was removed
        return None
    if plan.route.page is None and not plan.for_question:
        return None
    # A thread whose first page was the library's own (a lesson opened from /library/, a page the backend
    # could not write) says so, whatever the backend could write now.
    source = "library" if (first.stats or {}).get("source") == "library" else plan.source
    return replace(topic_event(plan, question=first.question), score=None, nearest=(), source=source).to_wire()


@require_safe
def home(request):
    return render(request, "learner/explain.html", _learner_context(request))


@require_safe
def thread_detail(request, thread_id):
    thread = thread_for_session(thread_id=thread_id, session_key=_session_key(request))
    if thread is None:
        raise Http404("No such thread in this browser.")
    return render(request, "learner/explain.html", _learner_context(request, thread))


@require_safe
@never_cache  # Back restores a frame from the cache when it may: a kept redirect would send it to an old link
def page_open(request, page_id):
    """A page of this browser's threads, by a link that does not expire: it sends the browser on to a
    freshly signed page link (`?download=1`: the page as one file), so a tab left open for hours still
    opens its pages."""
    page = page_for_session(page_id=page_id, session_key=_session_key(request))
    if page is None:
        raise Http404("No such page in this browser.")
    if request.GET.get("download"):
        return HttpResponseRedirect(download_link(page.pk))
    # The state the version opens in rides on the redirect: the browser follows it to the page's fragment.
    return HttpResponseRedirect(page_link(page.pk) + (f"#{page.state}" if page.state else ""))


@require_safe
def favicon(request):
    """The app's icon, for browsers that ask /favicon.ico (pages that name no icon: the teacher panel, the admin)."""
    return HttpResponsePermanentRedirect(static("app/favicon.svg"))


@require_safe
def page_catalog(request, lang: str):
    """The learner page's words (djangojs) in page language `lang`, as JSON: what the page says about a
    question is in that question's language, which may not be the interface's."""
    with translation.override(interface_code(lang)):
        return JSONCatalog.as_view()(request)
