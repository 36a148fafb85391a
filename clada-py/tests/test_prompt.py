"""The examples of `clada.prompt()` through the Python API: each checks
clean, and applied together they do what the prompt says, with a resend
list that never applies an edit twice."""

from __future__ import annotations

from pathlib import Path

import pytest

import clada
from support import prompt_examples, prompt_project, tree

EXAMPLES = prompt_examples()


def test_the_prompt_is_the_command_lines(cli: Path) -> None:
    import subprocess

    printed = subprocess.run([cli, "prompt"], check=True, capture_output=True, text=True).stdout
    assert clada.prompt() == printed
    assert len(EXAMPLES) >= 8, EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{i + 1}" for i in range(len(EXAMPLES))])
def test_every_example_of_the_prompt_checks_clean(example: str) -> None:
    report = clada.check(example)
    assert report["ok"], report
    assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0, report
    assert report["summary"]["tasks"] > 0, report


def test_the_examples_apply_and_the_resend_advice_never_applies_twice(root: Path) -> None:
    prompt_project(root)
    document = "".join(EXAMPLES)

    first = clada.apply(document, root)
    assert not first["ok"]
    resend = first["resend"]
    assert len(resend["failed"]) == 1, resend
    every = [n for numbers in resend.values() for n in numbers]
    assert sorted(every) == list(range(1, first["summary"]["tasks"] + 1)), "each task in one list"
    assert (root / "src/greeting.txt").read_text() == "Hello, world!\n"
    assert (root / "src/app.py").read_text().count("from util import double") == 1
    assert not (root / "build/tmp").exists()
    after_first = tree(root)

    # The resend document: the failed and skipped tasks, cut out of the
    # reply by their offsets.
    again = "".join(
        document[t["start"]["offset"] : t["end"]["offset"]] + "\n"
        for b in first["blocks"]
        for t in b["tasks"]
        if t["number"] in resend["failed"] + resend["skipped"]
    )
    assert "<<<<<<< HEAD" in again
    second = clada.apply(again, root)
    assert second["summary"]["succeeded"] == 0, second
    assert tree(root) == after_first, "the resend changed nothing twice"

    # The whole reply again (what the advice forbids) is caught where it
    # can be: the first edit's text is gone and its replacement stands.
    whole = clada.apply(document, root)
    assert whole["blocks"][1]["tasks"][0]["error"]["type"] == "already_applied"
