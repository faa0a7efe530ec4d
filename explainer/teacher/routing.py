"""The teacher's word on the router (docs/teacher.md, "Routing that learns"): "wrong page" and "right page" on a
routed question, a requested topic answered with a library page, and undoing what the router learned."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from explainer.selectors import classes as class_selectors
from explainer.selectors.learned_routes import learned_route_for
from explainer.services import route_learning
from explainer.teacher.join import safe_next

ROUTE_ACTIONS = {
    "wrong-page": (route_learning.route_mark_wrong,
                   "Wrong page: this question, and questions worded like it, no longer get this page. "
                   "It is listed in the requested topics."),
    "right-page": (route_learning.route_mark_right,
                   "Right page: this question gets this page at once, for every learner."),
}


@login_required
@require_POST
def route_action(request, page_id, action):
    page = class_selectors.page_for_teacher(user=request.user, page_id=page_id)
    if page is None or action not in ROUTE_ACTIONS:
        raise Http404("No such page or action")
    act, said = ROUTE_ACTIONS[action]
    try:
        act(user=request.user, generation=page.generation)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, said)
    return redirect(safe_next(request, reverse("teacher:page", args=[page.pk])))


@login_required
@require_POST
def request_point(request):
    """A requested topic answered with a library page: its question is a learned variant of the page."""
    classroom = None
    classroom_id = request.POST.get("classroom") or ""
    if classroom_id:
        classroom = class_selectors.classroom_for(user=request.user, classroom_id=classroom_id)
        if classroom is None:
            raise Http404("No such class")
    elif not request.user.is_superuser:
        raise Http404("Only the library's editors answer questions asked outside classes")
    question = (request.POST.get("question") or "").strip()
    slug = (request.POST.get("slug") or "").strip().split(" ")[0]
    try:
        if not question or not slug:
            raise ValidationError("Choose a library page for the question.")
        route_learning.route_point(user=request.user, classroom=classroom, question=question,
                                   lang=request.POST.get("lang") or "en", slug=slug)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"“{question}” is now answered with the library page {slug}.")
    return redirect(safe_next(request, reverse("teacher:requested-topics")))


@login_required
@require_POST
def learned_undo(request, route_id):
    route = learned_route_for(user=request.user, route_id=route_id)
    if route is None:
        raise Http404("No such learned route")
    route_learning.route_undo(route=route)
    messages.success(request, f"Undone: “{route.question}” and {route.slug}.")
    return redirect(safe_next(request, reverse("teacher:requested-topics")))
