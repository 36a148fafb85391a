#!/usr/bin/env python3
"""`clada.apply_files` from 1 and 2 threads (and as many as asked): the
interpreter's lock is released while clada works, so threads apply at once.
Each call applies 200 SEARCH edits to one file of 20,000 lines held in
memory. Prints calls per second for each thread count and the speed-up
over one thread; asserts nothing. Run by hand (figures in
benches/README.md):

    python3.11 -m venv /tmp/clada-venv && . /tmp/clada-venv/bin/activate
    pip install ./clada-py        # an optimised build
    python clada-py/bench/threads.py [CALLS] [MAX_THREADS]
"""

from __future__ import annotations

import sys
import threading
import time

import clada

LINES = 20_000
EDITS = 200


def work() -> tuple[str, dict[str, bytes]]:
    text = "".join(f"line {i}\n" for i in range(LINES))
    step = LINES // EDITS
    doc = "".join(
        f'<<<<<<< SEARCH path="big.txt"\nline {i}\n=======\nLINE {i}\n>>>>>>> REPLACE\n'
        for i in range(0, LINES, step)
    )
    return doc, {"big.txt": text.encode()}


def rate(threads: int, calls: int, doc: str, files: dict[str, bytes]) -> float:
    per = calls // threads

    def run() -> None:
        for _ in range(per):
            _, report = clada.apply_files(doc, files)
            assert report["ok"]

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
    doc, files = work()
    rate(1, 4, doc, files)  # warm up
    one = 0.0
    for n in range(1, most + 1):
        r = rate(n, calls, doc, files)
        one = one or r
        print(f"{n} thread(s): {r:8.1f} calls/s  ({r / one:.2f}x one thread)")


if __name__ == "__main__":
    main()
