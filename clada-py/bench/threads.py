#!/usr/bin/env python3
"""`clada.apply_files` from 1 and 2 threads (and as many as asked): the
interpreter's lock is released while clada works, so threads apply at once.
Each call applies 200 SEARCH edits to one file of 20,000 lines held in
memory, or, given a JSON Lines file of replies (`gen aider-replies`: the
real aider replies with their files), one reply after another. Prints
calls per second for each thread count and the speed-up over one thread;
asserts nothing. Run by hand (figures in benches/README.md):

    python3.11 -m venv /tmp/clada-venv && . /tmp/clada-venv/bin/activate
    pip install ./clada-py        # an optimised build
    python clada-py/bench/threads.py [CALLS] [MAX_THREADS] [REPLIES.jsonl]
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time

import clada

LINES = 20_000
EDITS = 200


Work = list[tuple[str, dict[str, str], str]]


def replies(path: str) -> Work:
    """The records of a JSON Lines file: reply, files, dialect."""
    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    return [(r["reply"], r["files"], r.get("dialect", "auto")) for r in records]


def work() -> Work:
    text = "".join(f"line {i}\n" for i in range(LINES))
    step = LINES // EDITS
    doc = "".join(
        f'<<<<<<< SEARCH path="big.txt"\nline {i}\n=======\nLINE {i}\n>>>>>>> REPLACE\n'
        for i in range(0, LINES, step)
    )
    return [(doc, {"big.txt": text}, "clada")]


def rate(threads: int, calls: int, items: Work) -> float:
    per = calls // threads

    def run() -> None:
        for doc, files, dialect in itertools.islice(itertools.cycle(items), per):
            clada.apply_files(doc, files, dialect=dialect)  # type: ignore[arg-type]

    pool = [threading.Thread(target=run) for _ in range(threads)]
    start = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return per * threads / (time.perf_counter() - start)


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    most = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    items = replies(sys.argv[3]) if len(sys.argv) > 3 else work()
    rate(1, 4, items)  # warm up
    one = 0.0
    for n in range(1, most + 1):
        r = rate(n, calls, items)
        one = one or r
        print(f"{n} thread(s): {r:8.1f} calls/s  ({r / one:.2f}x one thread)")


if __name__ == "__main__":
    main()
