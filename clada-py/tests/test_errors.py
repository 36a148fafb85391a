"""Calls that cannot run raise; documents that fail are reports."""

from __future__ import annotations

import fcntl
import hashlib
import pickle
import shutil
from pathlib import Path

import pytest

import clada
from support import git

WRITE = '<<<<<<< WRITE path="a.txt"\nhi\n>>>>>>> END\n'


def test_a_failing_document_is_a_report_not_an_exception(root: Path) -> None:
    report = clada.apply('<<<<<<< SEARCH path="missing.txt"\na\n=======\nb\n>>>>>>> REPLACE\n', root)
    assert report["ok"] is False
    assert report["blocks"][0]["tasks"][0]["error"]["type"] == "file_not_found"
    assert report["resend"]["failed"] == [1]
    broken = clada.check("<<<<<<< WRITE path=\"a.txt\"\nno closer\n")
    assert broken["ok"] is False and broken["summary"]["errors"] == 1


def test_a_root_that_does_not_exist_is_file_not_found(root: Path) -> None:
    with pytest.raises(clada.CladaError) as raised:
        clada.apply(WRITE, root / "nowhere")
    e = raised.value
    assert (e.type, e.category, e.retryable, e.report) == ("file_not_found", "runtime", False, None)
    assert str(root / "nowhere") in str(e)
    (root / "file").write_text("x")
    with pytest.raises(clada.CladaError) as raised:
        clada.apply(WRITE, root / "file")
    assert raised.value.type == "file_not_found"


def test_a_document_over_the_limit_is_input_too_large(root: Path) -> None:
    big = "x" * (50 * 1024 * 1024 + 1)
    for call in (lambda: clada.check(big), lambda: clada.apply(big, root), lambda: clada.convert(big, "aider")):
        with pytest.raises(clada.CladaError) as raised:
            call()
        assert (raised.value.type, raised.value.category) == ("input_too_large", "validation")
        assert "50 MiB" in str(raised.value)
    assert list(root.iterdir()) == []


def test_a_lock_held_elsewhere_is_a_retryable_lock_timeout(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The default lock (engine/lock.rs): `KEY.lock` in `locks/` of clada's
    # runtime directory ($XDG_RUNTIME_DIR/clada, made 0700), KEY git's blob
    # hash of the work tree's top: a run in a subdirectory of the
    # repository takes the same lock, and nothing of it is in the tree.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    git(root, "init", "-q")
    (root / "sub").mkdir()
    top = bytes(root.resolve())
    locks = tmp_path / "run/clada/locks"
    for made in (locks.parent.parent, locks.parent, locks):
        made.mkdir(mode=0o700)
    lock = locks / (hashlib.sha1(b"blob %d\0" % len(top) + top).hexdigest() + ".lock")
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(clada.CladaError) as raised:
            clada.apply(WRITE, root / "sub", timeout=0.3)
    e = raised.value
    assert (e.type, e.category, e.retryable) == ("lock_timeout", "system", True)
    assert str(lock) in str(e)
    # The report goes with it: nothing ran.
    assert e.report is not None and e.report["summary"]["succeeded"] == 0
    assert e.report["error"]["type"] == "lock_timeout"
    assert not (root / "sub/a.txt").exists()
    # Free again, the same call succeeds, and leaves no lock in the tree.
    assert clada.apply(WRITE, root / "sub")["ok"]
    assert (root / "sub/a.txt").read_text() == "hi\n"
    assert [p.name for p in root.rglob("*clada*")] == []


def test_errors_survive_pickling(root: Path) -> None:
    with pytest.raises(clada.CladaError) as raised:
        clada.apply(WRITE, root / "nowhere")
    copy = pickle.loads(pickle.dumps(raised.value))
    assert (copy.type, copy.category, copy.retryable, str(copy)) == (
        "file_not_found",
        "runtime",
        False,
        str(raised.value),
    )
    e = clada.ConvertError("cannot", 3)
    assert pickle.loads(pickle.dumps(e)).task == 3


def test_converting_a_document_with_errors_raises_with_its_check_report() -> None:
    with pytest.raises(clada.CladaError) as raised:
        clada.convert('<<<<<<< WRITE path="a.txt"\nno closer\n', "aider")
    e = raised.value
    assert e.type == "malformed_structure"
    assert "has errors" in str(e) and "no closer" in str(e)
    assert e.report is not None and e.report["summary"]["errors"] == 1


def test_a_task_the_target_cannot_express_is_a_convert_error() -> None:
    with pytest.raises(clada.ConvertError) as raised:
        clada.convert('<<<<<<< RUN\nls\n>>>>>>> END\n', "aider")
    assert isinstance(raised.value, ValueError)
    assert raised.value.task == 1
    assert "aider" in str(raised.value)


@pytest.mark.parametrize(
    ("call", "error", "says"),
    [
        (lambda r: clada.check(WRITE, dialect="diff"), ValueError, 'use "auto", "clada"'),
        (lambda r: clada.check(42), TypeError, "str or bytes"),
        (lambda r: clada.check(bytearray(b"x")), TypeError, "str or bytes"),
        (lambda r: clada.apply(WRITE, r, match="fuzzy"), ValueError, '"whitespace" or "exact"'),
        (lambda r: clada.apply(WRITE, r, atomic="all"), ValueError, '"document"'),
        (lambda r: clada.apply(WRITE, r, atomic=1), TypeError, "atomic"),
        (lambda r: clada.apply(WRITE, r, timeout=0), ValueError, "above 0"),
        (lambda r: clada.apply(WRITE, r, timeout=float("nan")), ValueError, "above 0"),
        # A duration is read as the command line reads --timeout; a wrong
        # one names the argument.
        (lambda r: clada.apply(WRITE, r, timeout="ten"), ValueError, 'timeout="ten" is not a time limit'),
        (lambda r: clada.apply(WRITE, r, timeout="0s"), ValueError, "above 0"),
        (lambda r: clada.apply(WRITE, r, timeout=[30]), TypeError, "timeout must be seconds"),
        (lambda r: clada.apply(WRITE, r, timeout=True), TypeError, "timeout must be seconds"),
        (lambda r: clada.apply(WRITE, r, git="<>"), ValueError, "not an author"),
        (lambda r: clada.apply(WRITE, r, git=3), TypeError, "author"),
        # A str is a sequence of letters: never a list of approvals.
        (lambda r: clada.apply(WRITE, r, allow="ls"), TypeError, "not a str"),
        (lambda r: clada.apply(WRITE, r, allow=[b"ls"]), TypeError, "a str"),
        (lambda r: clada.apply(WRITE, r, allow=[" "]), ValueError, "empty"),
        (lambda r: clada.apply(WRITE, r, dry=True), TypeError, "dry"),
        (lambda r: clada.convert(WRITE, "cml"), ValueError, "clada writes"),
        (lambda r: clada.convert(WRITE, "aider", from_="x"), ValueError, "from_="),
        (lambda r: clada.schema("run"), ValueError, '"apply" and "check"'),
    ],
)
def test_bad_arguments_are_value_or_type_errors_that_say_what_to_pass(
    root: Path, call: object, error: type[Exception], says: str
) -> None:
    with pytest.raises(error) as raised:
        call(root)  # type: ignore[operator]
    assert says in str(raised.value)
    assert not isinstance(raised.value, clada.CladaError)
    assert list(root.iterdir()) == []


def test_what_the_command_line_warns_about_is_a_runtime_warning(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An approvals file of an older clada, in the tree: ignored, and said.
    (root / ".clada").mkdir()
    (root / ".clada/allowed-commands.json").write_text('{"commands": ["echo hi | cat"]}')
    with pytest.warns(RuntimeWarning, match="approvals live outside the tree"):
        report = clada.apply("<<<<<<< RUN\necho hi | cat\n>>>>>>> END\n", root)
    assert report["blocks"][0]["tasks"][0]["error"]["type"] == "command_not_allowed"
    shutil.rmtree(root / ".clada")
    # No home to find clada's directories in: no approvals, no default lock.
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name)
    with pytest.warns(RuntimeWarning, match="no approvals of `clada allow`"):
        report = clada.apply(WRITE, root)
    assert report["ok"] and (root / "a.txt").read_text() == "hi\n"
