"""The learner's side of a class: join with a code and a name, then read the class's topic suggestions."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import JsonResponse
from django.shortcuts import redirect, render

from explainer.selectors.classes import learner_from_session, topic_suggestions_for
from explainer.services.classrooms import learner_join
from explainer.teacher.forms import JoinForm

# The learner UI and its consumer read these session keys.
SESSION_LEARNER = "learner_id"
SESSION_CLASSROOM = "classroom_id"


def join(request):
    current = learner_from_session(request.session)
    form = JoinForm(request.POST or None, initial={"join_code": request.GET.get("code", "")})
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
            request.session.cycle_key()  # a new identity gets a new session id
            request.session[SESSION_LEARNER] = learner.pk
            request.session[SESSION_CLASSROOM] = learner.classroom_id
            return redirect(request.POST.get("next") or "/")
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
