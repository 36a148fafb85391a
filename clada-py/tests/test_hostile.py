"""Hostile documents through the Python API: nothing is written outside the
root, no unapproved command runs, escapes are refused. The attack corpus
(corpus/security/, format in its README, read by corpus.py) runs here as it
runs through the command line, with the same promises checked; a case whose
run needs a flag the API deliberately lacks is skipped, saying which."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest

import clada
from corpus import (
    CASES,
    CORPUS,
    EXPECT_LINES,
    SET_UP_LINES,
    Case,
    Places,
    check_report,
    commits_holding,
    committed_temp_names,
    head,
    read_case,
    set_up,
    store_approvals,
    temp_names,
)
from support import clada_binary, git, tree

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


# The flags of `clada apply` in the corpus that the Python API has an
# argument for...
ARGUMENTS: dict[str, dict[str, Any]] = {
    "--dry-run": {"dry_run": True},
    "--atomic": {"atomic": "unit"},
    "--atomic=document": {"atomic": "document"},
}
# ...and those it deliberately has not, with why (a flag in neither list
# fails the case: decide which it is).
COMMAND_LINE_ONLY = {
    "--allow-any-command": "runs any command, sandboxed; the API runs built-in and approved commands only",
    "--sandbox": "the API has no sandbox switch",
    "--timeout": "a limit per command alone; the API's timeout= also bounds the run",
    "--lock-file": "names the lock; the API always takes the default one",
}
# Flags whose value is the next `flag` line.
TAKES_VALUE = {"--lock-file", "--dialect"}
# Flags that only say how commands run: nothing to a document without one.
FOR_COMMANDS = {"--allow-any-command", "--sandbox", "--timeout"}
AUTHOR = "t <t@example.com>"


def has_command(document: str) -> bool:
    return any(t["op"] == "run" for b in clada.check(document)["blocks"] for t in b.get("tasks") or [])


def python_arguments(flags: list[str], document: str) -> tuple[dict[str, Any], list[str]]:
    """The arguments of `clada.apply` for a run of `document` with `flags`,
    and the flags that run needs which only the command line has."""
    arguments: dict[str, Any] = {}
    missing = []
    for n, flag in enumerate(flags):
        name = flag.partition("=")[0]
        if flag == "--dialect" and n + 1 < len(flags):
            arguments["dialect"] = flags[n + 1]
        elif flag in ARGUMENTS:
            arguments.update(ARGUMENTS[flag])
        elif n and flags[n - 1] in TAKES_VALUE:
            continue
        elif name not in COMMAND_LINE_ONLY:
            raise AssertionError(f"flag {flag}: give it its argument in ARGUMENTS, or say in COMMAND_LINE_ONLY why the API has none")
        elif name not in FOR_COMMANDS or has_command(document):
            missing.append(f"{name} ({COMMAND_LINE_ONLY[name]})")
    return arguments, missing


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 without Landlock
    (landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION),
    syscall 444 on every architecture)."""
    return max(int(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1)), 0)


def documents(case_dir: Path, places: Places) -> list[str]:
    """The case's documents, one a run: `doc.md`, then `doc2.md` if any."""
    return [places.fill((case_dir / name).read_text()) for name in ("doc.md", "doc2.md") if (case_dir / name).exists()]


def environment(case: Case, places: Places, monkeypatch: pytest.MonkeyPatch) -> Path:
    """clada's directories for the case, as the command line's child gets
    them (the package reads the process's environment); the approvals
    file."""
    home = places.root if case.home_is_root else places.work / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(places.tmp))
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    if not case.no_runtime_dir:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(places.work / "run"))
    if case.home_is_root:
        return home / ".config/clada/approvals.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    return home / "config/clada/approvals.json"


def run_python(document: str, root: Path, arguments: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
    """`clada.apply`, as `clada apply --no-prompt --format json` with the
    case's flags would run: the exit code the command line would give, the report,
    and what was said besides (warnings, the exception)."""
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            report = clada.apply(document, root, git=AUTHOR, **arguments)
            exit_code, said = (0 if report["ok"] else 1), ""
        except clada.CladaError as e:
            # A run refused as a whole: the command line's exit 1, with the report.
            assert e.report is not None, e
            report, exit_code, said = e.report, 1, str(e)
    return exit_code, report, said + "".join(str(w.message) for w in warned)


def run_command_line(flags: list[str], places: Places, document: str) -> tuple[int, dict[str, Any], str]:
    """`clada apply` with the case's flags, as clada-cli/tests/security.rs
    runs it: the first of two runs when only the command line can make it
    (its command prepares the ground the second run, through Python, must
    not follow)."""
    path = places.work / "doc1.md"
    path.write_text(document)
    out = subprocess.run(
        [str(clada_binary()), "apply", "--no-prompt", "--format", "json", "--git-author", AUTHOR]
        + [places.fill(f) for f in flags]
        + ["-C", str(places.root), str(path)],
        capture_output=True,
    )
    said = (out.stdout + out.stderr).decode(errors="replace")
    try:
        report = json.loads(out.stdout)
    except ValueError:
        pytest.fail(f"the command line's first run printed no JSON report: {said}")
    return out.returncode, report, said


@pytest.mark.parametrize("case_dir", CASES, ids=[p.name for p in CASES])
def test_no_attack_document_writes_runs_reads_or_approves_anything(
    case_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    case = read_case((case_dir / "expect").read_text())
    if case.stream:
        pytest.skip("command line only: a stream (--stream), which the API does not read")
    places = Places(tmp_path)
    docs = documents(case_dir, places)
    plans = [python_arguments(case.flags, d) for d in docs]
    if plans[-1][1]:
        pytest.skip("command line only: " + "; ".join(plans[-1][1]))
    if case.scoped and landlock_abi() < 6:
        pytest.skip("the kernel has no Landlock ABI 6, which the case needs")
    token = f"SECRET-{os.getpid() * 7919 + 104729:x}"
    set_up(case, places, token)
    approvals = environment(case, places, monkeypatch)
    store_approvals(case, approvals, places)
    approvals_before = approvals.read_bytes() if approvals.exists() else None
    repo = places.work if case.repo_above else places.root if case.repo else None
    head_before = head(repo) if repo else None

    problems = []
    runs = []
    for n, (document, (arguments, missing)) in enumerate(zip(docs, plans)):
        label = f"run {n + 1}: " if len(docs) > 1 else ""
        if missing:
            exit_code, report, said = run_command_line(case.flags, places, document)
        else:
            exit_code, report, said = run_python(document, places.root, arguments)
        printed = capfd.readouterr()
        output = json.dumps(report) + said + printed.out + printed.err
        if token in output:
            problems.append(f"{label}the secret was printed")
        problems += [f"{label}the output holds `{t}`" for t in map(places.fill, case.output_lacks) if t in output]
        runs.append((exit_code, report))
        expect = case.last if n == len(docs) - 1 else case.first
        problems += [label + p for p in check_report(expect, exit_code, report)]

    if list(places.outside.iterdir()):
        problems.append(f"the canary directory was written: {sorted(p.name for p in places.outside.iterdir())}")
    if places.secret.read_text() != token + "\n":
        problems.append("the secret file was changed")
    if repo and (held := commits_holding(repo, head_before, token)):
        problems.append(f"the secret was committed: {held}")
    if (approvals.read_bytes() if approvals.exists() else None) != approvals_before:
        problems.append("an approval was stored")
    root = places.root
    problems += [f"{p} exists" for p in case.absent if os.path.lexists(root / p)]
    problems += [f"{p} is missing" for p in case.present if not os.path.lexists(root / p)]
    for path, content in case.contents:
        want = places.fill(content).replace("\\n", "\n").encode()
        got = (root / path).read_bytes() if (root / path).is_file() else None
        if got != want:
            problems.append(f"{path} holds {got!r}, expected {want!r}")
    notes = [b["note"] for b in runs[-1][1].get("blocks") or [] if isinstance(b.get("note"), str)]
    problems += [f"no note says {want!r}: {notes}" for want in case.notes if not any(want in note for note in notes)]
    if left := temp_names(root):
        problems.append(f"temporary names left in the tree: {left}")
    if case.repo and (committed := committed_temp_names(root)):
        problems.append(f"temporary names committed: {committed}")
    assert problems == [], "\n".join(problems) + "\n" + "\n".join(json.dumps(r)[:2000] for _, r in runs)


def test_the_corpus_runs_through_python_but_for_flags_only_the_command_line_has() -> None:
    # Every case is read (a line this reader does not know fails here, as
    # in the case's own test); the skips are counted, so that a change of
    # the corpus or of the reader cannot quietly shrink what runs here.
    skipped = {}
    for case_dir in CASES:
        case = read_case((case_dir / "expect").read_text())
        if case.stream:
            skipped[case_dir.name] = ["--stream (the API reads no stream)"]
            continue
        _, missing = python_arguments(case.flags, documents(case_dir, Places(Path("/nonexistent")))[-1])
        if missing:
            skipped[case_dir.name] = missing
    assert len(CASES) >= 170, len(CASES)
    assert len(CASES) - len(skipped) >= 150, skipped


def test_the_reader_knows_every_line_the_corpus_readme_lists() -> None:
    # The table of corpus/security/README.md, whose first column names each
    # line (`task N success` / `task N skipped`, `hardlink PATH FILE`, ...).
    table = [row.split("|")[1] for row in (CORPUS / "README.md").read_text().splitlines() if row.startswith("| `")]
    documented = {name.split()[0] for cell in table for name in re.findall(r"`([^`]+)`", cell)}
    assert documented == EXPECT_LINES | SET_UP_LINES | {"first"}
