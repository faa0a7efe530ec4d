"""The condensed kit reference capable models are prompted with (`static/kit/REFERENCE.md`).

The reference names the hash of the kit sources it was written against, so a kit change that leaves it
behind is caught (tests compare the two). `python -m model_worker.backends.kit_reference` rewrites the
hash after the reference has been brought up to date.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path

from model_worker.config import REPO_ROOT

KIT_DIR = REPO_ROOT / "static" / "kit"
REFERENCE = KIT_DIR / "REFERENCE.md"
_HASH = re.compile(r"kit sources sha256: (\w+)")


def kit_hash(kit_dir: Path = KIT_DIR) -> str:
    """First 16 hex digits of the sha256 over the kit's JavaScript sources, in name order."""
    digest = hashlib.sha256()
    for path in sorted(kit_dir.glob("*.js")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@cache
def reference_text() -> str:
    """The reference without its header comment."""
    text = REFERENCE.read_text(encoding="utf-8")
    return re.sub(r"\A<!--.*?-->\s*", "", text, flags=re.DOTALL)


def reference_hash() -> str | None:
    found = _HASH.search(REFERENCE.read_text(encoding="utf-8"))
    return found.group(1) if found else None


def main() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    REFERENCE.write_text(_HASH.sub(f"kit sources sha256: {kit_hash()}", text, count=1), encoding="utf-8")
    print(f"{REFERENCE}: kit sources sha256 {kit_hash()}")


if __name__ == "__main__":
    main()
