"""The interpreter's lock is released while clada works: other Python
threads go on during a long call."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import clada


def progress_during(call: object) -> tuple[float, float, list[float]]:
    """Runs `call` while another thread notes the time as it counts; returns
    when the call started and ended, and the times the thread noted."""
    noted: list[float] = []
    stop = threading.Event()

    def count() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            if n % 1000 == 0:
                noted.append(time.monotonic())

    thread = threading.Thread(target=count)
    thread.start()
    time.sleep(0.05)
    try:
        start = time.monotonic()
        call()  # type: ignore[operator]
        end = time.monotonic()
    finally:
        stop.set()
        thread.join()
    return start, end, noted


def test_another_thread_runs_while_a_document_applies(root: Path) -> None:
    # A command that takes a second: with the lock held, the counting
    # thread could not note a single time inside the call (it runs only
    # between the interpreter's switches, none of which happen in Rust).
    doc = "<<<<<<< RUN\nsleep 1\n>>>>>>> END\n"
    start, end, noted = progress_during(lambda: clada.apply(doc, root, allow=["sleep 1"]))
    assert end - start >= 0.9
    inside = [t for t in noted if start + 0.2 < t < end - 0.2]
    assert len(inside) >= 10, f"{len(inside)} notes in the middle of a {end - start:.2f} s call"


def large(tasks: int) -> str:
    return "".join(f'<<<<<<< WRITE path="f{i}.txt"\nline {i}\n>>>>>>> END\n' for i in range(tasks))


LARGE = large(30_000)


def progress_during_long(call: object) -> tuple[float, float, list[float]]:
    """`progress_during` of `call` given a document of 30,000 WRITEs, or of
    four and sixteen times as many when that is too quick to tell (an
    optimised build)."""
    for tasks in (30_000, 120_000, 480_000):
        doc = LARGE if tasks == 30_000 else large(tasks)
        start, end, noted = progress_during(lambda: call(doc))  # type: ignore[operator]
        if end - start >= 0.3:
            break
    return start, end, noted


def test_another_thread_runs_while_a_large_document_is_checked() -> None:
    # 30,000 tasks: long enough to see the other thread during the check.
    # The report is made into Python objects after it, holding the lock:
    # only the first third of the call, the check itself, counts.
    start, end, noted = progress_during_long(clada.check)
    assert end - start >= 0.3, "too quick to tell"
    inside = [t for t in noted if start + 0.05 < t < start + (end - start) / 3]
    assert len(inside) >= 5, f"{len(inside)} notes in the first third of a {end - start:.2f} s call"


def test_another_thread_runs_while_a_large_document_is_converted() -> None:
    start, end, noted = progress_during_long(lambda doc: clada.convert(doc, "codex"))
    assert end - start >= 0.3, "too quick to tell"
    inside = [t for t in noted if start + 0.05 < t < end - 0.05]
    assert len(inside) >= 5, f"{len(inside)} notes in the middle of a {end - start:.2f} s call"


def test_another_thread_runs_while_files_in_memory_are_applied() -> None:
    # The same 30,000 WRITEs applied to files in memory: the files and the
    # report are made into Python objects after the apply, under the lock;
    # only the first third of the call counts.
    start, end, noted = progress_during_long(lambda doc: clada.apply_files(doc, {}))
    assert end - start >= 0.3, "too quick to tell"
    inside = [t for t in noted if start + 0.05 < t < start + (end - start) / 3]
    assert len(inside) >= 5, f"{len(inside)} notes in the first third of a {end - start:.2f} s call"
