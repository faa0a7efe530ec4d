"""The interface's translations (locale/): every message translated, none fuzzy, and each committed .mo says
what its .po says (a fresh clone serves the .mo files without gettext installed)."""

from __future__ import annotations

import gettext
import os
import shutil
import subprocess
from pathlib import Path

import pytest

LOCALE = Path(__file__).resolve().parents[1] / "locale"
CATALOGS = sorted(LOCALE.glob("*/LC_MESSAGES/*.po"))
MSGFMT = shutil.which("msgfmt")

pytestmark = pytest.mark.skipif(MSGFMT is None, reason="needs gettext's msgfmt (make setup installs it)")


def msgfmt(po: Path, out: Path) -> str:
    """msgfmt's statistics for `po`, compiled to `out` with its format strings checked."""
    done = subprocess.run([MSGFMT, "--check", "--statistics", "-o", str(out), str(po)], capture_output=True,
                          text=True, env={**os.environ, "LC_ALL": "C", "LANGUAGE": ""}, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stderr


def messages(mo: Path) -> dict:
    with mo.open("rb") as f:
        return gettext.GNUTranslations(f)._catalog


def test_the_chinese_interface_has_a_catalog_for_the_templates_and_one_for_the_scripts():
    assert {f"{po.parent.parent.name}/{po.name}" for po in CATALOGS} == {"zh_Hans/django.po", "zh_Hans/djangojs.po"}


@pytest.mark.parametrize("po", CATALOGS, ids=lambda po: f"{po.parent.parent.name}/{po.name}")
def test_every_message_is_translated_none_is_fuzzy_and_the_committed_mo_matches(po, tmp_path):
    statistics = msgfmt(po, tmp_path / "fresh.mo")
    assert "untranslated" not in statistics and "fuzzy" not in statistics, statistics
    assert "#, fuzzy" not in po.read_text(encoding="utf-8")  # not even the header
    committed = po.with_suffix(".mo")
    assert committed.exists(), f"{committed} is missing: run manage.py compilemessages"
    assert messages(committed) == messages(tmp_path / "fresh.mo"), f"{committed} is stale: run manage.py compilemessages"
