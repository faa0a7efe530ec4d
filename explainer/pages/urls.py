from django.urls import path

from . import views

urlpatterns = [
    path("pages/<int:page_id>/", views.page_view, name="page_view"),
    path("pages/<int:page_id>/thumbnail.png", views.page_thumbnail, name="page_thumbnail"),
    path("pages/<int:page_id>/download/", views.page_download, name="page_download"),
]
