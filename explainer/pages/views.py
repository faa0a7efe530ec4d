"""Generated pages and their render-check thumbnails, served sandboxed to an opaque origin."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_safe

from explainer.selectors.pages import latest_thumbnail, page_for_viewer

from .export import ExportError, download_response
from .policy import origin_of, page_headers


def _request_origin(request) -> str:
    return f"{request.scheme}://{request.get_host()}"


def _on_page_origin(request) -> bool:
    return not settings.PAGE_ORIGIN or urlsplit(settings.PAGE_ORIGIN).netloc == request.get_host()


def _viewable(request, page_id: int):
    page = page_for_viewer(page_id=page_id, user=getattr(request, "user", None), token=request.GET.get("k"))
    if page is None:
        raise Http404("No such page")
    return page


@require_safe
@xframe_options_exempt  # framing is governed by the policy's frame-ancestors instead
def page_view(request, page_id: int):
    """The page's HTML under `sandbox allow-scripts` and a policy that lets it reach nothing but static/."""
    if not _on_page_origin(request):
        # Pages never run on the app's origin: send the browser to the page origin.
        return HttpResponseRedirect(settings.PAGE_ORIGIN + request.get_full_path())
    page = _viewable(request, page_id)
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
    page = _viewable(request, page_id)
    try:
        return download_response(page.html, f"explainer-page-{page.pk}.html")
    except ExportError as exc:  # a page not written against the kit (a broken one): say so rather than fail
        response = HttpResponse(f"This page cannot be saved as one file: {exc}. It can still be viewed in "
                                "Explainer.\n", status=422, content_type="text/plain; charset=utf-8")
        response["X-Content-Type-Options"] = "nosniff"
        return response
