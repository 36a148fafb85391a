# The extension module written in Rust (clada-py/src/lib.rs); `clada`
# re-exports all of it. Kept by hand: stubtest (in CI) checks it against
# the module.

from collections.abc import Iterable
from os import PathLike
from typing import Any, Literal

from ._reports import ApplyReport, CheckReport, Dialect

__all__ = ["check", "apply", "convert", "prompt", "schema", "__version__"]

__version__: str

def check(document: str | bytes, dialect: Dialect | Literal["auto"] = "auto") -> CheckReport: ...
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
    timeout: float | None = None,
) -> ApplyReport: ...
def convert(
    document: str | bytes,
    to: Literal["clada", "aider", "codex"],
    from_: Dialect | Literal["auto"] = "auto",
) -> str: ...
def prompt() -> str: ...
def schema(which: Literal["apply", "check"]) -> dict[str, Any]: ...
