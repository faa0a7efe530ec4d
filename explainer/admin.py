"""Django admin for superusers and staff: classes, pages with thumbnails, moderation, with panel actions."""

from __future__ import annotations

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html

from explainer.models import Classroom, Learner, ModerationItem, PageVersion, RenderCheck, Topic
from explainer.services import review as review_services
from explainer.services.classrooms import classroom_rotate_join_code
from explainer.services.moderation import NothingToHide, moderation_item_decide

admin.site.site_header = "Explainer administration"
admin.site.site_title = "Explainer"
admin.site.index_title = "Data (teachers work in the panel at /teacher/)"
admin.site.site_url = "/teacher/"


class OwnClassesMixin:
    """Staff who are not superusers see only rows of their own classes."""

    classroom_path = "classroom"

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(**{f"{self.classroom_path}__teacher": request.user})


class TopicInline(admin.TabularInline):
    model = Topic
    extra = 0


@admin.register(Classroom)
class ClassroomAdmin(admin.ModelAdmin):
    list_display = ["name", "teacher", "join_code", "topic_space_enabled", "daily_question_limit", "panel"]
    search_fields = ["name", "join_code"]
    inlines = [TopicInline]
    actions = ["rotate_join_codes"]

    def get_queryset(self, request):
        qs = admin.ModelAdmin.get_queryset(self, request)
        return qs if request.user.is_superuser else qs.filter(teacher=request.user)

    def get_readonly_fields(self, request, obj=None):
        # A code is typed by learners and normalised when they do: only the panel's rotation makes one.
        return ["join_code"]

    @admin.display(description="Panel")
    def panel(self, obj):
        return format_html('<a href="{}">open</a>', reverse("teacher:class", args=[obj.pk]))

    @admin.action(description="Rotate the join code")
    def rotate_join_codes(self, request, queryset):
        for classroom in queryset:
            classroom_rotate_join_code(classroom=classroom)


@admin.register(Learner)
class LearnerAdmin(OwnClassesMixin, admin.ModelAdmin):
    list_display = ["display_name", "classroom", "created_at", "removed_at"]
    list_filter = ["classroom", ("removed_at", admin.EmptyFieldListFilter)]
    search_fields = ["display_name"]


@admin.register(PageVersion)
class PageVersionAdmin(OwnClassesMixin, admin.ModelAdmin):
    classroom_path = "thread__classroom"
    list_display = ["thumbnail", "question", "version", "learner", "hidden", "featured", "created_at"]
    list_filter = ["hidden", "featured", "thread__classroom"]
    search_fields = ["generation__question"]
    readonly_fields = ["thread", "generation", "version", "html", "created_at"]
    actions = ["hide", "show", "feature", "unfeature", "recheck"]
    list_select_related = ["generation", "generation__learner"]

    def has_add_permission(self, request):
        return False  # a version is written by a generation, never by hand

    @admin.display(description="")
    def thumbnail(self, obj):
        if not obj.checks.exclude(thumbnail=None).exists():
            return "—"
        url = reverse("teacher:page-thumbnail", args=[obj.pk])
        return format_html('<img src="{}" style="width:120px;border-radius:4px" alt="">', url)

    @admin.display(description="Question")
    def question(self, obj):
        return obj.generation.question[:80]

    @admin.display(description="Learner")
    def learner(self, obj):
        return obj.generation.learner or "—"

    @admin.action(description="Hide from learners now")
    def hide(self, request, queryset):
        for page in queryset:
            review_services.page_set_hidden(page=page, hidden=True)

    @admin.action(description="Show to learners")
    def show(self, request, queryset):
        for page in queryset:
            review_services.page_set_hidden(page=page, hidden=False)

    @admin.action(description="Feature (answer the same question from the library)")
    def feature(self, request, queryset):
        for page in queryset:
            try:
                review_services.page_set_featured(page=page, featured=True)
            except review_services.PageNotFeaturable as exc:  # the others are still featured
                self.message_user(request, f"Page {page.pk}: {' '.join(exc.messages)}", level=messages.WARNING)

    @admin.action(description="Stop featuring")
    def unfeature(self, request, queryset):
        for page in queryset:
            review_services.page_set_featured(page=page, featured=False)

    @admin.action(description="Re-run the render check")
    def recheck(self, request, queryset):
        for page in queryset:
            review_services.page_recheck(page=page)


@admin.register(RenderCheck)
class RenderCheckAdmin(OwnClassesMixin, admin.ModelAdmin):
    classroom_path = "page__thread__classroom"
    list_display = ["page", "status", "created_at", "finished_at"]
    list_filter = ["status"]
    exclude = ["thumbnail"]


@admin.register(ModerationItem)
class ModerationItemAdmin(OwnClassesMixin, admin.ModelAdmin):
    list_display = ["created_at", "classroom", "kind", "status", "learner", "text", "matched", "source"]
    list_filter = ["status", "kind", "source", "classroom"]
    search_fields = ["text", "matched"]
    actions = ["approve", "hide"]

    @admin.action(description="Approve")
    def approve(self, request, queryset):
        for item in queryset:
            moderation_item_decide(item=item, approve=True, by=request.user)

    @admin.action(description="Hide")
    def hide(self, request, queryset):
        skipped = 0
        for item in queryset:
            try:
                moderation_item_decide(item=item, approve=False, by=request.user)
            except NothingToHide:
                skipped += 1
        if skipped:
            self.message_user(request, f"{skipped} question item(s) left as they were: a question has no page of "
                              "its own; hide the page item it led to.", level=messages.WARNING)
