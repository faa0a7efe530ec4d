"""The library a learner browses: /library/ (every topic as a card), opening a lesson, and the cards' pictures."""

from __future__ import annotations

from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_POST, require_safe

from explainer.languages import page_lang
from explainer.selectors.classes import learner_from_session
from explainer.selectors.library_shelf import CLASS_SHELF, library_shelf
from explainer.selectors.library_thumbnails import library_thumbnail as thumbnail_png
from explainer.services import rate_limits
from explainer.services.lessons import LessonUnknown, lesson_open

SHELF_NAMES = {
    CLASS_SHELF: _("Your class's pages"),
    "biology": _("Biology"),
    "astronomy": _("Astronomy"),
    "physics": _("Physics"),
    "chemistry": _("Chemistry"),
    "earth-science": _("Earth science"),
    "": _("More"),
}
LANG_NAMES = {"en": "English", "zh": "中文"}


def interface_language(request) -> str:
    """"en" or "zh": the page language of what LocaleMiddleware chose (the language cookie, else the
    browser's Accept-Language)."""
    return page_lang(getattr(request, "LANGUAGE_CODE", None) or translation.get_language())


def _grade(value: str | None) -> int | None:
    return int(value) if value and value.isascii() and value.isdigit() and len(value) <= 2 else None


def _session_key(request) -> str:
    # The lesson's thread belongs to this browser's session, as a question's does.
    if not request.session.session_key:
        request.session.save()
    return request.session.session_key


@require_safe
def library(request):
    """Every topic of the learner's library as a card; `?q=` searches, `?grade=` and `?code=` filter."""
    return _shelf_page(request)


def _shelf_page(request, *, problem: str = "", status: int = 200):
    lang = interface_language(request)
    learner = learner_from_session(request.session)
    query = request.GET.get("q", "")
    grade, code = _grade(request.GET.get("grade")), request.GET.get("code", "")[:80]
    shelf = library_shelf(lang=lang, classroom=learner.classroom if learner else None, query=query, grade=grade,
                          code=code)
    context = {
        "learner": learner, "shelf": shelf, "lang": lang, "lang_names": LANG_NAMES,
        "groups": [(name, SHELF_NAMES.get(name, name), cards) for name, cards in shelf.groups],
        "query": query[:500], "grade": grade, "code": code, "problem": problem,
        "filtered": bool(grade or code or shelf.query),
    }
    return render(request, "learner/library.html", context, status=status)


@require_POST
def library_open(request):
    """Open the lesson a card names as a new thread of this browser, then show that thread."""
    learner = learner_from_session(request.session)
    client = rate_limits.Client(session_key=_session_key(request),
                                client_id=rate_limits.session_client_id(request.session),
                                ip=request.META.get("REMOTE_ADDR"))
    try:
        thread = lesson_open(slug=request.POST.get("slug", "")[:90], session_key=client.session_key,
                             learner=learner, client=client)
    except LessonUnknown:
        raise Http404("No such page in this library.") from None
    except rate_limits.RateLimited as exc:  # the shelf again, as it was browsed, with the reason on top
        return _shelf_page(request, problem=exc.message, status=429)
    except rate_limits.LimitsUnavailable:
        return _shelf_page(request, problem=_("The library cannot open lessons just now. Try again in a minute."),
                           status=503)
    return redirect("thread", thread.pk)


@require_safe
@cache_control(max_age=3600, private=True)
def library_thumbnail(request, slug: str):
    """A card's picture: the page's render-check thumbnail, else the placeholder."""
    learner = learner_from_session(request.session)
    png = thumbnail_png(slug=slug, classroom=learner.classroom if learner else None)
    if png is None:
        return HttpResponseRedirect(static("app/library-placeholder.svg"))
    return HttpResponse(png, content_type="image/png")
