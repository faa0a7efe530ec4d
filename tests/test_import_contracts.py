"""The seams hold: the import contracts in pyproject.toml pass, the docs list the modules that cross, and no
module imports itself back through others."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# What the web tier may import from the engine side (docs/architecture.md): the contract package counts as one.
SEAM = {"model_worker.contract", "model_worker.worker.run", "model_worker.corpus", "model_worker.config"}


def test_the_import_contracts_are_kept():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _graph():
    return grimp.build_graph("explainer", "model_worker", cache_dir=None)


def _seam_module(name: str) -> str:
    return "model_worker.contract" if name.startswith("model_worker.contract.") else name


def test_the_web_tier_imports_from_the_engine_side_only_the_documented_seam():
    section = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("### Imports across the seam")[1]
    section = section.split("\n## ")[0].split("\n### ")[0]
    listed = set(re.findall(r"^\| `(model_worker[\w.]*)` \|", section, re.MULTILINE))
    graph = _graph()
    web = graph.find_descendants("explainer") | {"explainer"}
    imported = {_seam_module(target) for module in web for target in graph.find_modules_directly_imported_by(module)
                if target.split(".")[0] == "model_worker"}
    assert listed == imported
    assert imported <= SEAM


def test_no_module_imports_itself_back_through_others():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    assert circles == []


def test_the_architecture_layout_names_every_module():
    layout = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("## Layout")[1].split("\n## ")[0]
    unnamed = []
    for package in ("explainer", "model_worker"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if path.name == "__init__.py" or "migrations" in parts or "pages" in parts and "corpus" in parts:
                continue
            named = (f"`{path.name}`", f" {path.name}", f"/{path.name}`", f"`{path.stem}`")
            if not any(name in layout for name in named):
                unnamed.append("/".join(parts))
    assert unnamed == []
