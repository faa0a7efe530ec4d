from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("explainer.teacher.urls")),  # /teacher/ panel and the learner's /join/
    path("", include("explainer.pages.urls")),  # /pages/<id>/: generated pages, sandboxed
]
