#!/usr/bin/env python3
"""Writes a JSON Lines dataset for apply.py from the corpus's apply cases
(corpus/apply/*/: the files of `input/`, the reply `patch.txt`, the
dialect its `expect` names): one record per case whose input is text
files only (no links, no other bytes), repeated COPIES times.

    python examples/batch/make_dataset.py corpus/apply replies.jsonl [COPIES]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def record(case: Path) -> dict[str, Any] | None:
    """A case as a record, or None when its input is not text files only."""
    files: dict[str, str] = {}
    root = case / "input"
    if root.is_dir():
        for p in sorted(root.rglob("*")):
            if p.is_symlink() or not (p.is_file() or p.is_dir()):
                return None
            if p.is_file():
                try:
                    files[p.relative_to(root).as_posix()] = p.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    return None
    try:
        reply = (case / "patch.txt").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    out: dict[str, Any] = {"files": files, "reply": reply}
    for line in (case / "expect").read_text(encoding="utf-8").splitlines():
        if line.startswith("dialect "):
            out["dialect"] = line.split()[1]
    return out


def main() -> int:
    corpus, target = Path(sys.argv[1]), Path(sys.argv[2])
    copies = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    records = [r for c in sorted(corpus.iterdir()) if (c / "expect").is_file() and (r := record(c))]
    with target.open("w", encoding="utf-8") as out:
        for _ in range(copies):
            for r in records:
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(records) * copies} records ({len(records)} cases) in {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
