"""Routes of the teacher panel under /teacher/ and the learner's join page under /join/."""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from explainer.teacher import join, library, routing, views

panel = [
    path("", views.dashboard, name="dashboard"),
    path("login/", auth_views.LoginView.as_view(template_name="teacher/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="/teacher/login/"), name="logout"),
    path("classes/<int:classroom_id>/", views.class_detail, name="class"),
    path("classes/<int:classroom_id>/rotate-code/", views.class_rotate, name="class-rotate"),
    path("classes/<int:classroom_id>/learners/<int:learner_id>/", views.learner_action, name="learner"),
    path("classes/<int:classroom_id>/topics/", views.topic_save, name="topic-new"),
    path("classes/<int:classroom_id>/topics/<int:topic_id>/", views.topic_save, name="topic"),
    path("classes/<int:classroom_id>/review/", views.review, name="review"),
    path("classes/<int:classroom_id>/library/", library.library, name="library"),
    path("library/<int:page_id>/delete/", library.library_delete, name="library-delete"),
    path("library/<int:page_id>/thumbnail.png", library.library_thumbnail, name="library-thumbnail"),
    path("library/<int:page_id>/download/", library.library_download, name="library-download"),
    path("pages/<int:page_id>/download.html", library.page_download, name="page-download"),
    path("classes/<int:classroom_id>/moderation/", views.moderation_queue, name="moderation"),
    path("classes/<int:classroom_id>/usage/", views.usage, name="usage"),
    path("classes/<int:classroom_id>/usage.csv", views.usage_csv, name="usage-csv"),
    path("classes/<int:classroom_id>/requested-topics/", views.requested_topics_class, name="requested-topics-class"),
    path("requested-topics/", views.requested_topics_all, name="requested-topics"),
    path("pages/<int:page_id>/", views.page_detail, name="page"),
    path("pages/<int:page_id>/thumbnail.png", views.page_thumbnail, name="page-thumbnail"),
    path("pages/<int:page_id>/route/<slug:action>/", routing.route_action, name="route-action"),
    path("pages/<int:page_id>/<slug:action>/", views.page_action, name="page-action"),
    path("requested-topics/answer/", routing.request_point, name="request-point"),
    path("learned/<int:route_id>/undo/", routing.learned_undo, name="learned-undo"),
    path("moderation/<int:item_id>/", views.moderation_decide, name="moderation-decide"),
]

urlpatterns = [
    path("teacher/", include((panel, "teacher"))),
    path("join/", join.join, name="join"),
    path("join/leave/", join.leave, name="join-leave"),
    path("join/suggestions.json", join.suggestions, name="join-suggestions"),
]
