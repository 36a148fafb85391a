#!/usr/bin/env python3
"""Records per second of apply.py on this machine: the same dataset run
with 1 and 2 workers (and as many as asked), each a fresh local Ray, and
the plain loop in one process without Ray (`apply_record` line by line:
the rate one core gives, the ceiling a worker approaches). The time
apply.py reports is that of the pipeline, from reading the input to the
last record written, without Ray's start; beside it, the records per
CPU-second of the apply in the workers, from Ray Data's statistics.
Asserts nothing. Figures in
benches/README.md:

    cargo run --release -q -p clada-benches --bin gen aider-replies 200 /tmp/aider-replies.jsonl
    python examples/batch/bench.py /tmp/aider-replies.jsonl [MAX_WORKERS]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from apply import apply_record  # noqa: E402


def main() -> None:
    dataset = Path(sys.argv[1])
    most = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    lines = [line for line in dataset.read_text(encoding="utf-8").splitlines() if line]
    size = dataset.stat().st_size
    print(f"{len(lines)} records, {size / 1e6:.1f} MB ({size / len(lines) / 1e3:.1f} kB a record), {os.cpu_count()} CPUs")

    start, cpu = time.perf_counter(), time.process_time()
    for line in lines:
        apply_record(line)
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"one process, no Ray:  {len(lines) / took:8.0f} records/s  ({len(lines) / cpu:8.0f} records per CPU-second)")

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    with tempfile.TemporaryDirectory() as scratch:
        for workers in range(1, most + 1):
            run = subprocess.run(
                [sys.executable, Path(__file__).parent / "apply.py", dataset, Path(scratch) / "out.jsonl"]
                + ["--workers", str(workers), "--blocks", str(4 * most), "--stats"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            rate = re.search(r"(\d+) records/s", run.stderr)
            # The apply's own CPU time in the workers (Ray Data's statistics
            # of the map_batches operator): the records a core applies in a
            # second once Ray's start-up and scheduling are left out.
            stage = re.search(r"Operator \d+ MapBatches\(apply_batch\)", run.stderr)
            apply_stats = run.stderr[stage.start() :] if stage else ""
            cpu = re.search(r"Remote cpu time:.*?([\d.]+)(us|ms|s) total", apply_stats)
            seconds = float(cpu.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[cpu.group(2)] if cpu else 0.0
            per_cpu = f"{len(lines) / seconds:8.0f}" if seconds else "       ?"
            print(
                f"Ray, {workers} worker(s):   {int(rate.group(1)) if rate else 0:8d} records/s"
                f"  (the apply in the workers: {per_cpu} records per CPU-second)"
            )


if __name__ == "__main__":
    main()
