"""What a render check found: one entry per check, the evidence, and the pictures."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field


@dataclass
class CheckResult:
    """One check's verdict; only `required` checks decide the report (others, like "animates", inform)."""

    passed: bool
    detail: str
    required: bool = True

    def as_dict(self) -> dict:
        return {"passed": self.passed, "detail": self.detail, "required": self.required}


@dataclass
class RenderReport:
    url: str
    checks: dict[str, CheckResult] = field(default_factory=dict)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    blocked_requests: list[dict] = field(default_factory=list)
    failed_requests: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    screenshots: dict[str, bytes] = field(default_factory=dict)  # label ("0.5s", "2.0s", "390px") -> PNG
    thumbnail: bytes | None = None
    error: str | None = None  # the check itself could not run (no browser): no verdict on the page

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks.values() if c.required)

    @property
    def failed_checks(self) -> list[str]:
        return [name for name, c in self.checks.items() if c.required and not c.passed]

    def add(self, name: str, passed: bool, detail: str, *, required: bool = True) -> None:
        self.checks[name] = CheckResult(passed, detail, required)

    def summary(self) -> str:
        if self.passed:
            return "passed"
        return "; ".join(f"{name}: {self.checks[name].detail}" for name in self.failed_checks)

    def repair_errors(self) -> list[str]:
        """What a repair tells the model of this page: the failed checks first, then the page's own errors."""
        errors = [f"{name}: {self.checks[name].detail}" for name in self.failed_checks]
        errors += [f"page error: {e}" for e in self.page_errors]
        errors += [f"console error: {e}" for e in self.console_errors]
        return list(dict.fromkeys(errors)) or ["the page failed the render check"]

    def as_dict(self, *, images: bool = False) -> dict:
        """JSON-ready report; PNG bytes only when `images` (base64), sizes otherwise."""
        data = {
            "url": self.url,
            "passed": self.passed,
            "summary": self.summary(),
            "failed_checks": self.failed_checks,
            "checks": {name: c.as_dict() for name, c in self.checks.items()},
            "console_errors": self.console_errors,
            "page_errors": self.page_errors,
            "blocked_requests": self.blocked_requests,
            "failed_requests": self.failed_requests,
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
            "metrics": self.metrics,
            "screenshots": {k: len(v) for k, v in self.screenshots.items()},
            "thumbnail_bytes": len(self.thumbnail or b""),
            "error": self.error,
            "repair_errors": self.repair_errors(),
        }
        if images:
            data["screenshots"] = {k: _b64(v) for k, v in self.screenshots.items()}
            data["thumbnail"] = _b64(self.thumbnail) if self.thumbnail else None
        return data


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
