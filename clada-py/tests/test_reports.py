"""The reports are the command line's `--format json` reports, field for
field, and the TypedDicts generated from the schemas describe them."""

from __future__ import annotations

import json
import subprocess
import types
import typing
from pathlib import Path
from typing import Any

import pytest

import clada
from support import REPO, prompt_examples, prompt_project

AIDER = 'src/app.py\n```\n<<<<<<< SEARCH\nimport sys\n=======\nimport os\n>>>>>>> REPLACE\n```\n'
BROKEN = '<<<<<<< SEARCH path="src/app.py"\nnot there\n=======\nx\n>>>>>>> REPLACE\n<<<<<<< WRITE path="a.txt"\nno closer\n'
# Every kind of outcome: applied, failed with the closest text, skipped,
# a refused command, a malformed unit.
MIXED = (
    '<<<<<<< TASKS\n<<<<<<< SEARCH path="src/app.py"\ndef greet(nme):\n=======\ndef greet(who):\n>>>>>>> REPLACE\n'
    '<<<<<<< WRITE path="never.txt"\nx\n>>>>>>> END\n>>>>>>> TASKS\n'
    '<<<<<<< RUN\necho hi | cat\n>>>>>>> END\n'
    '<<<<<<< WRITE path="ok.txt"\nfine\n>>>>>>> END\n'
    '<<<<<<< MOVE from="missing.txt"\n>>>>>>> END\n'
)
DOCUMENTS = {
    "examples": "".join(prompt_examples()),
    "aider": AIDER,
    "broken": BROKEN,
    "mixed": MIXED,
    "not-utf8": b"<<<<<<< WRITE path=\"a.txt\"\n\xff\n>>>>>>> END\n",
    "empty": "",
}


def run_cli(cli: Path, args: list[str], document: str | bytes) -> dict[str, Any]:
    data = document.encode() if isinstance(document, str) else document
    out = subprocess.run([cli, *args], input=data, capture_output=True, check=False)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def without_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [without_durations(v) for v in value]
    return value


def two_roots(tmp_path: Path) -> tuple[Path, Path]:
    one, two = tmp_path / "one", tmp_path / "two"
    for r in (one, two):
        r.mkdir()
        prompt_project(r)
    return one, two


@pytest.mark.parametrize("name", DOCUMENTS)
def test_check_reports_the_cli_report(cli: Path, name: str) -> None:
    document = DOCUMENTS[name]
    report, expected = clada.check(document), run_cli(cli, ["check", "--format", "json", "-"], document)
    assert report == expected
    # Key for key in the same order, each value of the same type (the
    # dicts are built in Rust, not read from the JSON).
    assert json.dumps(report) == json.dumps(expected)


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
@pytest.mark.parametrize("name", DOCUMENTS)
def test_apply_reports_the_cli_report(cli: Path, tmp_path: Path, name: str, dry_run: bool) -> None:
    document = DOCUMENTS[name]
    mine, theirs = two_roots(tmp_path)
    report = clada.apply(document, mine, dry_run=dry_run)
    flags = ["--dry-run"] if dry_run else []
    expected = run_cli(
        cli, ["apply", "--no-git", "--no-prompt", "--format", "json", *flags, "-C", str(theirs), "-"], document
    )
    # Paths in messages name each run's own root.
    text = json.dumps(without_durations(report)).replace(str(mine), "ROOT")
    assert text == json.dumps(without_durations(expected)).replace(str(theirs), "ROOT")


def test_convert_writes_what_the_cli_writes(cli: Path) -> None:
    for to in ("clada", "aider", "codex"):
        printed = subprocess.run(
            [cli, "convert", "--from", "aider", "--to", to, "-"], input=AIDER, capture_output=True, text=True, check=True
        ).stdout
        assert clada.convert(AIDER, to, from_="aider") == printed


@pytest.mark.parametrize("which", ["apply", "check"])
def test_schema_is_the_committed_schema(which: str) -> None:
    committed = json.loads((REPO / f"grammar/schema/{which}.json").read_text())
    assert clada.schema(which) == committed


# The generated TypedDicts against real reports: every required key is
# there, no key is unknown, every value has its annotated type.


def conforms(value: Any, hint: Any, where: str) -> list[str]:
    origin = typing.get_origin(hint)
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not None"]
    if origin in (typing.Union, types.UnionType):
        options = [conforms(value, h, where) for h in typing.get_args(hint)]
        return [] if any(not o for o in options) else [f"{where}: {value!r} is none of {hint}"]
    if origin is typing.Literal:
        return [] if value in typing.get_args(hint) else [f"{where}: {value!r} not in {hint}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r} is not a list"]
        (item,) = typing.get_args(hint)
        return [p for i, v in enumerate(value) for p in conforms(v, item, f"{where}[{i}]")]
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not a dict"]
        fields = typing.get_type_hints(hint)
        problems = [f"{where}: lacks {k}" for k in hint.__required_keys__ if k not in value]
        problems += [f"{where}: {k} is not in {hint.__name__}" for k in value if k not in fields]
        for k, v in value.items():
            if k in fields:
                problems += conforms(v, fields[k], f"{where}.{k}")
        return problems
    if hint is float:
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) else [f"{where}: {value!r}"]
    if hint is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{where}: {value!r} is not an int"]
    if isinstance(hint, type):
        return [] if isinstance(value, hint) else [f"{where}: {value!r} is not {hint.__name__}"]
    raise AssertionError(f"{where}: the test cannot check {hint!r}")


@pytest.mark.parametrize("name", DOCUMENTS)
def test_reports_conform_to_the_typed_dicts(tmp_path: Path, name: str) -> None:
    document = DOCUMENTS[name]
    root = tmp_path / "root"
    root.mkdir()
    prompt_project(root)
    reports: list[tuple[Any, Any]] = [
        (clada.check(document), clada.CheckReport),
        (clada.apply(document, root, dry_run=True), clada.ApplyReport),
        (clada.apply(document, root, atomic="unit"), clada.ApplyReport),
    ]
    for report, hint in reports:
        assert conforms(report, hint, hint.__name__) == []


def test_the_conformance_check_catches_a_wrong_report() -> None:
    report = clada.check(MIXED)
    assert conforms(report, clada.CheckReport, "r") == []
    report["summary"]["tasks"] = "five"
    del report["ok"]
    report["blocks"][0]["extra"] = 1
    problems = conforms(report, clada.CheckReport, "r")
    assert any("lacks ok" in p for p in problems), problems
    assert any("summary.tasks" in p for p in problems), problems
    assert any("extra is not in" in p for p in problems), problems
