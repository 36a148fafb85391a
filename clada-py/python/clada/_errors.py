"""The exceptions of clada: a call that cannot run at all.

A document that fails, in part or whole, is not an exception: it is a
report whose ``ok`` is False, with ``resend`` saying what to send again.
"""

from __future__ import annotations

from typing import Any

from ._reports import ApplyReport, Category, CheckReport, ErrorType


class CladaError(Exception):
    """A call that could not run, with the protocol's error type
    (PROTOCOL §8).

    ``type``: e.g. ``"lock_timeout"``, ``"file_not_found"`` (the root),
    ``"input_too_large"``; ``category``: ``"validation"``, ``"runtime"`` or
    ``"system"``; ``retryable``: whether the same call may succeed later
    unchanged (a lock another run held); ``report``: the report that goes
    with it, when there is one (a run refused as a whole, the check report
    of a document ``convert`` cannot read).
    """

    message: str
    type: ErrorType
    category: Category
    retryable: bool
    report: ApplyReport | CheckReport | None

    def __init__(
        self,
        message: str,
        type: ErrorType,
        category: Category,
        retryable: bool,
        report: ApplyReport | CheckReport | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.type = type
        self.category = category
        self.retryable = retryable
        self.report = report

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.type, self.category, self.retryable, self.report))

    def __repr__(self) -> str:
        return f"CladaError({self.type}: {self.message!r})"


class ConvertError(ValueError):
    """A document without errors that the dialect asked for cannot express:
    ``task`` is the number of the task that cannot be written (or None when
    the whole document is the reason)."""

    message: str
    task: int | None

    def __init__(self, message: str, task: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.task = task

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.task))
