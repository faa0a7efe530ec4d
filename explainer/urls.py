from django.contrib import admin
from django.urls import include, path

from explainer import library_views, views

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that name no icon (the teacher panel, the admin).
    path("favicon.ico", views.favicon),
    path("", views.home, name="home"),
    path("t/<uuid:thread_id>/", views.thread_detail, name="thread"),
    path("pages/<int:page_id>/open/", views.page_open, name="page_open"),
    path("library/", library_views.library, name="library"),
    path("library/open/", library_views.library_open, name="library-open"),
    path("library/thumbnails/<slug:slug>.png", library_views.library_thumbnail, name="library-thumbnail"),
    path("", include("explainer.teacher.urls")),  # /teacher/ panel and the learner's /join/
    path("", include("explainer.pages.urls")),  # /pages/<id>/: generated pages, sandboxed
]
