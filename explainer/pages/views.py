"""Generated pages and their render-check thumbnails, served sandboxed to an opaque origin."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_safe

from explainer.selectors.pages import latest_thumbnail, page_for_viewer

from .export import ExportError, download_response
from .links import token_expired
from .policy import origin_of, page_headers


def _request_origin(request) -> str:
    return f"{request.scheme}://{request.get_host()}"


def _on_page_origin(request) -> bool:
    return not settings.PAGE_ORIGIN or urlsplit(settings.PAGE_ORIGIN).netloc == request.get_host()


class LinkExpired(Http404):
    """The request's link was signed for this page but has expired (anywhere not caught: not found)."""


def _viewable(request, page_id: int):
    token = request.GET.get("k")
    page = page_for_viewer(page_id=page_id, user=getattr(request, "user", None), token=token)
    if page is None and token_expired(token, page_id):
        raise LinkExpired
    if page is None:
        raise Http404("No such page")
    return page


def _lasting_link(page_id: int, query: str = "") -> HttpResponseRedirect:
    """The app's lasting link to the page, which signs a fresh link for the browser whose page it is (and
    answers 404 to any other): a frame restored from history (Back, a tab the phone reloaded) asks again
    for the link it was first sent to, long expired."""
    app_origin = getattr(settings, "APP_ORIGIN", "") if settings.PAGE_ORIGIN else ""
    response = HttpResponseRedirect(f"{app_origin}{reverse('page_open', args=[page_id])}{query}")
    add_never_cache_headers(response)
    return response


@require_safe
@xframe_options_exempt  # framing is governed by the policy's frame-ancestors instead
def page_view(request, page_id: int):
    """The page's HTML under `sandbox allow-scripts` and a policy that lets it reach nothing but static/."""
    if not _on_page_origin(request):
        # Pages never run on the app's origin: send the browser to the page origin.
        return HttpResponseRedirect(settings.PAGE_ORIGIN + request.get_full_path())
    try:
        page = _viewable(request, page_id)
    except LinkExpired:
        return _lasting_link(page_id)
    origin = _request_origin(request)
    app_origin = getattr(settings, "APP_ORIGIN", "") or origin
    headers = page_headers(
        asset_origins=[origin, origin_of(settings.STATIC_URL)],
        frame_ancestors=[app_origin],
    )
    response = HttpResponse(page.html)
    for name, value in headers.items():
        response[name] = value
    return response


@require_safe
def page_thumbnail(request, page_id: int):
    """The latest render-check thumbnail of a page the viewer may see, as PNG."""
    page = _viewable(request, page_id)
    png = latest_thumbnail(page=page)
    if png is None:
        raise Http404("No thumbnail yet")
    response = HttpResponse(png, content_type="image/png")
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, max-age=60"
    return response


@require_safe
def page_download(request, page_id: int):
    """The page as one self-contained HTML file (three.js and the kit inlined) that works offline."""
    try:
        page = _viewable(request, page_id)
    except LinkExpired:
        return _lasting_link(page_id, "?download=1")
    try:
        return download_response(page.html, f"explainer-page-{page.pk}.html")
    except ExportError as exc:  # a page not written against the kit (a broken one): say so rather than fail
        response = HttpResponse(f"This page cannot be saved as one file: {exc}. It can still be viewed in "
                                "Explainer.\n", status=422, content_type="text/plain; charset=utf-8")
        response["X-Content-Type-Options"] = "nosniff"
        return response
