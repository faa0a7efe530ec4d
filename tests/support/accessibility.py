"""axe-core on an app screen in a test's browser, judged as the render check judges a page."""

from __future__ import annotations

from explainer.render_check.accessibility import FAILING, RUN, axe_source, violation_text


def serious_violations(page) -> list[str]:
    """The serious and critical axe-core violations on a Playwright (sync) page, in words."""
    page.evaluate(axe_source())
    return [violation_text(v) for v in page.evaluate(RUN) if v["impact"] in FAILING]
