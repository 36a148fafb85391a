"""`clada.apply`'s switches: dry runs, atomic units, git, matching, time
limits and approvals for one call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import clada
from support import git, tree

EDIT = '<<<<<<< SEARCH path="a.txt"\none\n=======\nONE\n>>>>>>> REPLACE\n'
FAILING_UNIT = (
    '<<<<<<< TASKS\n<<<<<<< WRITE path="new.txt"\nnew\n>>>>>>> END\n'
    '<<<<<<< SEARCH path="a.txt"\nnot in the file\n=======\nx\n>>>>>>> REPLACE\n>>>>>>> TASKS\n'
)


@pytest.fixture
def project(root: Path) -> Path:
    (root / "a.txt").write_text("one\ntwo\n")
    return root


def test_a_dry_run_writes_nothing_and_says_what_would_change(project: Path) -> None:
    before = tree(project)
    report = clada.apply(EDIT + '<<<<<<< WRITE path="b.txt"\nb\n>>>>>>> END\n', project, dry_run=True)
    assert tree(project) == before
    assert report["ok"] and report["dry_run"] is True
    changes = {c["path"]: c for c in report["changes"]}
    assert changes["a.txt"]["change"] == "modified"
    assert "-one\n+ONE\n" in changes["a.txt"]["diff"]
    assert changes["b.txt"]["change"] == "created"
    # What the real run's resend lists would be.
    assert report["resend"]["applied"] == [1, 2]


def test_a_real_run_says_what_it_changed(project: Path) -> None:
    report = clada.apply(EDIT + '<<<<<<< WRITE path="b.txt"\nb\n>>>>>>> END\n', project)
    assert report["ok"] and "dry_run" not in report
    changes = {c["path"]: c for c in report["changes"]}
    a, b = changes["a.txt"], changes["b.txt"]
    assert (a["change"], a["added"], a["removed"]) == ("modified", 1, 1)
    assert a["diff"] == "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
    assert (b["change"], b["added"], b["removed"]) == ("created", 1, 0)
    assert "omitted" not in a and "binary" not in a
    # The text report (clada apply's, without --diff) lists no diffs.
    assert "=== Changed ===" not in clada.render(report)


def test_what_a_rollback_undid_is_not_a_change(project: Path) -> None:
    report = clada.apply(FAILING_UNIT + EDIT, project, atomic="unit")
    assert [c["path"] for c in report["changes"]] == ["a.txt"]
    report = clada.apply(FAILING_UNIT, project, atomic="document")
    assert report["changes"] == []


def test_without_atomic_a_failed_unit_keeps_what_it_did(project: Path) -> None:
    report = clada.apply(FAILING_UNIT, project)
    assert not report["ok"]
    assert (project / "new.txt").read_text() == "new\n"
    assert report["resend"]["applied"] == [1]


@pytest.mark.parametrize("atomic", ["unit", True])
def test_an_atomic_unit_that_fails_leaves_no_trace(project: Path, atomic: str | bool) -> None:
    before = tree(project)
    report = clada.apply(FAILING_UNIT + EDIT, project, atomic=atomic)
    assert not report["ok"]
    first = report["blocks"][0]["tasks"][0]
    assert first["status"] == "success" and first["rolled_back"] is True
    assert report["summary"]["rolled_back"] == 1
    # The unit after it is its own: it applied.
    assert tree(project) == {**before, "a.txt": "ONE\ntwo\n"}
    assert report["resend"]["skipped"] == [1]


def test_atomic_document_is_all_or_nothing(project: Path) -> None:
    before = tree(project)
    report = clada.apply(EDIT + FAILING_UNIT, project, atomic="document")
    assert not report["ok"]
    assert tree(project) == before
    assert report["blocks"][0]["tasks"][0]["rolled_back"] is True


def test_git_commits_before_and_after_only_when_asked(project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    report = clada.apply(EDIT, project)
    assert report["git"]["after"] is None
    assert git(project, "rev-list", "--count", "HEAD").strip() == "1"

    # The git rule: only what the run changes, never an untracked secret.
    (project / ".env").write_text("API_KEY=sk-secret\n")
    (project / "c.txt").write_text("mine, uncommitted\n")
    git(project, "add", "c.txt")
    git(project, "commit", "-q", "-m", "c")
    (project / "c.txt").write_text("mine, uncommitted and changed\n")
    report = clada.apply('<<<<<<< WRITE path="c.txt"\nc\n>>>>>>> END\n', project, git="Ada <ada@example.com>")
    assert report["ok"], report
    assert report["git"]["before"] and report["git"]["after"]
    log = git(project, "log", "--format=%an <%ae>|%s").splitlines()
    assert [line.split("|")[0] for line in log[:2]] == ["Ada <ada@example.com>"] * 2
    assert log[0].split("|")[1] == "clada: write c.txt (1 task)"
    assert log[1].split("|")[1] == "clada: save uncommitted changes of c.txt before applying"
    assert ".env" not in git(project, "log", "--all", "--name-only", "--format=")
    # a.txt: the first run's edit, made without git, stays uncommitted.
    assert git(project, "status", "--porcelain").strip() == "M a.txt\n?? .env"


def test_exact_matching_refuses_a_search_indented_otherwise(project: Path) -> None:
    # "exact" never forgives indentation, the default does: this fails if
    # `match` stops reaching the library. The search is indented 4 spaces
    # deeper than the file.
    (project / "f.py").write_text("def f():\n  x = 1\n  y = 2\n")
    doc = '<<<<<<< SEARCH path="f.py"\n      x = 1\n      y = 2\n=======\n      x = 3\n      y = 4\n>>>>>>> REPLACE\n'
    report = clada.apply(doc, project, match="exact")
    assert report["blocks"][0]["tasks"][0]["error"]["type"] == "match_count_mismatch"
    assert (project / "f.py").read_text() == "def f():\n  x = 1\n  y = 2\n"

    report = clada.apply(doc, project)
    assert report["ok"], report
    assert (project / "f.py").read_text() == "def f():\n  x = 3\n  y = 4\n"


@pytest.mark.parametrize("timeout", [0.5, "0.5", "500ms", "0.5s"])
def test_a_command_past_the_timeout_is_killed_and_the_rest_skipped(project: Path, timeout: float | str) -> None:
    doc = "<<<<<<< TASKS\n<<<<<<< RUN\nsleep 5\n>>>>>>> END\n" '<<<<<<< WRITE path="late.txt"\nx\n>>>>>>> END\n>>>>>>> TASKS\n'
    report = clada.apply(doc, project, allow=["sleep 5"], timeout=timeout)
    tasks = report["blocks"][0]["tasks"]
    assert tasks[0]["error"]["type"] == "exec_timeout"
    assert tasks[0]["error"]["retryable"] is True
    assert tasks[1]["status"] == "skipped"
    assert report["duration_ms"] < 4000
    assert not (project / "late.txt").exists()


def test_commands_approved_for_one_call_run_in_that_call_only(project: Path, own_clada_dirs: Path) -> None:
    doc = "<<<<<<< RUN\necho approved | tr a-z A-Z\n>>>>>>> END\n"
    report = clada.apply(doc, project, allow=("  echo approved | tr a-z A-Z ",))
    assert report["ok"], report
    assert report["blocks"][0]["tasks"][0]["output"] == "APPROVED\n"

    again = clada.apply(doc, project)
    error = again["blocks"][0]["tasks"][0]["error"]
    assert error["type"] == "command_not_allowed"
    # Never written: clada's configuration directory has no approvals.
    assert not list(own_clada_dirs.rglob("approvals.json"))


def test_commands_approved_for_one_call_hold_at_the_root_only(project: Path) -> None:
    # As `clada allow` without `--dir`: the same line in a RUN whose `dir`
    # is below the root is refused, with the command that approves it there.
    (project / "sub").mkdir()
    line = "pwd | sed s,.*/,,"
    doc = f'<<<<<<< RUN dir="sub"\n{line}\n>>>>>>> END\n<<<<<<< RUN\n{line}\n>>>>>>> END\n'
    report = clada.apply(doc, project, allow=[line])
    in_sub, at_root = (b["tasks"][0] for b in report["blocks"])
    assert in_sub["error"]["type"] == "command_not_allowed"
    assert "approved at the root, not in `sub`" in in_sub["error"]["message"]
    assert f"--dir sub '{line}'" in in_sub["error"]["message"]
    assert at_root["status"] == "success" and at_root["output"] == f"{project.name}\n"


def test_an_approval_is_for_that_exact_command_line(project: Path) -> None:
    doc = "<<<<<<< RUN\necho approved; touch ../outside/pwned\n>>>>>>> END\n"
    report = clada.apply(doc, project, allow=["echo approved"])
    assert report["blocks"][0]["tasks"][0]["error"]["type"] == "command_not_allowed"
    assert not (project.parent / "outside/pwned").exists()


def test_commands_approved_with_clada_allow_run_too(project: Path, own_clada_dirs: Path) -> None:
    # The approvals file of `clada allow`, for this root (canonical path).
    config = own_clada_dirs / "config/clada"
    config.mkdir(parents=True)
    approvals = {"roots": {str(project.resolve()): {"commands": ["echo kept | cat"]}}}
    (config / "approvals.json").write_text(json.dumps(approvals))
    report = clada.apply("<<<<<<< RUN\necho kept | cat\n>>>>>>> END\n", project)
    assert report["ok"], report


def test_an_edit_applied_before_is_a_success_counted_on_its_own(project: Path) -> None:
    insert = '<<<<<<< SEARCH path="a.txt"\none\n=======\none\none and a half\n>>>>>>> REPLACE\n'
    assert clada.apply(insert, project)["ok"]
    again = clada.apply(insert, project)
    assert again["ok"], again
    assert again["blocks"][0]["tasks"][0]["status"] == "already_applied"
    assert again["summary"]["already_applied"] == 1 and again["summary"]["failed"] == 0
    assert again["resend"]["already_applied"] == [1]
    assert (project / "a.txt").read_text() == "one\none and a half\ntwo\n"


def test_an_edit_that_changes_nothing_is_a_warning_beside_good_edits(project: Path) -> None:
    same = '<<<<<<< SEARCH path="a.txt"\ntwo\n=======\ntwo\n>>>>>>> REPLACE\n'
    report = clada.apply(same + EDIT, project)
    assert report["ok"], report
    assert [d["kind"] for d in report["diagnostics"]] == ["unchanged_edit"]
    assert report["diagnostics"][0]["severity"] == "warning"
    assert (project / "a.txt").read_text() == "ONE\ntwo\n"


@pytest.mark.parametrize("document", ["Nothing to change here.\n", ""])
def test_a_reply_without_edits_is_an_error_unless_allowed(project: Path, document: str) -> None:
    report = clada.apply(document, project)
    assert not report["ok"]
    assert report["diagnostics"][0]["kind"] == "no_tasks"
    assert report["diagnostics"][0]["severity"] == "error"
    assert clada.apply(document, project, allow_empty=True)["ok"]


def test_a_path_passed_for_the_text_is_said(project: Path) -> None:
    (project / "reply.md").write_text(EDIT)
    for allow_empty in (False, True):
        with pytest.raises(clada.CladaError, match="did you pass a path"):
            clada.apply("reply.md", project, allow_empty=allow_empty)
    assert (project / "a.txt").read_text() == "one\ntwo\n"


def test_an_edit_no_task_came_of_has_a_place_in_resend(project: Path) -> None:
    reply = '<<<<<<<WRITE path="new.txt"\nnew\n>>>>>>> END\n' + EDIT
    report = clada.apply(reply, project)
    assert not report["ok"]
    assert report["resend"]["applied"] == [1]
    assert report["resend"]["failed"] == [
        {"line": 1, "first_line": '<<<<<<<WRITE path="new.txt"', "kind": "malformed_marker"}
    ]
