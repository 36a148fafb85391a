#!/usr/bin/env python3
"""clada from Python against spawning the command line: `clada.check` and
`clada.apply` in process, and `clada check|apply --format json` run as a
child process with the document on stdin and its JSON read back, 1,000
calls each on a 100 KB document, alternating call by call. Prints medians
and ratios; asserts nothing. Run by hand (figures in benches/README.md):

    cargo build --release -p clada-cli
    python3.11 -m venv /tmp/clada-venv && . /tmp/clada-venv/bin/activate
    pip install ./clada-py        # an optimised build
    python clada-py/bench/calls.py target/release/clada [CALLS]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import clada

SIZE = 100_000
FILES = 50


def body(i: int, lines: int) -> str:
    return "".join(f"    value_{i}_{n} = compute({n}, '<tag>') + {n * 7}  # line {n}\n" for n in range(lines))


def writes() -> str:
    """WRITE tasks over 50 files, about 100 KB: the same files each call."""
    parts, size, i = [], 0, 0
    while size < SIZE:
        part = f'<<<<<<< WRITE path="src/mod{i % FILES}.py"\ndef f{i}():\n{body(i, 24)}>>>>>>> END\n\n'
        parts.append(part)
        size += len(part)
        i += 1
    return "Here are the files.\n\n" + "".join(parts)


def edits(tree: Path) -> str:
    """SEARCH edits in pairs that undo each other, about 100 KB, over 50
    files made in `tree`: each call changes every file and leaves it as
    it was."""
    for f in range(FILES):
        (tree / "src").mkdir(parents=True, exist_ok=True)
        (tree / f"src/edit{f}.py").write_text("".join(f"line {f}.{n} = {n}\n" for n in range(200)))
    parts, size, i = [], 0, 0
    while size < SIZE:
        f, n = i % FILES, (i // FILES) % 200
        old, new = f"line {f}.{n} = {n}\n", f"line {f}.{n} = {n} + 1\n"
        pair = (
            f'<<<<<<< TASKS\n<<<<<<< SEARCH path="src/edit{f}.py"\n{old}=======\n{new}>>>>>>> REPLACE\n'
            f'<<<<<<< SEARCH path="src/edit{f}.py"\n{new}=======\n{old}>>>>>>> REPLACE\n>>>>>>> TASKS\n'
        )
        parts.append(pair)
        size += len(pair)
        i += 1
    return "".join(parts)


def cli(binary: str, args: list[str], document: str) -> dict[str, Any]:
    out = subprocess.run([binary, *args], input=document.encode(), capture_output=True, check=False)
    return json.loads(out.stdout)


def timed(call: Callable[[], dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    report = call()
    return time.perf_counter() - start, report


def compare(name: str, calls: int, python: Callable[[], dict[str, Any]], spawned: Callable[[], dict[str, Any]]) -> None:
    # Once each first: both must agree, and the caches are warm.
    a, b = python(), spawned()
    assert a["ok"] and b["ok"], (a, b)
    py_times, cli_times = [], []
    for i in range(calls):
        # Alternate the order, so that neither side always runs second.
        first, second = (python, spawned) if i % 2 == 0 else (spawned, python)
        t1, _ = timed(first)
        t2, _ = timed(second)
        (py_times if first is python else cli_times).append(t1)
        (cli_times if first is python else py_times).append(t2)
    p, c = statistics.median(py_times) * 1000, statistics.median(cli_times) * 1000
    print(f"{name:<34} python {p:8.3f} ms   cli {c:8.3f} ms   cli/python {c / p:6.2f}x")


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    binary, calls = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 1000
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "root"
        root.mkdir()
        write_doc, edit_doc = writes(), edits(root)
        print(f"{calls} calls each, medians per call; documents of {len(write_doc):,} and {len(edit_doc):,} bytes")
        compare(
            "check (WRITE tasks)",
            calls,
            lambda: clada.check(write_doc),
            lambda: cli(binary, ["check", "--format", "json", "-"], write_doc),
        )
        apply_args = ["apply", "--no-git", "--no-prompt", "--format", "json", "-C", str(root), "-"]
        compare(
            "apply (WRITE tasks, 50 files)",
            calls,
            lambda: clada.apply(write_doc, root),
            lambda: cli(binary, apply_args, write_doc),
        )
        compare(
            "apply (SEARCH edits, 50 files)",
            calls,
            lambda: clada.apply(edit_doc, root),
            lambda: cli(binary, apply_args, edit_doc),
        )


if __name__ == "__main__":
    main()
