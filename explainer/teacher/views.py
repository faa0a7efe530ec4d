"""The teacher panel: plain views over the classroom, moderation and review services."""

from __future__ import annotations

import csv

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import Truncator
from django.views.decorators.http import require_POST

from explainer.models import ModerationItem, RenderCheck, Topic
from explainer.selectors import classes as class_selectors
from explainer.selectors import review as review_selectors
from explainer.selectors.generation import page_url, thread_first_generation
from explainer.selectors.learned_routes import learned_for_review
from explainer.selectors.library import library_index
from explainer.selectors.topic_requests import requested_topics
from explainer.selectors.usage import METRICS, usage_rows, usage_totals
from explainer.services import classrooms as class_services
from explainer.services import review as review_services
from explainer.services.moderation import NothingToHide, moderation_item_decide
from explainer.teacher.confirm import confirm_page, confirmed
from explainer.teacher.exports import spreadsheet_cell
from explainer.teacher.forms import ClassroomCreateForm, ClassroomSettingsForm, TopicForm
from explainer.teacher.join import safe_next


def _classroom(request, classroom_id):
    classroom = class_selectors.classroom_for(user=request.user, classroom_id=classroom_id)
    if classroom is None:
        raise Http404("No such class")
    return classroom


def _page(request, page_id):
    page = class_selectors.page_for_teacher(user=request.user, page_id=page_id)
    if page is None:
        raise Http404("No such page")
    return page


def _error_text(exc: ValidationError) -> str:
    return " ".join(exc.messages)


@login_required
def dashboard(request):
    form = ClassroomCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            classroom = class_services.classroom_create(teacher=request.user, name=form.cleaned_data["name"])
        except ValidationError as exc:
            form.add_error("name", _error_text(exc))
        else:
            messages.success(request, f"Created {classroom.name}. Learners join with code {classroom.join_code}.")
            return redirect("teacher:class", classroom_id=classroom.pk)
    classrooms = class_selectors.classrooms_for(user=request.user).order_by("name")
    return render(request, "teacher/dashboard.html", {"classrooms": classrooms, "form": form})


def _class_page(request, classroom, *, form=None, topic=None, topic_form=None):
    """The class page; a refused settings or topic form is shown as posted, with its errors."""
    def form_of(t):
        if topic_form is not None and topic is not None and t.pk == topic.pk:
            return topic_form
        return TopicForm(initial={**vars(t), "seed_questions": "\n".join(t.seed_questions)}, prefix=f"t{t.pk}")

    context = {
        "classroom": classroom,
        "form": form if form is not None else ClassroomSettingsForm.for_classroom(classroom),
        "learners": classroom.learners.on_roster().order_by("display_name"),
        "topics": [(t, form_of(t)) for t in classroom.topics.all()],
        "topic_form": topic_form if topic_form is not None and topic is None else TopicForm(prefix="new"),
        "join_url": request.build_absolute_uri(reverse("join")),
    }
    return render(request, "teacher/class_detail.html", context)


@login_required
def class_detail(request, classroom_id):
    classroom = _classroom(request, classroom_id)
    form = ClassroomSettingsForm.for_classroom(classroom, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            class_services.classroom_update(classroom=classroom, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, _error_text(exc))
        else:
            messages.success(request, "Saved.")
            return redirect("teacher:class", classroom_id=classroom.pk)
    return _class_page(request, classroom, form=form)


@login_required
@require_POST
def class_rotate(request, classroom_id):
    classroom = _classroom(request, classroom_id)
    code = class_services.classroom_rotate_join_code(classroom=classroom)
    messages.success(request, f"New join code: {code}. The old code no longer works.")
    return redirect("teacher:class", classroom_id=classroom.pk)


@login_required
@require_POST
def learner_action(request, classroom_id, learner_id):
    classroom = _classroom(request, classroom_id)
    learner = classroom.learners.on_roster().filter(pk=learner_id).first()
    if learner is None:
        raise Http404("No such learner")
    try:
        if request.POST.get("action") == "remove":
            if not confirmed(request):
                return confirm_page(
                    request, classroom=classroom, title=f"Remove {learner.display_name}?",
                    message=(f"{learner.display_name} leaves {classroom.name}: their browser loses the class and "
                             "their threads in it. Their pages stay in the gallery. They can join again with "
                             "the class's code unless you rotate it."),
                    button=f"Remove {learner.display_name}", fields={"action": "remove"},
                    cancel_url=reverse("teacher:class", args=[classroom.pk]) + "#roster",
                )
            class_services.learner_remove(learner=learner)
            messages.success(request, f"Removed {learner.display_name} from the class.")
        else:
            class_services.learner_rename(learner=learner, display_name=request.POST.get("display_name", ""))
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    return redirect("teacher:class", classroom_id=classroom.pk)


@login_required
@require_POST
def topic_save(request, classroom_id, topic_id=None):
    classroom = _classroom(request, classroom_id)
    topic = None
    if topic_id is not None:
        topic = Topic.objects.filter(classroom=classroom, pk=topic_id).first()
        if topic is None:
            raise Http404("No such topic")
    if request.POST.get("action") == "delete" and topic is not None:
        if not confirmed(request):
            return confirm_page(
                request, classroom=classroom, title=f"Delete the topic “{topic.title}”?",
                message=("Learners no longer see it as a suggestion and, with the topic space on, questions "
                         "about it are refused. Its pages stay in the gallery."),
                button="Delete topic", fields={"action": "delete"},
                cancel_url=reverse("teacher:class", args=[classroom.pk]) + "#topics",
            )
        class_services.topic_delete(topic=topic)
        messages.success(request, f"Deleted the topic “{topic.title}”.")
        return redirect(reverse("teacher:class", args=[classroom.pk]) + "#topics")
    form = TopicForm(request.POST, prefix=f"t{topic.pk}" if topic else "new")
    if form.is_valid():
        try:
            if topic is None:
                saved = class_services.topic_create(classroom=classroom, **form.cleaned_data)
                messages.success(request, f"Added the topic “{saved.title}”.")
            else:
                saved = class_services.topic_update(topic=topic, **form.cleaned_data)
                messages.success(request, f"Saved the topic “{saved.title}”.")
            return redirect(reverse("teacher:class", args=[classroom.pk]) + "#topics")
        except ValidationError as exc:
            form.add_error(None, _error_text(exc))
    problems = "; ".join(f"{form.fields[name].label or name.replace('_', ' ').capitalize()}: {' '.join(errors)}"
                         if name in form.fields else " ".join(errors) for name, errors in form.errors.items())
    messages.error(request, f"The topic was not saved. {problems}")
    # Shown again as posted (not redirected), so nothing the teacher typed is lost.
    return _class_page(request, classroom, topic=topic, topic_form=form)


def _id_param(request, name: str) -> str | None:
    """A query parameter naming a row by id; anything but digits (a hand-edited link) filters nothing."""
    value = request.GET.get(name, "").strip()
    return value if value.isascii() and value.isdigit() else None


@login_required
def review(request, classroom_id):
    classroom = _classroom(request, classroom_id)
    filters = {
        "topic_id": _id_param(request, "topic"),
        "learner_id": _id_param(request, "learner"),
        "check": request.GET.get("check") or None,
    }
    pages = list(review_selectors.review_pages(classroom=classroom, **filters)[:200])
    library = library_index(classroom=classroom).by_slug
    for page in pages:  # the library page a routed question was answered with, for "wrong page" / "right page"
        page.routed = library.get(page.thread.topic_slug) if page.version == 1 else None
    context = {
        "classroom": classroom,
        "pages": pages,
        "filters": filters,
        "topics": classroom.topics.all(),
        "learners": review_selectors.review_learners(classroom=classroom),
        "checks": review_selectors.CHECK_FILTERS,
    }
    return render(request, "teacher/review.html", context)


@login_required
def page_detail(request, page_id):
    page = _page(request, page_id)
    classroom = page.thread.classroom
    context = {
        "page": page,
        "classroom": classroom,
        "routed": library_index(classroom=classroom).by_slug.get(page.thread.topic_slug),
        "routed_question": getattr(thread_first_generation(thread=page.thread), "question", None),
        "versions": review_selectors.page_versions(page=page),
        "checks": page.checks.all()[:10],
        "check_failed": review_selectors.page_latest_check_status(page=page) == RenderCheck.Status.FAILED,
        "moderation_items": page.moderation_items.all(),
        "second_opinion": review_selectors.page_second_opinion(page=page),
        # The page server shows a hidden page only to its teacher, who is signed in on this origin only.
        "preview_url": page_url(page) if not (page.hidden and settings.PAGE_ORIGIN) else None,
    }
    return render(request, "teacher/page_detail.html", context)


PAGE_ACTIONS = {
    "hide": lambda page: review_services.page_set_hidden(page=page, hidden=True),
    "show": lambda page: review_services.page_set_hidden(page=page, hidden=False),
    "feature": lambda page: review_services.page_set_featured(page=page, featured=True),
    "unfeature": lambda page: review_services.page_set_featured(page=page, featured=False),
    "recheck": lambda page: review_services.page_recheck(page=page),
}


PAGE_ACTION_MESSAGES = {
    "hide": "Hidden: learners no longer see this page, open views included.",
    "show": "Learners can see this page again.",
    "feature": "Featured: the same question in this class is answered with this page at once.",
    "unfeature": "No longer featured.",
    "recheck": "Render check queued.",
}


@login_required
@require_POST
def page_action(request, page_id, action):
    page = _page(request, page_id)
    if action not in PAGE_ACTIONS:
        raise Http404("No such action")
    try:
        PAGE_ACTIONS[action](page)
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    else:
        messages.success(request, PAGE_ACTION_MESSAGES[action])
    return redirect(safe_next(request, reverse("teacher:page", args=[page.pk])))


@login_required
def page_thumbnail(request, page_id):
    page = _page(request, page_id)
    png = review_selectors.latest_thumbnail(page=page)
    if png is None:
        raise Http404("No thumbnail yet")
    response = HttpResponse(png, content_type="image/png")
    response["Cache-Control"] = "private, max-age=60"
    return response


@login_required
def moderation_queue(request, classroom_id):
    classroom = _classroom(request, classroom_id)
    items = classroom.moderation_items.select_related("learner", "page")
    context = {
        "classroom": classroom,
        "pending": items.filter(status=ModerationItem.Status.PENDING),
        "recent": items.exclude(status=ModerationItem.Status.PENDING)[:50],
    }
    return render(request, "teacher/moderation.html", context)


@login_required
@require_POST
def moderation_decide(request, item_id):
    item = class_selectors.moderation_item_for_teacher(user=request.user, item_id=item_id)
    if item is None:
        raise Http404("No such item")
    approve = request.POST.get("decision") == "approve"
    try:
        moderation_item_decide(item=item, approve=approve, by=request.user)
    except NothingToHide as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _decision_message(item, approve=approve))
    return redirect("teacher:moderation", classroom_id=item.classroom_id)


def _decision_message(item: ModerationItem, *, approve: bool) -> str:
    question = Truncator(item.text).chars(80)
    if item.page is None:
        return f"Marked the question “{question}” reviewed."
    if approve:
        return f"Approved the page for “{question}”: learners can see it."
    return f"Hid the page for “{question}”: learners no longer see it, open views included."


def _usage_days(request) -> int:
    try:
        return max(1, min(365, int(request.GET.get("days", 30))))
    except ValueError:
        return 30


@login_required
def usage(request, classroom_id):
    classroom = _classroom(request, classroom_id)
    days = _usage_days(request)
    rows = usage_rows(classroom=classroom, days=days)
    context = {"classroom": classroom, "rows": rows, "totals": usage_totals(rows), "metrics": METRICS, "days": days}
    return render(request, "teacher/usage.html", context)


@login_required
def usage_csv(request, classroom_id):
    classroom = _classroom(request, classroom_id)
    rows = usage_rows(classroom=classroom, days=_usage_days(request))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="usage-class-{classroom.pk}.csv"'
    writer = csv.writer(response)
    writer.writerow(["date", "learner", *METRICS])
    for row in rows:
        writer.writerow([row.day.isoformat(), spreadsheet_cell(row.learner), *(row.counts[m] for m in METRICS)])
    return response


def _with_titles(rows: list[dict]) -> list[dict]:
    pages = library_index().by_slug
    return [{**r, "nearest_titles": [pages[s].title for s in r["nearest"] if s in pages]} for r in rows]


def _requested_topics_context(rows: list[dict], classroom, user) -> dict:
    rows = _with_titles(rows)
    return {
        "rows": [r for r in rows if r["answered_by"] is None],
        "answered": [r for r in rows if r["answered_by"] is not None],
        "classroom": classroom,
        "learned": learned_for_review(user=user, classroom=classroom),
        "agree": settings.ROUTE_LEARN_AGREE,
        "now": timezone.now(),
        "library_pages": sorted(library_index(classroom=classroom).pages, key=lambda p: (p.lang, p.title)),
    }


@login_required
def requested_topics_all(request):
    """Questions the library had no page for, over every class the teacher has (and, for a superuser,
    those asked outside any class)."""
    context = _requested_topics_context(requested_topics(user=request.user), None, request.user)
    if request.user.is_superuser:  # the library's editors correct the router for questions asked outside classes
        context["routed_outside"] = review_selectors.routed_outside_classes()
    return render(request, "teacher/requested_topics.html", context)


@login_required
def requested_topics_class(request, classroom_id):
    classroom = _classroom(request, classroom_id)
    context = _requested_topics_context(requested_topics(user=request.user, classroom=classroom), classroom,
                                        request.user)
    return render(request, "teacher/requested_topics.html", context)
