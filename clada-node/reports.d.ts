// The reports of clada as TypeScript types: what `check` and `apply`
// return, field for field the JSON of `clada check|apply --format json`
// (PROTOCOL §9.2).
//
// Generated from grammar/schema/*.json by clada-node/gen-reports.mjs; do
// not edit: run `node clada-node/gen-reports.mjs` after changing the schemas.

/**
 * The JSON object of `clada apply`. The blocks come before the totals:
 * the report is written as the run goes, each block once it is final
 * (PROTOCOL §9.2).
 */
export interface ApplyReport {
  blocks: BlockReport[];
  /**
   * What the run changed (in a dry run: would change), path by path:
   * what its tasks wrote, moved and removed, not what commands did.
   * Absent when not asked for (`clada apply` in text without `--diff`).
   */
  changes?: FileChange[];
  diagnostics: DiagnosticReport[];
  /** The edit format the document was read in (PROTOCOL §11). */
  dialect: Dialect;
  /** `--dry-run`: nothing was written, run or committed. */
  dry_run?: boolean;
  duration_ms: number;
  /**
   * What stopped the whole run before any task (a lock not acquired, a
   * failed commit before the tasks).
   */
  error?: ErrorReport | null;
  git: GitReport;
  ok: boolean;
  /** What to send again (PROTOCOL §9.1); in a dry run, what would be. */
  resend?: Resend;
  summary: ApplySummary;
  /**
   * How to take this run back (`clada undo -C ROOT`, PROTOCOL §7.5), or
   * why it cannot be; absent when no task took effect, in a dry run and
   * without clada's directories.
   */
  undo?: string | null;
  version: number;
}

export interface ApplySummary {
  /**
   * Applied before (`already_applied`): nothing to do, and no failure.
   * Not counted in `succeeded`.
   */
  already_applied: number;
  blocks: number;
  failed: number;
  /** Succeeded, then undone (`--atomic`); counted in `succeeded` too. */
  rolled_back?: number;
  skipped: number;
  /** Applied by this run. */
  succeeded: number;
  tasks: number;
}

export interface BlockReport {
  end?: Position | null;
  /** `tasks` for a TASKS block, `standalone` for a task of its own. */
  kind: string;
  /** What a rollback could not undo, or left in place (`--atomic`). */
  note?: string | null;
  number: number;
  /** The opener line's start and the closer line's end (PROTOCOL §9.2). */
  start?: Position | null;
  status: BlockStatus;
  tasks: TaskReport[];
}

export type BlockStatus = "success" | "failed" | "malformed";

/** Who is at fault, broadly: the document, the run, or the system. */
export type Category = "validation" | "runtime" | "system";

export interface CheckBlock {
  end: Position;
  kind: string;
  number: number;
  /** The opener line's start and the closer line's end (PROTOCOL §9.2). */
  start: Position;
  tasks: CheckTask[];
  /** Whether the unit would run: it has no error. */
  valid: boolean;
}

/**
 * The JSON object of `clada check`. As in `apply`'s, the blocks come
 * before the totals: the report is written as the units are read.
 */
export interface CheckReport {
  blocks: CheckBlock[];
  diagnostics: DiagnosticReport[];
  /** The edit format the document was read in (PROTOCOL §11). */
  dialect: Dialect;
  ok: boolean;
  summary: CheckSummary;
  version: number;
}

export interface CheckSummary {
  blocks: number;
  errors: number;
  tasks: number;
  warnings: number;
}

export interface CheckTask {
  end: Position;
  number: number;
  op: OpName;
  path?: string | null;
  start: Position;
  valid: boolean;
}

/**
 * When an edit found several equal candidates and one was taken: how
 * many, and what chose it (the nearest to its line hint, or the order of
 * a file's hunks).
 */
export interface Chosen {
  by: ChosenBy;
  candidates: number;
  /** The line the edit was written for (`by: "line"`). */
  hint?: number | null;
}

/** What chose one of several equal candidates. */
export type ChosenBy = "line" | "order";

/** The region of a file most like the search text. */
export interface Closest {
  /** A unified diff from the search text to the region. */
  diff: string;
  /**
   * When the two differ only in white space, or the search has lines the
   * file cannot have (a copied fence or file name, blank lines at its
   * ends): what exactly, in words.
   */
  difference?: string | null;
  end_line: number;
  /** 0 to 1: the share of characters the two texts have in common. */
  similarity: number;
  /** 1-based, inclusive. */
  start_line: number;
}

export type Count = number | "all";

/** A diagnostic for programs. */
export interface DiagnosticReport {
  block?: number | null;
  /** The protocol's error type. */
  code: ErrorType;
  end: Position;
  /** A replacement that repairs the document (PROTOCOL §2.1). */
  fix?: FixReport | null;
  help?: string | null;
  /** The stable name of the problem. */
  kind: string;
  labels: LabelReport[];
  message: string;
  severity: Severity;
  start: Position;
  task?: number | null;
}

/** The edit formats clada reads. */
export type Dialect = "clada" | "aider" | "codex" | "cml" | "udiff" | "cline";

/**
 * An error for programs: its type, category and retryability from the
 * protocol's table, and the facts that come with it.
 */
export interface ErrorReport {
  /**
   * Where the replacement already stands (the edit was applied there
   * before).
   */
  applied_lines?: number[];
  /**
   * For a command nobody approved: the `clada allow` line that approves
   * exactly it, for the user to run.
   */
  approve?: string | null;
  category: Category;
  closest?: Closest | null;
  /** For `file_not_found`: the existing path most like the one named. */
  closest_path?: string | null;
  dangling_starts?: number[];
  end_lines?: number[];
  /**
   * The occurrences found (the first five), each with a line either
   * side.
   */
  excerpts?: Excerpt[];
  expected?: Count | null;
  found?: number | null;
  /** What to do about it, in one line. */
  hint?: string | null;
  /**
   * Why a match at another indentation was not applied: the three
   * indentations (`indentation_mismatch`).
   */
  indentation?: Indentation | null;
  /**
   * Where the search text occurs, but not as whole lines, which a
   * line-based dialect's edit matches (PROTOCOL §11).
   */
  inside_lines?: number[];
  lines?: number[] | null;
  /** The occurrences were found by a pass beyond exact text. */
  matched?: Matched | null;
  message: string;
  /**
   * Where the search text occurs as whole lines but does not end the
   * file, as `\ No newline at end of file` asks (PROTOCOL §11.8).
   */
  not_at_end?: number[];
  os_error?: string | null;
  /** First and last line of each occurrence (PROTOCOL §9.2). */
  ranges?: number[][] | null;
  replacement_present?: boolean | null;
  retryable: boolean;
  start_lines?: number[];
  type: ErrorType;
}

/** What kind of failure an error is; fixed by the protocol. */
export type ErrorType =
  | "malformed_structure"
  | "invalid_utf8"
  | "input_too_large"
  | "path_escape"
  | "symlink_not_allowed"
  | "command_not_allowed"
  | "match_count_mismatch"
  | "already_applied"
  | "indentation_mismatch"
  | "file_not_found"
  | "file_exists"
  | "permission_denied"
  | "exec_failed"
  | "exec_timeout"
  | "lock_timeout"
  | "file_changed"
  | "sandbox_unavailable"
  | "git_operation_failed";

/** An occurrence of a search text, with a line either side (PROTOCOL §9). */
export interface Excerpt {
  /** The line the occurrence starts on. */
  line: number;
  /** The 1-based line of the first line shown. */
  start_line: number;
  /** The lines shown, without their line breaks. */
  text: string[];
}

/** One path a run changed, or a dry run would change (PROTOCOL §9.2). */
export interface FileChange {
  /** Lines added to the file (0 for what is not a file's contents). */
  added: number;
  /**
   * The contents are not UTF-8: counts (of lines split at line feeds)
   * without a diff.
   */
  binary?: boolean;
  /** `created`, `modified`, `removed` or `moved`. */
  change: string;
  /**
   * A unified diff of the file (`a/` and `b/` headers, 3 lines of
   * context), as much of it as fits the report: a file shows at most
   * 400 lines and 32 KiB of diff, a report 2000 lines and 128 KiB.
   * Absent for what is not a file's text (`binary`), and when nothing of
   * it fits.
   */
  diff?: string | null;
  /** Where a moved file or directory is now. */
  from?: string | null;
  /**
   * Lines of the diff left out (it was cut, or the file held more than
   * 16 MiB: then its old lines all count as removed and its new ones as
   * added, and no diff is shown); absent when 0.
   */
  omitted?: number;
  path: string;
  /** Lines removed from the file (a removed file's lines). */
  removed: number;
}

export interface FixReport {
  end: Position;
  /**
   * The whole lines the fix rewrites as they read once it is made:
   * what the text report shows (PROTOCOL §2.1).
   */
  lines: FixedLines;
  replacement: string;
  start: Position;
}

/** Whole lines of a document as a fix leaves them. */
export interface FixedLines {
  end_line: number;
  /** The first and last line the fix rewrites, 1-based, inclusive. */
  start_line: number;
  /** Their new text, without the last line feed. */
  text: string;
}

export interface GitReport {
  after?: string | null;
  before?: string | null;
  error?: string | null;
  /** Why git was not used, when it was not. */
  note?: string | null;
}

/** What keeps a shifted match from being applied. */
export type IndentProblem = "replacement" | "uneven" | "characters" | "shallow" | "occurrences";

/**
 * Why a match that needs re-indenting was not applied (PROTOCOL §3): the
 * three indentations, and what keeps the result from being determined.
 */
export interface Indentation {
  /** How the file indents that line. */
  file: string;
  /** The 1-based line of the file the indentations are of. */
  line: number;
  problem: IndentProblem;
  /** How the replacement indents its first non-blank line. */
  replacement: string;
  /** How the search text indents it. */
  search: string;
}

export interface LabelReport {
  end: Position;
  message: string;
  start: Position;
}

/**
 * How an edit found the text it replaced (PROTOCOL §3): exactly, or by a
 * pass that looks beyond exact text once no exact occurrence exists.
 */
export type Matched = "exact" | "whitespace" | "trailing" | "trimmed" | "unicode";

/** The operation names used in reports. */
export type OpName = "write" | "edit" | "edit_range" | "run" | "move" | "remove";

/**
 * A position for people: 1-based line, 1-based column in Unicode scalar
 * values, and the byte offset it was computed from.
 */
export interface Position {
  column: number;
  line: number;
  offset: number;
}

/**
 * The tasks of a run by what an agent should do with them next, as task
 * numbers, and the edits no task came of (PROTOCOL §9.1). Every task, and
 * every edit refused before it became one, is in exactly one list.
 */
export interface Resend {
  /**
   * Edits whose change the file already has (`already_applied`): in
   * effect, never send them again.
   */
  already_applied: number[];
  /** In effect: never send these again. */
  applied: number[];
  /**
   * Failed, or in a malformed unit: fix them, then send them again.
   * Task numbers first, then the edits no task came of (a marker
   * written wrong, a format the dialect does not read), by where they
   * start.
   */
  failed: ResendEntry[];
  /**
   * Commands nobody approved: the user must approve them (the error's
   * `approve` line), then they can be sent again as written.
   */
  needs_approval: number[];
  /** Not carried out, or undone (`--atomic`): send them again as written. */
  skipped: number[];
}

/**
 * An entry of `resend.failed`: a task by its number, or an edit no task
 * came of by its place, so that a model can tell which of its edits it
 * is.
 */
export type ResendEntry = number | UnreadEdit;

export type Severity = "error" | "warning";

/**
 * How far the replacement was re-indented to stand where the search text
 * was found (PROTOCOL §3): the file indents those lines by `indent` more
 * (or less) than the edit wrote them.
 */
export interface Shift {
  /**
   * Characters of indentation added to each non-blank line of the
   * replacement; negative when taken away.
   */
  by: number;
  /** The characters added (or taken away), the file's own. */
  indent: string;
}

export interface TaskReport {
  /** For edits with a line hint: which of several candidates was taken. */
  chosen?: Chosen | null;
  duration_ms?: number | null;
  end?: Position | null;
  error?: ErrorReport | null;
  exit_code?: number | null;
  /** For edits: the 1-based line of each replaced occurrence. */
  lines?: number[] | null;
  /** For edits: how the search text was found (PROTOCOL §3). */
  matched?: Matched | null;
  message: string;
  number: number;
  op: OpName;
  /** A command's kept output (`null` for other operations). */
  output?: string | null;
  path?: string | null;
  /**
   * Done, then undone because its unit (or, with `--atomic=document`,
   * the document) failed: it left no trace.
   */
  rolled_back?: boolean;
  /** For edits: how far the replacement was re-indented, if it was. */
  shift?: Shift | null;
  /** The opener line's start and the closer line's end (PROTOCOL §9.2). */
  start?: Position | null;
  status: TaskStatus;
}

export type TaskStatus = "success" | "failed" | "skipped" | "already_applied";

/** An edit no task came of: refused as a whole before anything ran. */
export interface UnreadEdit {
  /** That line, as the document has it (at most 200 characters). */
  first_line: string;
  /** Why: the error's kind (`malformed_marker`, `foreign_format`, …). */
  kind: string;
  /** The 1-based line it starts on. */
  line: number;
}
