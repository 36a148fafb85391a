"""`clada.apply_files`: a document applied to files held in memory, with the
report `apply` gives on a directory holding them."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import clada

EDIT = '<<<<<<< SEARCH path="src/a.txt"\ntwo\n=======\n2\n>>>>>>> REPLACE\n'


def untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def test_an_edit_changes_the_bytes_it_names_and_keeps_the_rest() -> None:
    files = {"src/a.txt": b"\xef\xbb\xbfone\r\ntwo\r\n", "b.bin": b"\xff\x00"}
    after, report = clada.apply_files(EDIT, files)
    assert report["ok"], report
    # CRLF and the BOM stay; a file the document does not name is untouched.
    assert after == {"src/a.txt": b"\xef\xbb\xbfone\r\n2\r\n", "b.bin": b"\xff\x00"}
    # The caller's mapping is not changed.
    assert files["src/a.txt"] == b"\xef\xbb\xbfone\r\ntwo\r\n"


def test_str_contents_are_utf8_and_results_are_bytes() -> None:
    after, report = clada.apply_files(EDIT, {"src/a.txt": "one\ntwo"})
    assert report["ok"]
    assert after == {"src/a.txt": b"one\n2"}


def test_the_report_is_the_report_of_apply_on_a_directory(root: Path) -> None:
    doc = (
        '<<<<<<< WRITE path="new/n.txt"\nhi\n>>>>>>> END\n'
        + EDIT
        + '<<<<<<< SEARCH path="src/a.txt"\nmissing\n=======\nx\n>>>>>>> REPLACE\n'
        + '<<<<<<< MOVE from="src/a.txt" to="moved/a.txt"\n>>>>>>> END\n'
    )
    files = {"src/a.txt": b"one\ntwo\n"}
    (root / "src").mkdir()
    (root / "src/a.txt").write_bytes(files["src/a.txt"])
    on_disk = clada.apply(doc, root)
    after, in_memory = clada.apply_files(doc, files, changes=True)
    # Only the undo record is the directory's own: nothing in memory keeps one.
    on_disk.pop("undo", None)
    assert untimed(in_memory) == untimed(on_disk)
    assert not in_memory["ok"]
    # What it changed, as on disk.
    assert [(c["path"], c["change"]) for c in in_memory["changes"]] == [
        ("moved/a.txt", "moved"),
        ("moved/a.txt", "modified"),
        ("new/n.txt", "created"),
    ], in_memory["changes"]
    assert after == {
        "new/n.txt": b"hi\n",
        "moved/a.txt": (root / "moved/a.txt").read_bytes(),
    }


def test_changes_are_in_the_report_only_when_asked() -> None:
    doc = EDIT + '<<<<<<< WRITE path="new.txt"\nhi\n>>>>>>> END\n'
    files = {"src/a.txt": b"one\ntwo\n"}
    after, plain = clada.apply_files(doc, files)
    assert plain["ok"]
    assert "changes" not in plain
    asked_after, asked = clada.apply_files(doc, files, changes=True)
    assert asked["changes"] == [
        {
            "path": "new.txt",
            "change": "created",
            "added": 1,
            "removed": 0,
            "diff": "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n",
        },
        {
            "path": "src/a.txt",
            "change": "modified",
            "added": 1,
            "removed": 1,
            "diff": "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n",
        },
    ], asked["changes"]
    # Asked or not, the rest of the report and the files are the same.
    assert {k: v for k, v in untimed(asked).items() if k != "changes"} == untimed(plain)
    assert asked_after == after
    # A dry run always says what it would change.
    _, dry = clada.apply_files(doc, files, dry_run=True)
    assert [c["path"] for c in dry["changes"]] == ["new.txt", "src/a.txt"]


def test_a_document_without_tasks_is_an_error_unless_allowed() -> None:
    _, refused = clada.apply_files("Only prose.\n", {"a": b"a"})
    assert not refused["ok"]
    assert refused["diagnostics"][0]["kind"] == "no_tasks"
    _, allowed = clada.apply_files("Only prose.\n", {"a": b"a"}, allow_empty=True)
    assert allowed["ok"], allowed


def test_a_command_is_skipped_not_run() -> None:
    doc = "<<<<<<< RUN\ntouch made.txt\n>>>>>>> END\n" + EDIT
    after, report = clada.apply_files(doc, {"src/a.txt": b"one\ntwo\n"})
    tasks = [t for b in report["blocks"] for t in b["tasks"]]
    assert tasks[0]["status"] == "skipped"
    assert "in memory" in tasks[0]["message"]
    assert tasks[1]["status"] == "success"
    assert not report["ok"]
    assert after == {"src/a.txt": b"one\n2\n"}


def test_atomic_leaves_the_files_as_they_were() -> None:
    doc = (
        '<<<<<<< WRITE path="x.txt"\nx\n>>>>>>> END\n'
        '<<<<<<< SEARCH path="src/a.txt"\nmissing\n=======\nx\n>>>>>>> REPLACE\n'
    )
    files = {"src/a.txt": b"one\ntwo\n"}
    after, report = clada.apply_files(doc, files, atomic="document")
    assert not report["ok"]
    assert after == files


def test_a_path_out_of_the_files_escapes_nothing() -> None:
    doc = '<<<<<<< WRITE path="../out.txt"\nx\n>>>>>>> END\n'
    after, report = clada.apply_files(doc, {"a": b"a"})
    assert not report["ok"]
    assert after == {"a": b"a"}


@pytest.mark.parametrize(
    "key", ["a/../b", "./a", "a//b", "/etc/passwd", "a/", "", "..", "a\\b", "a/./b"]
)
def test_a_key_that_is_not_a_normal_path_is_an_error_naming_it(key: str) -> None:
    with pytest.raises(clada.CladaError) as caught:
        clada.apply_files(EDIT, {key: b"x", "src/a.txt": b"one\ntwo\n"})
    assert caught.value.type == "path_escape"
    assert json.dumps(key) in str(caught.value)


def test_a_file_where_a_directory_is_needed_is_an_error() -> None:
    with pytest.raises(clada.CladaError) as caught:
        clada.apply_files(EDIT, {"src": b"x", "src/a.txt": b"one\ntwo\n"})
    assert caught.value.type == "path_escape"
    assert '"src"' in str(caught.value)


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        clada.apply_files(EDIT, {1: b"x"})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        clada.apply_files(EDIT, {"a": 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        clada.apply_files(EDIT, ["a"])  # type: ignore[arg-type]


def test_a_document_over_the_limit_is_an_error() -> None:
    with pytest.raises(clada.CladaError) as caught:
        clada.apply_files(b"x" * (50 * 1024 * 1024 + 1), {})
    assert caught.value.type == "input_too_large"


def test_threads_apply_at_once_and_each_gets_its_own_answer() -> None:
    # Correctness from many threads (the lock is released while clada
    # works); how far it scales is measured in bench/, not asserted here.
    results: dict[int, bytes] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            doc = f'<<<<<<< SEARCH path="f.txt"\nline {i}\n=======\nLINE {i}\n>>>>>>> REPLACE\n'
            files = {"f.txt": "".join(f"line {j}\n" for j in range(200)).encode()}
            for _ in range(20):
                after, report = clada.apply_files(doc, files)
                assert report["ok"], report
            results[i] = after["f.txt"]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(8):
        assert f"LINE {i}\n".encode() in results[i]
        assert results[i].count(b"LINE") == 1


def test_any_mapping_is_read_through_its_items() -> None:
    # A plain dict is read directly; a subclass or another mapping through
    # its own `items`, as it says its files are.
    class Renamed(dict[str, bytes]):
        def items(self) -> list[tuple[str, bytes]]:  # type: ignore[override]
            return [("src/a.txt", b"one\ntwo\n")]

    after, report = clada.apply_files(EDIT, Renamed({"elsewhere.txt": b"x"}))
    assert report["ok"], report
    assert after == {"src/a.txt": b"one\n2\n"}
    from types import MappingProxyType

    after, report = clada.apply_files(EDIT, MappingProxyType({"src/a.txt": b"one\ntwo\n"}))
    assert report["ok"] and after == {"src/a.txt": b"one\n2\n"}
