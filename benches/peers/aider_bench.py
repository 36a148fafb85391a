#!/usr/bin/env python3
"""The in-memory apply against aider's own matcher and against the CLI
per reply, on the same real aider replies, side by side in one run.

The replies are those of corpus/aider-history/ with the files they edit
(`gen aider-replies 1 FILE`: JSON Lines of {files, reply, dialect}). Each
round applies every reply:

- `clada.apply_files(reply, files, dialect="aider")`, in this process;
- aider: its parser, `find_original_update_blocks`, then `do_replace` for
  each block, as `EditBlockCoder.apply_edits` does (trying the other files
  when a block's own fails; the failure message with its similar lines
  left out), on the texts in memory (aider/editblock_coder.py, vendored);
- `clada apply --dialect aider --no-git --format json` spawned per reply,
  on a copy of the files written before the clock starts.

Prints the median per reply (wall and CPU time: all three run on one
core, so replies/s is per core) and the ratios, and how many edits each
applied; asserts that clada's two ways agree, reply for reply. Run by hand
(figures in benches/README.md):

    cargo build --release -p clada-cli
    cargo run --release -q -p clada-benches --bin gen aider-replies 1 /tmp/aider-replies.jsonl
    python3.11 -m venv /tmp/clada-venv && . /tmp/clada-venv/bin/activate
    pip install ./clada-py        # an optimised build
    python benches/peers/aider_bench.py /tmp/aider-replies.jsonl target/release/clada [ROUNDS]
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import clada

sys.path.insert(0, str(Path(__file__).parent / "aider"))
from editblock_coder import DEFAULT_FENCE, do_replace, find_original_update_blocks  # noqa: E402

PASSES = 20


def aider_apply(reply: str, files: dict[str, str]) -> tuple[dict[str, str], int]:
    """aider's apply of a reply to files in memory: the files after it and
    how many of its blocks applied."""
    current = dict(files)
    try:
        edits = [e for e in find_original_update_blocks(reply, DEFAULT_FENCE, list(files)) if e[0] is not None]
    except ValueError:
        return current, 0
    applied = 0
    for path, original, updated in edits:
        new = None
        if path in current:
            new = do_replace(path, current[path], original, updated, DEFAULT_FENCE)
        if not new and original.strip():
            for other in current:
                new = do_replace(other, current[other], original, updated, DEFAULT_FENCE)
                if new:
                    path = other
                    break
        if new:
            current[path] = new
            applied += 1
    return current, applied


def clada_apply(reply: str, files: dict[str, str]) -> tuple[dict[str, bytes], dict[str, Any]]:
    return clada.apply_files(reply, files, dialect="aider")


def statuses(report: dict[str, Any]) -> list[str]:
    return [t["status"] for b in report.get("blocks", []) for t in b.get("tasks", [])]


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of `run` (this process and its children)."""
    def cpu() -> float:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    w, c = time.perf_counter(), cpu()
    run()
    return time.perf_counter() - w, cpu() - c


def main() -> None:
    cases = [json.loads(line) for line in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines() if line]
    binary = Path(sys.argv[2]).resolve()
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    scratch = Path(tempfile.mkdtemp(prefix="clada-aider-bench."))
    # aider's do_replace looks at the disk for the file it is given (and
    # makes an empty one for a block with an empty SEARCH): here it finds
    # nothing, as for a file held in memory.
    os.chdir(scratch)
    pairs = [(c["reply"], c["files"]) for c in cases]
    edits = sum(
        1 for r, f in pairs for e in find_original_update_blocks(r, DEFAULT_FENCE, list(f)) if e[0] is not None
    )

    reference = [statuses(clada_apply(r, f)[1]) for r, f in pairs]
    clada_ok = sum(s.count("success") for s in reference)
    aider_ok = sum(aider_apply(r, f)[1] for r, f in pairs)
    same_files = sum(
        {p: c.decode() for p, c in clada_apply(r, f)[0].items()} == aider_apply(r, f)[0] for r, f in pairs
    )

    def in_process(apply: Callable[[str, dict[str, str]], object]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(PASSES):
                for r, f in pairs:
                    apply(r, f)

        return run

    times: dict[str, list[tuple[float, float]]] = {"clada": [], "aider": [], "cli": []}
    for n in range(rounds):
        w, c = timed(in_process(clada_apply))
        times["clada"].append((w / PASSES, c / PASSES))
        w, c = timed(in_process(aider_apply))
        times["aider"].append((w / PASSES, c / PASSES))

        dirs = []
        for i, (reply, files) in enumerate(pairs):
            d = scratch / f"{n}-{i}"
            for p, content in files.items():
                (d / "root" / p).parent.mkdir(parents=True, exist_ok=True)
                (d / "root" / p).write_text(content, encoding="utf-8")
            (d / "root").mkdir(parents=True, exist_ok=True)
            (d / "reply.md").write_text(reply, encoding="utf-8")
            dirs.append(d)
        outputs: list[bytes] = []

        def spawn() -> None:
            for d in dirs:
                out = subprocess.run(
                    [binary, "apply", "--dialect", "aider", "--no-git", "--format", "json", "-C", d / "root", d / "reply.md"],
                    capture_output=True,
                    env={**os.environ, "HOME": str(scratch)},
                )
                outputs.append(out.stdout)

        times["cli"].append(timed(spawn))
        if n == 0:
            for i, out in enumerate(outputs):
                assert statuses(json.loads(out)) == reference[i], f"reply {i}: the CLI and apply_files differ"

    k = len(pairs)
    print(f"{k} aider replies, {edits} blocks (corpus/aider-history), median of {rounds} rounds, one core")
    print(f"applied: clada {clada_ok} blocks, aider {aider_ok}; the same files after {same_files} of {k} replies")
    med = {
        name: (statistics.median(w for w, _ in t) / k, statistics.median(c for _, c in t) / k)
        for name, t in times.items()
    }
    labels = {
        "clada": "clada.apply_files, in memory",
        "aider": "aider's parser + do_replace",
        "cli": "clada CLI, a process per reply",
    }
    print(f"{'':34} {'wall/reply':>11} {'replies/s':>10} {'CPU/reply':>10} {'replies/CPU-s':>14}")
    for name, (w, c) in med.items():
        print(f"{labels[name]:34} {w * 1e3:8.3f} ms {1 / w:10.0f} {c * 1e3:7.3f} ms {1 / c:14.0f}")
    cw, cc = med["clada"]
    for name in ("aider", "cli"):
        w, c = med[name]
        print(f"clada in memory is {w / cw:.1f}x {labels[name]} (wall), {c / cc:.1f}x (CPU)")


if __name__ == "__main__":
    main()
