"""`clada.render`: the text report of a run, as the command line prints it
and the MCP server's tools return it: what a model should read."""

from __future__ import annotations

from typing import Any

from ._reports import ApplyReport, CheckReport


class Report(dict[str, Any]):
    """A report as `clada.apply` and `clada.check` return it: the dict of
    `--format json` (typed by `ApplyReport` and `CheckReport`), with the
    text report beside it, not in it, for `render`."""

    __slots__ = ("_clada_text",)


def render(report: ApplyReport | CheckReport) -> str:
    """The text report of `report`, a report `clada.apply` or `clada.check`
    returned: what `clada apply` and `clada check` print (no colour, command
    output after each task, the document called `<document>`; what the run
    changed is in the report's `changes`) and the MCP server's `apply` and
    `check` tools return. When something failed, it
    ends with what to send again (`Resend:`). It is the run's text: a
    report built again from JSON has none, and raises `TypeError`."""
    text = getattr(report, "_clada_text", None)
    if not isinstance(text, str):
        raise TypeError(
            "render(report) takes a report that clada.apply or clada.check returned, "
            f"not {type(report).__name__}: the text is made during the run, and a report "
            "read back from JSON or copied into a new dict has none"
        )
    return text
