from django.contrib import admin
from django.urls import include, path

from explainer import views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", views.home, name="home"),
    path("t/<uuid:thread_id>/", views.thread_detail, name="thread"),
    path("", include("explainer.teacher.urls")),  # /teacher/ panel and the learner's /join/
    path("", include("explainer.pages.urls")),  # /pages/<id>/: generated pages, sandboxed
]
