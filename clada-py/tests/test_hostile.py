"""Hostile documents through the Python API: nothing is written outside the
root, no unapproved command runs, escapes are refused. The attack corpus
(corpus/security/, format in its README) runs here as it runs through the
command line, with the same promises checked."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

import clada
from support import REPO, git, tree

HOSTILE = """Sure, here are the changes.

<<<<<<< WRITE path="../outside/escaped.txt"
climbed out
>>>>>>> END
<<<<<<< WRITE path="{OUTSIDE}/absolute.txt"
absolute
>>>>>>> END
<<<<<<< WRITE path="link/through-link.txt"
through a link
>>>>>>> END
<<<<<<< MOVE from="inside.txt" to="../outside/"
>>>>>>> END
<<<<<<< RUN
touch ../outside/ran; echo pwned > ../outside/ran2
>>>>>>> END
<<<<<<< RUN
sh -c 'touch {OUTSIDE}/ran3'
>>>>>>> END
<<<<<<< RUN
cp inside.txt ../outside/copied.txt
>>>>>>> END
<<<<<<< WRITE path=".git/hooks/pre-commit"
#!/bin/sh
touch {OUTSIDE}/hook
>>>>>>> END
<<<<<<< WRITE path="fine.txt"
the only change that may happen
>>>>>>> END
"""


def test_a_hostile_document_changes_nothing_outside_and_runs_nothing(root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    outside = root.parent / "outside"
    (root / "inside.txt").write_text("inside\n")
    os.symlink(outside, root / "link")
    git(root, "init", "-q")
    before = tree(root)
    document = HOSTILE.replace("{OUTSIDE}", str(outside))

    for dry_run in (True, False):
        report = clada.apply(document, root, dry_run=dry_run, git=True)
        assert list(outside.iterdir()) == [], "the canary directory was written"
        assert not report["ok"]

    assert tree(root) == {**before, "fine.txt": "the only change that may happen\n"}
    assert not (root / ".git/hooks/pre-commit").exists()
    outcomes = {
        t["number"]: (t["status"], (t.get("error") or {}).get("type"))
        for b in report["blocks"]
        for t in b["tasks"]
    }
    problems = {d.get("task"): d["code"] for d in report["diagnostics"] if d["severity"] == "error"}
    # The escapes are refused before anything runs (malformed units)...
    assert problems[1] == "path_escape" and problems[2] == "path_escape"
    assert problems[4] == "path_escape" and problems[8] == "path_escape"
    # ...the link and the commands when they are reached.
    assert outcomes[3] == ("failed", "symlink_not_allowed")
    assert outcomes[5] == ("failed", "command_not_allowed")
    assert outcomes[6] == ("failed", "command_not_allowed")
    assert outcomes[7] == ("failed", "path_escape")
    assert outcomes[9] == ("success", None)
    printed = capfd.readouterr()
    assert "pwned" not in printed.out + printed.err


# The attack corpus. Flags of `clada apply` that the Python API has no
# argument for mark a case as one for the command line only.
FLAGS: dict[str, dict[str, Any]] = {
    "--dry-run": {"dry_run": True},
    "--atomic": {"atomic": "unit"},
    "--atomic=document": {"atomic": "document"},
}
CASES = sorted(p for p in (REPO / "corpus/security").iterdir() if (p / "expect").exists())


def read_case(text: str) -> dict[str, Any]:
    case: dict[str, Any] = {"tasks": {}, "flags": [], "files": [], "dirs": [], "links": [], "config": []}
    case.update(repo=False, home_is_root=False, exit=None, absent=[], present=[])
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word == "exit":
            case["exit"] = int(rest)
        elif word == "task":
            number, _, want = rest.partition(" ")
            case["tasks"][int(number)] = want
        elif word in ("file", "link", "config"):
            case[word + "s" if word != "config" else word].append(tuple(rest.split(" ", 1)))
        elif word in ("flag", "dir", "absent", "present"):
            case[{"flag": "flags", "dir": "dirs"}.get(word, word)].append(rest)
        elif word == "repo":
            case["repo"] = True
        elif word == "home-is-root":
            case["home_is_root"] = True
        else:
            raise AssertionError(f"expect line {n}: cannot read {raw!r} (see corpus/security/README.md)")
    return case


@pytest.mark.parametrize("case_dir", CASES, ids=[p.name for p in CASES])
def test_no_attack_document_writes_runs_reads_or_approves_anything(
    case_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    case = read_case((case_dir / "expect").read_text())
    arguments: dict[str, Any] = {}
    for flag in case["flags"]:
        if flag not in FLAGS:
            pytest.skip(f"{flag} has no argument in the Python API")
        arguments.update(FLAGS[flag])
    root, outside, secret = tmp_path / "root", tmp_path / "outside", tmp_path / "secret.txt"
    fill = lambda text: text.replace("{ROOT}", str(root)).replace("{OUTSIDE}", str(outside)).replace("{SECRET}", str(secret))  # noqa: E731
    token = f"SECRET-{os.getpid() * 7919 + 104729:x}"
    root.mkdir()
    outside.mkdir()
    secret.write_text(token + "\n")
    if case["repo"]:
        git(root, "init", "-q")
    for d in case["dirs"]:
        (root / d).mkdir(parents=True, exist_ok=True)
    for path, content in case["files"]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(fill(content).replace("\\n", "\n"))
    for path, target in case["links"]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(fill(target), root / path)
    if case["repo"]:
        # One commit of everything, hooks off; the case's configuration
        # only afterwards, so that none of it runs here.
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", "initial")
        for key, value in case["config"]:
            git(root, "config", "--file", ".git/config", key, fill(value))
    home = root if case["home_is_root"] else tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    if case["home_is_root"]:
        monkeypatch.delenv("XDG_CONFIG_HOME")
        monkeypatch.delenv("XDG_STATE_HOME")
        approvals = home / ".config/clada/approvals.json"
    else:
        monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
        monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
        approvals = home / "config/clada/approvals.json"
    approvals_before = approvals.read_bytes() if approvals.exists() else None

    document = fill((case_dir / "doc.md").read_text())
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            report = clada.apply(document, root, git="t <t@example.com>", **arguments)
            exit_code = 0 if report["ok"] else 1
        except clada.CladaError as e:
            # A run refused as a whole: the command line's exit 1, with the report.
            assert e.report is not None, e
            report, exit_code = e.report, 1

    printed = capfd.readouterr()
    said = "".join(str(w.message) for w in warned)
    problems = []
    if token in json.dumps(report) + printed.out + printed.err + said:
        problems.append("the secret was printed")
    if list(outside.iterdir()):
        problems.append(f"the canary directory was written: {sorted(p.name for p in outside.iterdir())}")
    if secret.read_text() != token + "\n":
        problems.append("the secret file was changed")
    if (approvals.read_bytes() if approvals.exists() else None) != approvals_before:
        problems.append("an approval was stored")
    if case["exit"] is not None and exit_code != case["exit"]:
        problems.append(f"exit {exit_code}, expected {case['exit']}")
    outcomes = {}
    for block in report["blocks"]:
        for t in block["tasks"]:
            error = t.get("error") or {}
            if t["status"] == "failed" and error.get("type"):
                outcomes[t["number"]] = f"failed {error['type']}"
            elif t.get("rolled_back"):
                outcomes[t["number"]] = "rolled-back"
            else:
                outcomes[t["number"]] = t["status"]
    for number, want in case["tasks"].items():
        got = outcomes.get(number, "missing")
        if not (got.startswith("failed") if want == "failed *" else got == want):
            problems.append(f"task {number}: {got}, expected {want}")
    problems += [f"{p} exists" for p in case["absent"] if os.path.lexists(root / p)]
    problems += [f"{p} is missing" for p in case["present"] if not os.path.lexists(root / p)]
    assert problems == [], json.dumps(report)[:2000]
