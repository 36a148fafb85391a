// The Node package `clada`: check, apply and convert the edit documents
// language models write, in process. The reports' types are generated
// from the JSON Schemas (reports.d.ts, by gen-reports.mjs); this file is
// the functions and the errors.

import type { ApplyReport, Category, CheckReport, Dialect, ErrorType } from "./reports";

export * from "./reports";

/** A document: a model's reply, as a string or as bytes (read as a file is: bytes that are not UTF-8 give the `invalid_utf8` report). */
export type Document = string | Uint8Array;

/** `auto` (the default) detects the dialect of a document. */
export type DialectChoice = "auto" | Dialect;

/** The dialects `convert` writes. */
export type Target = "clada" | "aider" | "codex" | "udiff";

export interface CheckOptions {
  /** Default `"auto"`. */
  dialect?: DialectChoice;
}

export interface ApplyOptions {
  /** Default `"auto"`. */
  dialect?: DialectChoice;
  /** Plan everything, change nothing, report a diff per file (`changes`). Default false. */
  dryRun?: boolean;
  /** `true` or `"unit"`: a unit that fails leaves no trace; `"document"`: all or nothing. Default: none. */
  atomic?: boolean | "unit" | "document" | null;
  /** How a SEARCH finds its text. Default `"whitespace"`. */
  match?: "whitespace" | "exact";
  /** `false` (default: no commits), `true` (commit before and after, as `clada <clada@localhost>`), or the author, e.g. `"Ada <ada@example.com>"`. */
  git?: boolean | string | null;
  /**
   * Command lines approved for this call only (the exact text of a RUN's
   * body), besides built-in commands and those of `clada allow`; never
   * written anywhere. They hold at the root, as `clada allow` without
   * `--dir`. Nothing else runs, and nobody is asked.
   */
  allow?: readonly string[];
  /** Seconds, or a duration as the command line writes one ("30s", "500ms"): no command runs longer, and tasks not started by then are skipped. Default: 30 s per command, no limit on the run. */
  timeout?: number | string | null;
  /**
   * A document without any task (prose only, empty) is not an error
   * (`no_tasks`), for pipelines that pass every reply.
   */
  allowEmpty?: boolean;
}

/** Reads, checks and reports on a document; touches nothing. Throws {@link CladaError} (`input_too_large`) for a document over 50 MiB. */
export function check(document: Document, options?: CheckOptions): CheckReport;

/**
 * Applies a document to the directory `root`, as `clada apply --no-prompt
 * --format json` would, on a thread of libuv's pool: the event loop goes
 * on meanwhile. A document that fails (in part or whole) is a report whose
 * `ok` is false, with `resend` saying what to send again, and `changes`
 * what the run changed, path by path (lines `added` and `removed`, a
 * unified `diff` cut at 400 lines a file and 2000 a report). Rejects with a
 * {@link CladaError} when the call cannot run: a root that cannot be
 * opened, a document over 50 MiB, the lock not taken in time
 * (`lock_timeout`, retryable), a failed commit before the tasks; with a
 * `TypeError` for a bad argument (as every error of an async function, a
 * rejection, not a throw).
 */
export function apply(document: Document, root: string, options?: ApplyOptions): Promise<ApplyReport>;

/** {@link apply} on the calling thread: blocks the event loop while it runs. */
export function applySync(document: Document, root: string, options?: ApplyOptions): ApplyReport;

// ---------------------------------------------------------------------------
// applyFiles: the in-memory apply (PROTOCOL §7.6).
// ---------------------------------------------------------------------------

/** The options of {@link applyFiles}: those of {@link apply} that mean something without a disk. */
export interface ApplyFilesOptions {
  dialect?: DialectChoice;
  dryRun?: boolean;
  atomic?: boolean | "unit" | "document" | null;
  match?: "whitespace" | "exact";
  /** A document without any task is not an error (`no_tasks`). */
  allowEmpty?: boolean;
  /**
   * The report has `changes` (what the run changed, path by path, with a
   * unified diff per file) only when true, or in a dry run; default false:
   * the files after are the answer, and the diffs cost most of a small call.
   */
  changes?: boolean;
}

/** What {@link applyFiles} gives: the files after the run, and its report. */
export interface ApplyFilesResult {
  /**
   * Every file after the run, by path (a file removed is absent;
   * directories are implied), as bytes, in an object without a prototype
   * (a file named `__proto__` is a key like any other).
   */
  files: Record<string, Uint8Array>;
  report: ApplyReport;
}

/**
 * Applies a document to files held in memory, by path below a virtual
 * root (`src/a.ts`: no `.` or `..`, no `//`, not absolute): the same
 * engine, rules and report as {@link apply}, with no disk, no lock, no git
 * and no process (each RUN task is skipped). Contents are kept as bytes; a
 * string is taken as UTF-8. Throws {@link CladaError}: a key that is not
 * such a path, or a file where another key needs a directory
 * (`path_escape`), a document over 50 MiB or files over 400 MiB together
 * (`input_too_large`).
 */
export function applyFiles(
  document: Document,
  files: Readonly<Record<string, string | Uint8Array>> | ReadonlyMap<string, string | Uint8Array>,
  options?: ApplyFilesOptions,
): ApplyFilesResult;

export interface ConvertOptions {
  /** Default `"auto"`. */
  from?: DialectChoice;
}

/**
 * Rewrites a document in another dialect, as `clada convert --to TO` does.
 * Prose is dropped. Throws {@link CladaError} when the document has errors
 * (the type of the first; `.report` is the check report) and
 * {@link ConvertError} when `to` cannot express one of its tasks.
 */
export function convert(document: Document, to: Target, options?: ConvertOptions): string;

/** The system prompt of `clada prompt`: how to write edits clada applies. */
export function prompt(): string;

/** The JSON Schema (draft 2020-12) of a report, as `clada schema` prints it. */
export function schema(which: "apply" | "check"): Record<string, unknown>;

/** The package's version. */
export const version: string;

/**
 * A call that could not run, with the protocol's error type (PROTOCOL §8).
 * Thrown as the subclass of its category. A document that fails is not an
 * error: it is a report whose `ok` is false.
 */
export class CladaError extends Error {
  /** E.g. `"lock_timeout"`, `"file_not_found"` (the root), `"input_too_large"`. */
  readonly type: ErrorType;
  readonly category: Category;
  /** Whether the same call may succeed later unchanged (a lock another run held). */
  readonly retryable: boolean;
  /** The report that goes with it, when there is one (a run refused as a whole, the check report of a document `convert` cannot read). */
  readonly report: ApplyReport | CheckReport | null;
  constructor(message: string, type: ErrorType, category: Category, retryable: boolean, report?: ApplyReport | CheckReport | null);
}

/** A {@link CladaError} of category `validation`: the document or the input (`input_too_large`, a document `convert` cannot read). */
export class CladaValidationError extends CladaError {}
/** A {@link CladaError} of category `runtime`: the run (`file_not_found` for a root that does not exist, …). */
export class CladaRuntimeError extends CladaError {}
/** A {@link CladaError} of category `system`: the machine (`lock_timeout`, `permission_denied`, a failed commit before the tasks). */
export class CladaSystemError extends CladaError {}

/** A document without errors that the dialect asked for cannot express. */
export class ConvertError extends Error {
  /** The number of the task that cannot be written, or null when the whole document is the reason. */
  readonly task: number | null;
  constructor(message: string, task?: number | null);
}
