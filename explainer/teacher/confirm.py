"""The confirm step of the panel's destructive actions: a page with the same POST again, plus `confirm`."""

from __future__ import annotations

from django.shortcuts import render


def confirmed(request) -> bool:
    """Whether the POST came from the confirm page."""
    return request.POST.get("confirm") == "yes"


def confirm_page(request, *, classroom, title: str, message: str, button: str, cancel_url: str, fields=None):
    """Ask before acting: the form posts `fields` back to the same address with `confirm=yes`."""
    context = {"classroom": classroom, "title": title, "message": message, "button": button,
               "cancel_url": cancel_url, "fields": dict(fields or {})}
    return render(request, "teacher/confirm.html", context)
