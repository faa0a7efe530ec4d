"""Template tags the admin dashboard uses to show the classes at a glance."""

from django import template

from explainer.selectors.classes import panel_summary

register = template.Library()


@register.simple_tag(takes_context=True)
def class_summary(context):
    return panel_summary(user=context["request"].user)
