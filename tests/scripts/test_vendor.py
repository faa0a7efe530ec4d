"""The vendoring script (three.js, axe-core): pinned, verified, and a no-op once the files are in place."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

VENDOR_PY = Path(__file__).resolve().parents[2] / "scripts" / "vendor.py"


@pytest.fixture
def vendor():
    spec = importlib.util.spec_from_file_location("vendor_under_test", VENDOR_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_tarball_that_does_not_match_the_pinned_integrity_is_refused(vendor):
    with pytest.raises(SystemExit, match="integrity mismatch"):
        vendor.verify(b"not the three.js package")


def test_an_addon_brings_the_files_it_imports_by_relative_path(vendor):
    members = {
        "examples/jsm/controls/A.js": b"import { B } from '../utils/B.js';\nimport * as THREE from 'three';",
        "examples/jsm/utils/B.js": b"export const B = 1;",
        "examples/jsm/utils/Unused.js": b"",
    }
    assert sorted(vendor.with_dependencies(members, ["examples/jsm/controls/A.js"])) == [
        "examples/jsm/controls/A.js",
        "examples/jsm/utils/B.js",
    ]


def test_vendoring_again_does_nothing_when_the_version_is_present(vendor, tmp_path, monkeypatch):
    for name, pin in (("DEST", vendor.THREE), ("AXE_DEST", vendor.AXE)):
        dest = tmp_path / pin.name
        dest.mkdir()
        (dest / pin.version).write_text("{}")
        monkeypatch.setattr(vendor, name, dest)
    monkeypatch.setattr(vendor, "fetch_tarball", lambda pin: pytest.fail("fetched although already vendored"))
    assert vendor.main() == 0


def test_the_vendored_tree_has_the_module_build_the_kit_addons_and_the_licence(vendor):
    vendor.main()
    for path in ("three.module.js", "three.core.js", "LICENSE", "addons/controls/OrbitControls.js",
                 "addons/renderers/CSS2DRenderer.js", vendor.VERSION):
        assert (vendor.DEST / path).is_file(), path
    assert "MIT" in (vendor.DEST / "LICENSE").read_text()


def test_the_vendored_axe_core_is_the_pinned_build_and_its_licence(vendor):
    vendor.main()
    assert (vendor.AXE_DEST / vendor.AXE.version).is_file()
    assert f"axe v{vendor.AXE.version}" in (vendor.AXE_DEST / "axe.min.js").read_text()[:200]
    assert "Mozilla Public License" in (vendor.AXE_DEST / "LICENSE").read_text()
