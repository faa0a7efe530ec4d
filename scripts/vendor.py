"""Vendor a pinned three.js from the npm registry into static/vendor/three/ (idempotent, stdlib only).

Pages load three.js through an import map that points at /static/vendor/three/, so nothing is
fetched from another host at page time. Run: `.venv/bin/python scripts/vendor.py` (`make vendor`).
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

VERSION = "0.187.0"
# `npm view three@0.187.0 dist.integrity`; a tarball that does not match is refused.
INTEGRITY = "sha512-Qiu7R+Cmh8CstZsY1uJOSWnVlfo7ZtNLV7mF8Jltk3LB3AtDu9cRZlcnRKkAk8Y4z6KKw35z7Y7Urd7jWY8etA=="
TARBALL_URL = f"https://registry.npmjs.org/three/-/three-{VERSION}.tgz"

# Addons the kit and pages import as "three/addons/<path>"; their relative imports follow them.
ADDONS = [
    "controls/OrbitControls.js",
    "renderers/CSS2DRenderer.js",
    "utils/BufferGeometryUtils.js",
]
BUILD = ["three.module.js", "three.core.js"]

DEST = Path(__file__).resolve().parent.parent / "static" / "vendor" / "three"
MARKER = DEST / VERSION
RELATIVE_IMPORT = re.compile(r"""(?:from|import)\s*['"](\.{1,2}/[^'"]+)['"]""")


def fetch_tarball() -> bytes:
    """The package tarball, through `npm pack` when npm is installed, else straight from the registry."""
    if shutil.which("npm"):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                ["npm", "pack", f"three@{VERSION}", "--silent"],
                cwd=tmp, check=True, stdout=subprocess.DEVNULL, timeout=300,
            )
            return (Path(tmp) / f"three-{VERSION}.tgz").read_bytes()
    with urllib.request.urlopen(TARBALL_URL, timeout=120) as response:
        return response.read()


def verify(data: bytes) -> None:
    algorithm, _, expected = INTEGRITY.partition("-")
    actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
    if actual != expected:
        raise SystemExit(f"three@{VERSION}: integrity mismatch ({algorithm}-{actual})")


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
    members: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith("package/"):
                members[member.name.removeprefix("package/")] = tar.extractfile(member).read()
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


def main() -> int:
    if MARKER.exists():
        return 0
    data = fetch_tarball()
    verify(data)
    DEST.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="three-", dir=DEST.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the web server must read it
    try:
        extract(data, staging)
        (staging / VERSION).write_text(json.dumps({"version": VERSION, "integrity": INTEGRITY}) + "\n")
        if DEST.exists():
            shutil.rmtree(DEST)
        staging.rename(DEST)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"vendored three@{VERSION} into {DEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
