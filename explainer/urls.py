from django.contrib import admin
from django.urls import include, path, re_path
from django.views.i18n import JavaScriptCatalog

from explainer import library_views, views

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that name no icon (the teacher panel, the admin).
    path("favicon.ico", views.favicon),
    path("", views.home, name="home"),
    # The interface's language: the header's switch posts to set_language, which sets the language cookie.
    path("i18n/", include("django.conf.urls.i18n")),
    # The learner page's words: in the interface's language, and in a question's (docs/architecture.md, "The learner's languages").
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    re_path(r"^jsi18n/(?P<lang>en|zh)\.json$", views.page_catalog, name="page-catalog"),
    path("t/<uuid:thread_id>/", views.thread_detail, name="thread"),
    path("pages/<int:page_id>/open/", views.page_open, name="page_open"),
    path("library/", library_views.library, name="library"),
    path("library/open/", library_views.library_open, name="library-open"),
    path("library/thumbnails/<slug:slug>.png", library_views.library_thumbnail, name="library-thumbnail"),
    path("", include("explainer.teacher.urls")),  # /teacher/ panel and the learner's /join/
    path("", include("explainer.pages.urls")),  # /pages/<id>/: generated pages, sandboxed
]
