"""Vendor pinned npm packages into static/vendor/ (idempotent, stdlib only): three.js and axe-core.

Pages load three.js through an import map that points at /static/vendor/three/, so nothing is
fetched from another host at page time; the render check and the browser tests run axe-core's
`axe.min.js` (static/vendor/axe/) on the pages they open. Run: `.venv/bin/python scripts/vendor.py`
(`make vendor`).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path
from typing import NamedTuple

VERSION = "0.187.0"
# `npm view three@0.187.0 dist.integrity`; a tarball that does not match is refused.
INTEGRITY = "sha512-Qiu7R+Cmh8CstZsY1uJOSWnVlfo7ZtNLV7mF8Jltk3LB3AtDu9cRZlcnRKkAk8Y4z6KKw35z7Y7Urd7jWY8etA=="

# Addons the kit and pages import as "three/addons/<path>"; their relative imports follow them.
ADDONS = [
    "controls/OrbitControls.js",
    "renderers/CSS2DRenderer.js",
    "utils/BufferGeometryUtils.js",
]
BUILD = ["three.module.js", "three.core.js"]

VENDOR = Path(__file__).resolve().parent.parent / "static" / "vendor"
DEST = VENDOR / "three"
RELATIVE_IMPORT = re.compile(r"""(?:from|import)\s*['"](\.{1,2}/[^'"]+)['"]""")


class Pin(NamedTuple):
    """An npm package at one version, and the integrity its tarball must have."""

    name: str
    version: str
    integrity: str


THREE = Pin("three", VERSION, INTEGRITY)
# axe-core's accessibility rules, run by the render check's accessibility judge (docs/render-check.md).
AXE = Pin("axe-core", "4.14.1",
          "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==")
AXE_DEST = VENDOR / "axe"


def fetch_tarball(pin: Pin = THREE) -> bytes:
    """The package tarball, through `npm pack` when npm is installed, else straight from the registry."""
    if shutil.which("npm"):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                ["npm", "pack", f"{pin.name}@{pin.version}", "--silent"],
                cwd=tmp, check=True, stdout=subprocess.DEVNULL, timeout=300,
            )
            return (Path(tmp) / f"{pin.name}-{pin.version}.tgz").read_bytes()
    url = f"https://registry.npmjs.org/{pin.name}/-/{pin.name}-{pin.version}.tgz"
    with urllib.request.urlopen(url, timeout=120) as response:
        return response.read()


def verify(data: bytes, pin: Pin = THREE) -> None:
    algorithm, _, expected = pin.integrity.partition("-")
    actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
    if actual != expected:
        raise SystemExit(f"{pin.name}@{pin.version}: integrity mismatch ({algorithm}-{actual})")


def package_files(data: bytes) -> dict[str, bytes]:
    """A package tarball's files, by their path inside the package."""
    members: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith("package/"):
                members[member.name.removeprefix("package/")] = tar.extractfile(member).read()
    return members


def with_dependencies(members: dict[str, bytes], roots: list[str]) -> list[str]:
    """Package paths of `roots` plus every file they import by relative path."""
    seen: list[str] = []
    todo = list(roots)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        if path not in members:
            raise SystemExit(f"three@{VERSION}: {path} is not in the package")
        seen.append(path)
        base = Path(path).parent
        for ref in RELATIVE_IMPORT.findall(members[path].decode("utf-8")):
            todo.append(_normalise(base / ref))
    return seen


def _normalise(path: Path) -> str:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def extract(data: bytes, dest: Path) -> None:
    members = package_files(data)
    wanted = with_dependencies(members, [f"build/{name}" for name in BUILD])
    wanted += with_dependencies(members, [f"examples/jsm/{name}" for name in ADDONS])
    wanted.append("LICENSE")
    for path in wanted:
        if path.startswith("build/"):
            target = dest / path.removeprefix("build/")
        elif path.startswith("examples/jsm/"):
            target = dest / "addons" / path.removeprefix("examples/jsm/")
        else:
            target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(members[path])


def extract_axe(data: bytes, dest: Path) -> None:
    members = package_files(data)
    for path in ("axe.min.js", "LICENSE"):
        (dest / path).write_bytes(members[path])


def vendor(pin: Pin, dest: Path, unpack) -> None:
    """Fetch, verify and unpack `pin` into `dest`, unless that version is there already."""
    if (dest / pin.version).exists():
        return
    data = fetch_tarball(pin)
    verify(data, pin)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{pin.name}-", dir=dest.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the web server must read it
    try:
        unpack(data, staging)
        (staging / pin.version).write_text(json.dumps({"version": pin.version, "integrity": pin.integrity}) + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"vendored {pin.name}@{pin.version} into {dest}")


def main() -> int:
    vendor(THREE, DEST, extract)
    vendor(AXE, AXE_DEST, extract_axe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
