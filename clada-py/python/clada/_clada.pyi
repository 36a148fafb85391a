# The extension module written in Rust (clada-py/src/lib.rs); `clada`
# re-exports all of it. Kept by hand: stubtest (in CI) checks it against
# the module, and tests/test_stub.py each docstring against the function's
# own (src/lib.rs), which `help()` shows and editors read here.

from collections.abc import Iterable, Mapping
from os import PathLike
from typing import Any, Literal

from ._reports import ApplyReport, CheckReport, Dialect

__all__ = ["check", "apply", "apply_files", "convert", "prompt", "schema", "__version__"]

__version__: str

def check(document: str | bytes, dialect: Dialect | Literal["auto"] = "auto") -> CheckReport:
    """Reads, checks and reports on a document; touches nothing.

    `dialect`: "auto" (default), "clada", "aider", "codex", "cml", "udiff"
    or "cline". Returns the report of `clada check --format json` as a
    dict; a document with errors is a report whose `ok` is False. Raises
    `clada.CladaError` (`input_too_large`) for a document over 50 MiB.
    """

def apply(
    document: str | bytes,
    root: str | PathLike[str],
    *,
    dialect: Dialect | Literal["auto"] = "auto",
    dry_run: bool = False,
    atomic: Literal["unit", "document"] | bool | None = None,
    match: Literal["whitespace", "exact"] = "whitespace",
    git: bool | str = False,
    allow: Iterable[str] = (),
    timeout: float | str | None = None,
    allow_empty: bool = False,
) -> ApplyReport:
    """Applies a document to the directory `root`, as `clada apply --no-prompt
    --format json` would.

    Returns the report as a dict; a document that fails (in part or whole)
    is a report whose `ok` is False, with `resend` saying what to send
    again, and `changes` what the run changed, path by path (lines `added`
    and `removed`, a unified `diff` cut at 400 lines a file and 2000 a
    report, `omitted` the lines left out). Raises `clada.CladaError` when
    the call cannot run: a root that cannot be opened, a document over 50
    MiB, the lock not taken in time (`lock_timeout`, retryable), a failed
    commit before the tasks.

    - `dialect`: as for `check`.
    - `dry_run`: plan everything, change nothing, report a diff per file.
    - `atomic`: None, "unit" (or True: a unit that fails leaves no trace)
      or "document" (all or nothing).
    - `match`: "whitespace" (default) or "exact", how a SEARCH finds its
      text.
    - `git`: False (default: no commits), True (commit before and after, as
      `clada <clada@localhost>`), or the author, e.g. "Ada <ada@example.com>".
    - `allow`: command lines approved for this call only (exact text of a
      RUN's body), besides built-in commands and those of `clada allow`;
      never written anywhere. They hold at the root, as `clada allow`
      without `--dir` approves: a RUN whose `dir` is below the root runs
      only what `clada allow --dir DIR` approved there. Nothing else runs,
      and nobody is asked.
    - `timeout`: seconds (e.g. 120 or 1.5) or a duration as the command
      line writes it ("30s", "500ms", "2m"); no command runs longer, and
      tasks not started by then are skipped. None: 30 s per command, no
      limit on the run.
    - `allow_empty`: a document without any task (prose only, empty) is
      then not an error (`no_tasks`), for pipelines that pass every reply.
      A document that is only the name of an existing file raises, either
      way: a path was passed where the text belongs.
    """

def apply_files(
    document: str | bytes,
    files: Mapping[str, str | bytes],
    *,
    dialect: Dialect | Literal["auto"] = "auto",
    match: Literal["whitespace", "exact"] = "whitespace",
    atomic: Literal["unit", "document"] | bool | None = None,
    dry_run: bool = False,
    allow_empty: bool = False,
    changes: bool = False,
) -> tuple[dict[str, bytes], ApplyReport]:
    """Applies a document to files held in memory, as `apply` would to a
    directory holding them, touching no disk: no lock, no git, no undo
    record, and RUN tasks do not run (each is skipped: "not run: commands
    do not run on files in memory").

    `files` maps each file's path below the root (`src/a.py`: no `.` or
    `..`, no `//`, not absolute) to its contents, `bytes` or `str` (as
    UTF-8). Returns the files after the document (a dict of `bytes`; only
    files, directories are implied) and the report, as `apply` gives it.
    Raises `clada.CladaError`: a key that is not such a path, or a file
    where another key needs a directory (`path_escape`), a document over
    50 MiB or files over 400 MiB together (`input_too_large`).

    - `dialect`, `match`, `atomic`, `dry_run`, `allow_empty`: as for `apply`.
    - `changes`: the report has `changes` (what the run changed, path by
      path, with a unified diff per file, as `apply` gives them) only when
      True, or in a dry run; the files after are the answer otherwise, and
      the diffs cost most of a small call.
    """

def convert(
    document: str | bytes,
    to: Literal["clada", "aider", "codex", "udiff"],
    from_: Dialect | Literal["auto"] = "auto",
) -> str:
    """Rewrites a document in another dialect, as `clada convert --from FROM_
    --to TO` does.

    `to`: "clada", "aider", "codex" or "udiff". `from_`: "auto" (default),
    "clada", "aider", "codex", "cml", "udiff" or "cline". Prose is dropped. Raises `clada.CladaError`
    when the document has errors (the type of the first; `.report` is the
    check report) and `clada.ConvertError` (a `ValueError`) when `to`
    cannot express one of its tasks.
    """

def prompt() -> str:
    """The system prompt of `clada prompt`: how to write edits clada applies."""

def schema(which: Literal["apply", "check"]) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a report, as `clada schema`
    prints it: `which` is "apply" or "check".
    """
