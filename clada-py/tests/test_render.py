"""`clada.render`: the text report of a run, what the command line prints
and the MCP server returns, for the reports `apply` and `check` return."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import clada

DOC = (
    '<<<<<<< WRITE path="greeting.txt"\nHello\n>>>>>>> END\n'
    '<<<<<<< SEARCH path="app.py"\nprint("helo")\n=======\nprint("hello")\n>>>>>>> REPLACE\n'
)


def test_the_text_of_an_apply_is_what_clada_apply_prints(root: Path, cli: Path, tmp_path: Path) -> None:
    (root / "app.py").write_text('print("hallo")\n')
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    report = clada.apply(DOC, root, atomic="unit")
    printed = subprocess.run(
        [cli, "apply", "--no-git", "--no-prompt", "--output-mode", "buffer", "--atomic=unit", "-C", twin, "-"],
        input=DOC,
        capture_output=True,
        text=True,
    )
    assert printed.returncode == 1, printed.stderr
    text = clada.render(report)
    assert text == printed.stdout
    assert "[task-2] ✗ Error: match_count_mismatch in app.py" in text
    assert text.endswith("Resend:\n  task 1: applied, never send again\n  task 2: failed, fix and send again\n")


def test_the_text_of_a_check_is_what_clada_check_prints(cli: Path) -> None:
    doc = '<<<<<<< WRITE path="a.txt"\nno closer\n'
    report = clada.check(doc)
    printed = subprocess.run([cli, "check", "-"], input=doc, capture_output=True, text=True)
    assert printed.returncode == 1
    # The command line names standard input; the text of a call, the document.
    assert clada.render(report) == printed.stdout.replace("<stdin>", "<document>")
    assert "[unclosed_opener] Error" in clada.render(report)


def test_a_document_in_another_dialect_is_named_first(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    udiff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n"
    assert clada.render(clada.check(udiff)).startswith("Dialect: udiff\n")
    assert clada.render(clada.apply(udiff, root)).startswith("Dialect: udiff\n\n")


def test_a_document_that_is_not_utf8_has_a_text_too(root: Path) -> None:
    for report in (clada.check(b"ok\n\xff\n"), clada.apply(b"ok\n\xff\n", root)):
        assert "UTF-8" in clada.render(report)


def test_the_text_is_beside_the_report_not_in_it(root: Path) -> None:
    report = clada.apply(DOC, root, atomic="unit")
    assert isinstance(report, dict)
    # JSON and equality see the report of `--format json` alone.
    assert json.loads(json.dumps(report)) == report
    assert "text" not in report
    assert clada.render(copy.deepcopy(report)) == clada.render(report)
    for rebuilt in (dict(report), json.loads(json.dumps(report))):
        with pytest.raises(TypeError, match="returned"):
            clada.render(rebuilt)
