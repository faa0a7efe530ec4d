"""The learner's side of a class: join with a code and a name, then read the class's topic suggestions."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django_ratelimit.decorators import ratelimit

from explainer.selectors.classes import learner_from_session, topic_suggestions_for
from explainer.services.classrooms import learner_join, session_threads_move
from explainer.services.rate_limits import session_client_id
from explainer.teacher.forms import JoinForm

# The learner UI and its consumer read these session keys.
SESSION_LEARNER = "learner_id"
SESSION_CLASSROOM = "classroom_id"


def safe_next(request, default: str) -> str:
    """The `next` address when it stays on this site, else the default."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
        return target
    return default


def _join_rate(group, request) -> str:
    return settings.JOIN_RATE


@ratelimit(key="ip", rate=_join_rate, method="POST", block=False)
def join(request):
    current = learner_from_session(request.session)
    form = JoinForm(request.POST or None, initial={"join_code": request.GET.get("code", "")})
    if request.method == "POST" and getattr(request, "limited", False):
        # Join codes are short: guessing them must be slow. Nothing is checked while throttled.
        form.add_error(None, gettext("Too many tries from this network. Wait a minute, then try again."))
        return render(request, "teacher/join.html", {"form": form, "current": current}, status=429)
    if request.method == "POST" and form.is_valid():
        try:
            learner = learner_join(
                join_code=form.cleaned_data["join_code"],
                display_name=form.cleaned_data["display_name"],
                current_learner_id=current.pk if current else None,
            )
        except ValidationError as exc:
            field = exc.code if exc.code in form.fields else None
            form.add_error(field, " ".join(exc.messages))
        else:
            # A new identity gets a new session id (no fixation); questions asked before joining come along.
            old_key = request.session.session_key
            session_client_id(request.session)  # made before the key changes, so it follows the learner
            request.session.cycle_key()
            if old_key:
                session_threads_move(old_key=old_key, new_key=request.session.session_key)
            request.session[SESSION_LEARNER] = learner.pk
            request.session[SESSION_CLASSROOM] = learner.classroom_id
            return redirect(safe_next(request, "/"))
    return render(request, "teacher/join.html", {"form": form, "current": current})


def leave(request):
    if request.method == "POST":
        request.session.pop(SESSION_LEARNER, None)
        request.session.pop(SESSION_CLASSROOM, None)
    return redirect("join")


def suggestions(request):
    """JSON: the joined learner's class and its topics with seed questions."""
    learner = learner_from_session(request.session)
    return JsonResponse(
        {
            "learner": {"id": learner.pk, "name": learner.display_name} if learner else None,
            "classroom": {"id": learner.classroom_id, "name": learner.classroom.name} if learner else None,
            "topics": topic_suggestions_for(learner=learner),
        },
        json_dumps_params={"ensure_ascii": False},
    )
