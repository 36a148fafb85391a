#!/usr/bin/env python3
"""Applies a JSON Lines dataset of replies with Ray Data: each input line
is a record `{"files": {path: content}, "reply": str, "dialect"?: str}`,
each output line `{"report": ..., "files_after": {path: content}}` (the
in-memory apply, `clada.apply_files`), in the order of the input.

The same command runs on a laptop and on a cluster: `ray.init()` starts a
local Ray, or joins the cluster that RAY_ADDRESS names.

    pip install -r examples/batch/requirements.txt ./clada-py
    python examples/batch/apply.py replies.jsonl results.jsonl

A record that is not such an object, or whose paths the apply refuses
(`clada.CladaError`), gives `{"error": {"type": ..., "message": ...}}` in
its place; the run goes on. Prints the count and the rate to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from typing import Any

import clada
import numpy as np

DIALECTS = ("auto", "clada", "aider", "codex", "cml", "udiff", "cline")


def apply_record(line: str, match: str = "whitespace") -> dict[str, Any]:
    """One input line to its output record."""
    try:
        record = json.loads(line)
        if not isinstance(record, dict):
            raise ValueError("a record is a JSON object")
        files, reply = record.get("files", {}), record.get("reply")
        dialect = record.get("dialect", "auto")
        if not isinstance(reply, str):
            raise ValueError('"reply" is a string: the reply to apply')
        if not isinstance(files, dict) or not all(isinstance(c, str) for c in files.values()):
            raise ValueError('"files" is an object of paths to their text')
        if dialect not in DIALECTS:
            raise ValueError(f'"dialect" is one of {", ".join(DIALECTS)}, not {dialect!r}')
        after, report = clada.apply_files(reply, files, dialect=dialect, match=match)  # type: ignore[arg-type]
        return {
            "report": report,
            "files_after": {p: c.decode("utf-8") for p, c in after.items()},
        }
    except clada.CladaError as e:
        return {"error": {"type": e.type, "message": str(e)}}
    except (ValueError, UnicodeDecodeError) as e:
        # json.JSONDecodeError is a ValueError.
        return {"error": {"type": "invalid_record", "message": str(e)}}


def apply_batch(batch: dict[str, np.ndarray], match: str) -> dict[str, np.ndarray]:
    """A batch of input lines (Ray Data's `text` column) to output lines."""
    out = [json.dumps(apply_record(line, match), ensure_ascii=False) for line in batch["text"]]
    return {"line": np.array(out, dtype=object)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="JSON Lines: one {files, reply, dialect?} per line")
    parser.add_argument("output", help="JSON Lines written: one {report, files_after} per input line")
    parser.add_argument("--match", choices=("whitespace", "exact"), default="whitespace")
    parser.add_argument("--workers", type=int, default=None, help="most tasks applying at once (default: every CPU)")
    parser.add_argument("--batch-size", type=int, default=256, help="records per call of the apply (default 256)")
    parser.add_argument("--blocks", type=int, default=None, help="blocks the input is read into (default: Ray's choice)")
    parser.add_argument("--stats", action="store_true", help="print Ray Data's statistics of the run to stderr")
    args = parser.parse_args()

    import ray

    ray.init(logging_level="warning", log_to_driver=False)
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False

    start = time.perf_counter()
    ds = ray.data.read_text(args.input, drop_empty_lines=True, override_num_blocks=args.blocks)
    ds = ds.map_batches(
        apply_batch,
        fn_kwargs={"match": args.match},
        batch_size=args.batch_size,
        batch_format="numpy",
        compute=ray.data.TaskPoolStrategy(size=args.workers),
    )
    count = 0
    with open(args.output, "w", encoding="utf-8") as out:
        for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
            for line in batch["line"]:
                out.write(line)
                out.write("\n")
                count += 1
    took = time.perf_counter() - start
    print(f"{count} records in {took:.2f} s: {count / took:.0f} records/s", file=sys.stderr)
    if args.stats:
        print(ds.stats(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
