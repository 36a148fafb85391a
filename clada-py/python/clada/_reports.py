"""The reports of clada as TypedDicts: what `clada.check` and `clada.apply`
return, field for field the JSON of `clada check|apply --format json`
(PROTOCOL §9.2).

Generated from grammar/schema/*.json by clada-py/gen_reports.py; do not
edit: run `python3 clada-py/gen_reports.py` after changing the schemas.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict

__all__ = [
    "ApplyReport",
    "ApplySummary",
    "BlockReport",
    "BlockStatus",
    "Category",
    "CheckBlock",
    "CheckReport",
    "CheckSummary",
    "CheckTask",
    "Chosen",
    "ChosenBy",
    "Closest",
    "Count",
    "DiagnosticReport",
    "Dialect",
    "ErrorReport",
    "ErrorType",
    "Excerpt",
    "FileChange",
    "FixReport",
    "FixedLines",
    "GitReport",
    "IndentProblem",
    "Indentation",
    "LabelReport",
    "Matched",
    "OpName",
    "Position",
    "Resend",
    "ResendEntry",
    "Severity",
    "Shift",
    "TaskReport",
    "TaskStatus",
    "UnreadEdit",
]


class ApplySummary(TypedDict):
    already_applied: int
    """Applied before (`already_applied`): nothing to do, and no failure.
    Not counted in `succeeded`.
    """
    blocks: int
    failed: int
    rolled_back: NotRequired[int]
    """Succeeded, then undone (`--atomic`); counted in `succeeded` too."""
    skipped: int
    succeeded: int
    """Applied by this run."""
    tasks: int


BlockStatus: TypeAlias = Literal["success", "failed", "malformed"]


class Position(TypedDict):
    """A position for people: 1-based line, 1-based column in Unicode scalar
    values, and the byte offset it was computed from.
    """
    column: int
    line: int
    offset: int


ChosenBy: TypeAlias = Literal["line", "order"]
"""What chose one of several equal candidates."""


class Chosen(TypedDict):
    """When an edit found several equal candidates and one was taken: how
    many, and what chose it (the nearest to its line hint, or the order of
    a file's hunks).
    """
    by: ChosenBy
    candidates: int
    hint: NotRequired[int | None]
    """The line the edit was written for (`by: "line"`)."""


Category: TypeAlias = Literal["validation", "runtime", "system"]
"""Who is at fault, broadly: the document, the run, or the system."""


class Closest(TypedDict):
    """The region of a file most like the search text."""
    diff: str
    """A unified diff from the search text to the region."""
    difference: NotRequired[str | None]
    """When the two differ only in white space, or the search has lines the
    file cannot have (a copied fence or file name, blank lines at its
    ends): what exactly, in words.
    """
    end_line: int
    similarity: float
    """0 to 1: the share of characters the two texts have in common."""
    start_line: int
    """1-based, inclusive."""


Count: TypeAlias = Literal["all"] | int


ErrorType: TypeAlias = Literal[
    "malformed_structure",
    "invalid_utf8",
    "input_too_large",
    "path_escape",
    "symlink_not_allowed",
    "command_not_allowed",
    "match_count_mismatch",
    "already_applied",
    "indentation_mismatch",
    "file_not_found",
    "file_exists",
    "permission_denied",
    "exec_failed",
    "exec_timeout",
    "lock_timeout",
    "file_changed",
    "sandbox_unavailable",
    "git_operation_failed",
]
"""What kind of failure an error is; fixed by the protocol."""


class Excerpt(TypedDict):
    """An occurrence of a search text, with a line either side (PROTOCOL §9)."""
    line: int
    """The line the occurrence starts on."""
    start_line: int
    """The 1-based line of the first line shown."""
    text: list[str]
    """The lines shown, without their line breaks."""


IndentProblem: TypeAlias = Literal["replacement", "uneven", "characters", "shallow", "occurrences"]
"""What keeps a shifted match from being applied."""


class Indentation(TypedDict):
    """Why a match that needs re-indenting was not applied (PROTOCOL §3): the
    three indentations, and what keeps the result from being determined.
    """
    file: str
    """How the file indents that line."""
    line: int
    """The 1-based line of the file the indentations are of."""
    problem: IndentProblem
    replacement: str
    """How the replacement indents its first non-blank line."""
    search: str
    """How the search text indents it."""


Matched: TypeAlias = Literal["exact", "whitespace", "trailing", "trimmed", "unicode"]
"""How an edit found the text it replaced (PROTOCOL §3): exactly, or by a
pass that looks beyond exact text once no exact occurrence exists.
"""


class ErrorReport(TypedDict):
    """An error for programs: its type, category and retryability from the
    protocol's table, and the facts that come with it.
    """
    applied_lines: NotRequired[list[int]]
    """Where the replacement already stands (the edit was applied there
    before).
    """
    approve: NotRequired[str | None]
    """For a command nobody approved: the `clada allow` line that approves
    exactly it, for the user to run.
    """
    category: Category
    closest: NotRequired[Closest | None]
    closest_path: NotRequired[str | None]
    """For `file_not_found`: the existing path most like the one named."""
    dangling_starts: NotRequired[list[int]]
    end_lines: NotRequired[list[int]]
    excerpts: NotRequired[list[Excerpt]]
    """The occurrences found (the first five), each with a line either
    side.
    """
    expected: NotRequired[Count | None]
    found: NotRequired[int | None]
    hint: NotRequired[str | None]
    """What to do about it, in one line."""
    indentation: NotRequired[Indentation | None]
    """Why a match at another indentation was not applied: the three
    indentations (`indentation_mismatch`).
    """
    inside_lines: NotRequired[list[int]]
    """Where the search text occurs, but not as whole lines, which a
    line-based dialect's edit matches (PROTOCOL §11).
    """
    lines: NotRequired[list[int] | None]
    matched: NotRequired[Matched | None]
    """The occurrences were found by a pass beyond exact text."""
    message: str
    not_at_end: NotRequired[list[int]]
    """Where the search text occurs as whole lines but does not end the
    file, as `\\ No newline at end of file` asks (PROTOCOL §11.8).
    """
    os_error: NotRequired[str | None]
    ranges: NotRequired[list[list[int]] | None]
    """First and last line of each occurrence (PROTOCOL §9.2)."""
    replacement_present: NotRequired[bool | None]
    retryable: bool
    start_lines: NotRequired[list[int]]
    type: ErrorType


OpName: TypeAlias = Literal["write", "edit", "edit_range", "run", "move", "remove"]
"""The operation names used in reports."""


class Shift(TypedDict):
    """How far the replacement was re-indented to stand where the search text
    was found (PROTOCOL §3): the file indents those lines by `indent` more
    (or less) than the edit wrote them.
    """
    by: int
    """Characters of indentation added to each non-blank line of the
    replacement; negative when taken away.
    """
    indent: str
    """The characters added (or taken away), the file's own."""


TaskStatus: TypeAlias = Literal["success", "failed", "skipped", "already_applied"]


class TaskReport(TypedDict):
    chosen: NotRequired[Chosen | None]
    """For edits with a line hint: which of several candidates was taken."""
    duration_ms: NotRequired[int | None]
    end: NotRequired[Position | None]
    error: NotRequired[ErrorReport | None]
    exit_code: NotRequired[int | None]
    lines: NotRequired[list[int] | None]
    """For edits: the 1-based line of each replaced occurrence."""
    matched: NotRequired[Matched | None]
    """For edits: how the search text was found (PROTOCOL §3)."""
    message: str
    number: int
    op: OpName
    output: NotRequired[str | None]
    """A command's kept output (`null` for other operations)."""
    path: NotRequired[str | None]
    rolled_back: NotRequired[bool]
    """Done, then undone because its unit (or, with `--atomic=document`,
    the document) failed: it left no trace.
    """
    shift: NotRequired[Shift | None]
    """For edits: how far the replacement was re-indented, if it was."""
    start: NotRequired[Position | None]
    """The opener line's start and the closer line's end (PROTOCOL §9.2)."""
    status: TaskStatus


class BlockReport(TypedDict):
    end: NotRequired[Position | None]
    kind: str
    """`tasks` for a TASKS block, `standalone` for a task of its own."""
    note: NotRequired[str | None]
    """What a rollback could not undo, or left in place (`--atomic`)."""
    number: int
    start: NotRequired[Position | None]
    """The opener line's start and the closer line's end (PROTOCOL §9.2)."""
    status: BlockStatus
    tasks: list[TaskReport]


class FixedLines(TypedDict):
    """Whole lines of a document as a fix leaves them."""
    end_line: int
    start_line: int
    """The first and last line the fix rewrites, 1-based, inclusive."""
    text: str
    """Their new text, without the last line feed."""


class FixReport(TypedDict):
    end: Position
    lines: FixedLines
    """The whole lines the fix rewrites as they read once it is made:
    what the text report shows (PROTOCOL §2.1).
    """
    replacement: str
    start: Position


class LabelReport(TypedDict):
    end: Position
    message: str
    start: Position


Severity: TypeAlias = Literal["error", "warning"]


class DiagnosticReport(TypedDict):
    """A diagnostic for programs."""
    block: NotRequired[int | None]
    code: ErrorType
    """The protocol's error type."""
    end: Position
    fix: NotRequired[FixReport | None]
    """A replacement that repairs the document (PROTOCOL §2.1)."""
    help: NotRequired[str | None]
    kind: str
    """The stable name of the problem."""
    labels: list[LabelReport]
    message: str
    severity: Severity
    start: Position
    task: NotRequired[int | None]


Dialect: TypeAlias = Literal["clada", "aider", "codex", "cml", "udiff", "cline"]
"""The edit formats clada reads."""


FileChange = TypedDict(
    "FileChange",
    {
        # Lines added to the file (0 for what is not a file's contents).
        "added": int,
        # The contents are not UTF-8: counts (of lines split at line feeds)
        # without a diff.
        "binary": NotRequired[bool],
        # `created`, `modified`, `removed` or `moved`.
        "change": str,
        # A unified diff of the file (`a/` and `b/` headers, 3 lines of
        # context), as much of it as fits the report: a file shows at most
        # 400 lines and 32 KiB of diff, a report 2000 lines and 128 KiB.
        # Absent for what is not a file's text (`binary`), and when nothing of
        # it fits.
        "diff": NotRequired[str | None],
        # Where a moved file or directory is now.
        "from": NotRequired[str | None],
        # Lines of the diff left out (it was cut, or the file held more than
        # 16 MiB: then its old lines all count as removed and its new ones as
        # added, and no diff is shown); absent when 0.
        "omitted": NotRequired[int],
        "path": str,
        # Lines removed from the file (a removed file's lines).
        "removed": int,
    },
)
"""One path a run changed, or a dry run would change (PROTOCOL §9.2)."""


class GitReport(TypedDict):
    after: NotRequired[str | None]
    before: NotRequired[str | None]
    error: NotRequired[str | None]
    note: NotRequired[str | None]
    """Why git was not used, when it was not."""


class UnreadEdit(TypedDict):
    """An edit no task came of: refused as a whole before anything ran."""
    first_line: str
    """That line, as the document has it (at most 200 characters)."""
    kind: str
    """Why: the error's kind (`malformed_marker`, `foreign_format`, …)."""
    line: int
    """The 1-based line it starts on."""


ResendEntry: TypeAlias = int | UnreadEdit
"""An entry of `resend.failed`: a task by its number, or an edit no task
came of by its place, so that a model can tell which of its edits it
is.
"""


class Resend(TypedDict):
    """The tasks of a run by what an agent should do with them next, as task
    numbers, and the edits no task came of (PROTOCOL §9.1). Every task, and
    every edit refused before it became one, is in exactly one list.
    """
    already_applied: list[int]
    """Edits whose change the file already has (`already_applied`): in
    effect, never send them again.
    """
    applied: list[int]
    """In effect: never send these again."""
    failed: list[ResendEntry]
    """Failed, or in a malformed unit: fix them, then send them again.
    Task numbers first, then the edits no task came of (a marker
    written wrong, a format the dialect does not read), by where they
    start.
    """
    needs_approval: list[int]
    """Commands nobody approved: the user must approve them (the error's
    `approve` line), then they can be sent again as written.
    """
    skipped: list[int]
    """Not carried out, or undone (`--atomic`): send them again as written."""


class ApplyReport(TypedDict):
    """The JSON object of `clada apply`. The blocks come before the totals:
    the report is written as the run goes, each block once it is final
    (PROTOCOL §9.2).
    """
    blocks: list[BlockReport]
    changes: NotRequired[list[FileChange]]
    """What the run changed (in a dry run: would change), path by path:
    what its tasks wrote, moved and removed, not what commands did.
    Absent when not asked for (`clada apply` in text without `--diff`).
    """
    diagnostics: list[DiagnosticReport]
    dialect: Dialect
    """The edit format the document was read in (PROTOCOL §11)."""
    dry_run: NotRequired[bool]
    """`--dry-run`: nothing was written, run or committed."""
    duration_ms: int
    error: NotRequired[ErrorReport | None]
    """What stopped the whole run before any task (a lock not acquired, a
    failed commit before the tasks).
    """
    git: GitReport
    ok: bool
    resend: NotRequired[Resend]
    """What to send again (PROTOCOL §9.1); in a dry run, what would be."""
    summary: ApplySummary
    undo: NotRequired[str | None]
    """How to take this run back (`clada undo -C ROOT`, PROTOCOL §7.5), or
    why it cannot be; absent when no task took effect, in a dry run and
    without clada's directories.
    """
    version: int


class CheckTask(TypedDict):
    end: Position
    number: int
    op: OpName
    path: NotRequired[str | None]
    start: Position
    valid: bool


class CheckBlock(TypedDict):
    end: Position
    kind: str
    number: int
    start: Position
    """The opener line's start and the closer line's end (PROTOCOL §9.2)."""
    tasks: list[CheckTask]
    valid: bool
    """Whether the unit would run: it has no error."""


class CheckSummary(TypedDict):
    blocks: int
    errors: int
    tasks: int
    warnings: int


class CheckReport(TypedDict):
    """The JSON object of `clada check`. As in `apply`'s, the blocks come
    before the totals: the report is written as the units are read.
    """
    blocks: list[CheckBlock]
    diagnostics: list[DiagnosticReport]
    dialect: Dialect
    """The edit format the document was read in (PROTOCOL §11)."""
    ok: bool
    summary: CheckSummary
    version: int
