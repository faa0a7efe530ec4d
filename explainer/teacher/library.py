"""The class library in the teacher panel: add kit pages (paste, upload, promote), list and remove them."""

from __future__ import annotations

import base64

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from explainer.models import LibraryPage, PageVersion
from explainer.pages.export import download_response
from explainer.selectors import classes as class_selectors
from explainer.selectors.library_pages import library_page_for_teacher
from explainer.services.library_pages import (
    LibraryPageCheckFailed,
    library_page_add,
    library_page_delete,
    library_page_promote,
)
from explainer.teacher.confirm import confirm_page, confirmed
from explainer.teacher.forms import LibraryPageForm
from model_worker.corpus import page_title

SOURCES = {"html": LibraryPage.Source.PASTE, "file": LibraryPage.Source.UPLOAD}


def _classroom(request, classroom_id):
    classroom = class_selectors.classroom_for(user=request.user, classroom_id=classroom_id)
    if classroom is None:
        raise Http404("No such class")
    return classroom


def _generated_pages(classroom):
    pages = (PageVersion.objects.filter(thread__classroom=classroom).select_related("generation", "thread")
             .order_by("-created_at")[:100])
    return {p.pk: p for p in pages}


@login_required
def library(request, classroom_id):
    classroom = _classroom(request, classroom_id)
    generated = _generated_pages(classroom)
    choices = [(pk, f"#{pk} v{p.version}: {p.generation.question[:80]}") for pk, p in generated.items()]
    report, too_big = None, False
    try:
        data, files = (request.POST, request.FILES) if request.method == "POST" else (None, None)
    except RequestDataTooBig:
        data, files, too_big = None, None, True
        messages.error(request, "html: the page is over 2 MB; the limit is 2 MB.")
    initial = _promote_initial(generated, request.GET.get("page", ""))
    form = LibraryPageForm(data, files, page_choices=choices, initial=initial)
    if data is not None and form.is_valid():
        try:
            added = _add(request, classroom, form, generated)
        except LibraryPageCheckFailed as exc:
            report = exc.report
            form.add_error(form.source_field, exc.message_dict["html"])
        except ValidationError as exc:
            _attach(form, exc)
        else:
            messages.success(request, f"Added “{added.title}” ({added.slug}): it passed the render check and is in the library.")
            return redirect("teacher:library", classroom_id=classroom.pk)
    context = {
        "classroom": classroom,
        "form": form,
        "pages": classroom.library_pages.order_by("topic", "lang"),
        "report": report,
        "shots": _shots(report),
    }
    return render(request, "teacher/library.html", context, status=400 if form.errors or too_big else 200)


def _promote_initial(generated: dict, wanted: str) -> dict | None:
    """"Add to the class library" from a page's view: the form starts with what the page says of itself
    (its <title>, language, the thread's library topic and the question asked), for the teacher to edit."""
    page = generated.get(int(wanted)) if wanted.isascii() and wanted.isdigit() else None
    if page is None:
        return None
    topic = page.thread.topic_slug.removeprefix("zh-") or slugify(page.generation.question)[:80]
    return {"page": page.pk, "title": (page_title(page.html) or "")[:120],
            "lang": page.generation.lang, "topic": topic, "questions": page.generation.question}


def _add(request, classroom, form, generated) -> LibraryPage:
    meta = {key: form.cleaned_data[key] for key in ("title", "lang", "topic", "questions")}
    if form.source_field == "page":
        page = generated.get(form.cleaned_data["page"])
        if page is None:
            raise ValidationError({"page": ["no such page in this class"]})
        return library_page_promote(page=page, added_by=request.user, **meta)
    html = form.cleaned_data[form.source_field]
    return library_page_add(classroom=classroom, html=html, source=SOURCES[form.source_field], added_by=request.user, **meta)


def _attach(form, exc: ValidationError) -> None:
    """Put the service's errors on the form's fields; errors about the page go to where it came from."""
    for field, errors in exc.message_dict.items():
        form.add_error(form.source_field if field == "html" else field if field in form.fields else None, errors)


def _shots(report) -> list[tuple[str, str]]:
    if report is None:
        return []
    return [(label, base64.b64encode(png).decode("ascii")) for label, png in report.screenshots.items()]


@login_required
@require_POST
def library_delete(request, page_id):
    page = library_page_for_teacher(user=request.user, page_id=page_id)
    if page is None:
        raise Http404("No such library page")
    if not confirmed(request):
        return confirm_page(
            request, classroom=page.classroom, title=f"Remove “{page.title}” from the library?",
            message=(f"Questions on {page.topic} ({page.lang}) are no longer answered with this page. "
                     "Download it first to keep a copy."),
            button="Remove from the library", cancel_url=reverse("teacher:library", args=[page.classroom_id]),
        )
    library_page_delete(page=page)
    messages.success(request, f"Removed “{page.title}” from the library.")
    return redirect("teacher:library", classroom_id=page.classroom_id)


@login_required
def library_thumbnail(request, page_id):
    page = library_page_for_teacher(user=request.user, page_id=page_id)
    if page is None or not page.thumbnail:
        raise Http404("No thumbnail")
    return HttpResponse(bytes(page.thumbnail), content_type="image/png")


@login_required
def library_download(request, page_id):
    page = library_page_for_teacher(user=request.user, page_id=page_id)
    if page is None:
        raise Http404("No such library page")
    return download_response(page.html, f"{page.slug}.html")


@login_required
def page_download(request, page_id):
    page = class_selectors.page_for_teacher(user=request.user, page_id=page_id)
    if page is None:
        raise Http404("No such page")
    return download_response(page.html, f"explainer-page-{page.pk}.html")
