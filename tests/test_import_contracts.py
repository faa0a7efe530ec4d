"""The seams hold: the import contracts in pyproject.toml pass, and the docs list the modules that cross."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_the_import_contracts_are_kept():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_the_architecture_doc_lists_exactly_the_engine_modules_the_web_tier_imports():
    section = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("### Imports across the seam")[1]
    section = section.split("\n## ")[0].split("\n### ")[0]
    listed = set(re.findall(r"^\| `(model_worker[\w.]*)` \|", section, re.MULTILINE))
    graph = grimp.build_graph("explainer", "model_worker", cache_dir=None)
    web = graph.find_descendants("explainer") | {"explainer"}
    imported = {target for module in web for target in graph.find_modules_directly_imported_by(module)
                if target.split(".")[0] == "model_worker"}
    assert listed == imported
