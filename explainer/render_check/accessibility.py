"""The accessibility judge: axe-core's rules on the page as a learner finds it at the end of the check.

Serious and critical violations fail the check, each in words a model can act on (they reach a repair's
error list); moderate and minor ones are reported in the metrics. axe-core is vendored by
`scripts/vendor.py` (static/vendor/axe/), never written here.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django.conf import settings

from .report import RenderReport

AXE_JS = Path(settings.BASE_DIR) / "static" / "vendor" / "axe" / "axe.min.js"
FAILING = ("critical", "serious")
# The axe run: violations only, each with its rule, impact, what it asks for and the first few elements.
RUN = """async () => {
  // No preload: it fetches the stylesheets again, which the page's connect-src rightly refuses.
  const results = await axe.run(document, {resultTypes: ["violations"], preload: false});
  return results.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => ({html: n.html.slice(0, 160), fix: n.failureSummary || ""})),
    count: v.nodes.length,
  }));
}"""


@cache
def axe_source() -> str | None:
    return AXE_JS.read_text(encoding="utf-8") if AXE_JS.is_file() else None


def violation_text(violation: dict) -> str:
    """One violation as a model can act on it: the rule, its impact, what it asks, where, and the fix."""
    node = violation["nodes"][0] if violation["nodes"] else {"html": "", "fix": ""}
    fix = " ".join(line.strip() for line in node["fix"].splitlines()[:3] if line.strip())
    more = f" (and {violation['count'] - 1} more)" if violation["count"] > 1 else ""
    return f"{violation['id']} ({violation['impact']}): {violation['help']}, at {node['html']}{more}. {fix}".strip()


async def judge_accessibility(page, report: RenderReport) -> None:
    source = axe_source()
    if source is None:
        report.add("accessible", True, "not judged: axe-core is not vendored (make vendor)", required=False)
        return
    await page.evaluate(source)  # through the browser's debugger, so the page's CSP does not apply
    violations = await page.evaluate(RUN)
    report.metrics["accessibility"] = violations
    failing = [v for v in violations if v["impact"] in FAILING]
    if failing:
        report.add("accessible", False, "; ".join(violation_text(v) for v in failing))
        return
    minor = ", ".join(f"{v['id']} ({v['impact']})" for v in violations)
    report.add("accessible", True, f"no serious or critical axe-core violation{'; reported: ' + minor if minor else ''}")
