"""examples/batch/apply.py, the batch apply on Ray Data: run with a local
Ray of two workers on a dataset made from the corpus (and a few records it
must refuse one by one), every output record is what `clada.apply_files`
gives in a loop in this process, in the order of the input.

Skipped where Ray is not installed, unless CLADA_REQUIRE_RAY is set (as
.ci/run sets it, having installed examples/batch/requirements.txt)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import clada
from support import REPO

BATCH = REPO / "examples/batch"

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None and not os.environ.get("CLADA_REQUIRE_RAY"),
    reason="Ray is not installed (pip install -r examples/batch/requirements.txt)",
)

# Records the batch refuses one by one, each in its place.
HOSTILE = [
    "not json",
    json.dumps(["a list"]),
    json.dumps({"files": {}, "reply": 7}),
    json.dumps({"files": {"a.txt": 1}, "reply": ""}),
    json.dumps({"files": ["a.txt"], "reply": ""}),
    json.dumps({"files": {}, "reply": "", "dialect": "gnu"}),
    json.dumps({"files": {"../outside.txt": "x\n"}, "reply": ""}),
    json.dumps({"files": {"/etc/passwd": "x\n"}, "reply": ""}),
]


def timeless(value: Any) -> Any:
    """A report without its times (`duration_ms`), which differ run by run."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def expected(line: str) -> dict[str, Any]:
    """The single-process result of one input line."""
    try:
        record = json.loads(line)
    except ValueError:
        return {"error": {"type": "invalid_record"}}
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("reply"), str)
        or not isinstance(record.get("files", {}), dict)
        or not all(isinstance(c, str) for c in record.get("files", {}).values())
        or record.get("dialect", "auto") not in ("auto", "clada", "aider", "codex", "cml", "udiff", "cline")
    ):
        return {"error": {"type": "invalid_record"}}
    try:
        after, report = clada.apply_files(record["reply"], record["files"], dialect=record.get("dialect", "auto"))
    except clada.CladaError as e:
        return {"error": {"type": e.type}}
    return json.loads(json.dumps({"report": report, "files_after": {p: c.decode() for p, c in after.items()}}))


@needs_ray
def test_every_record_is_the_single_process_result(tmp_path: Path) -> None:
    dataset, results = tmp_path / "replies.jsonl", tmp_path / "results.jsonl"
    subprocess.run([sys.executable, BATCH / "make_dataset.py", REPO / "corpus/apply", dataset], check=True)
    lines = dataset.read_text(encoding="utf-8").splitlines()
    assert len(lines) > 400
    # The refused records among the others, not only at an end.
    for i, bad in enumerate(HOSTILE):
        lines.insert(37 * (i + 1), bad)
    dataset.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    run = subprocess.run(
        [sys.executable, BATCH / "apply.py", dataset, results, "--workers", "2", "--blocks", "6", "--batch-size", "32"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert f"{len(lines)} records in" in run.stderr

    out = results.read_text(encoding="utf-8").splitlines()
    assert len(out) == len(lines)
    refused = 0
    for n, (line, got) in enumerate(zip(lines, out, strict=True), 1):
        record, want = json.loads(got), expected(line)
        if "error" in want:
            refused += 1
            assert record["error"]["type"] == want["error"]["type"], f"line {n}"
            assert record["error"]["message"], f"line {n}"
        else:
            assert timeless(record) == timeless(want), f"line {n}: {line[:200]}"
    assert refused >= len(HOSTILE)
