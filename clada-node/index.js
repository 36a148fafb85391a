// The Node package `clada`: check, apply and convert the edit documents
// language models write, in process (the addon clada.node, built from
// the Rust workspace by `npm install`). Types: index.d.ts.
"use strict";

const native = require("./clada.node");

/** A call that could not run, with the protocol's error type (PROTOCOL §8). */
class CladaError extends Error {
  constructor(message, type, category, retryable, report = null) {
    super(message);
    // The class's own name: CladaError, CladaSystemError, …
    this.name = new.target.name;
    this.type = type;
    this.category = category;
    this.retryable = retryable;
    this.report = report;
  }
}

/** A CladaError of category `validation`: the document or the input. */
class CladaValidationError extends CladaError {}
/** A CladaError of category `runtime`: the run (a root that does not exist). */
class CladaRuntimeError extends CladaError {}
/** A CladaError of category `system`: the machine (the lock, permissions, git). */
class CladaSystemError extends CladaError {}

const BY_CATEGORY = {
  validation: CladaValidationError,
  runtime: CladaRuntimeError,
  system: CladaSystemError,
};

/** A document without errors that the dialect asked for cannot express. */
class ConvertError extends Error {
  constructor(message, task = null) {
    super(message);
    this.name = "ConvertError";
    this.task = task;
  }
}

function invalid(message) {
  const error = new TypeError(message);
  error.code = "ERR_INVALID_ARG_VALUE";
  return error;
}

/** The value of an answer of the addon, or its error thrown. */
function settle(json) {
  const answer = JSON.parse(json);
  for (const warning of answer.warnings ?? []) {
    process.emitWarning(warning, "CladaWarning");
  }
  const e = answer.error;
  if (e === undefined) return answer.value;
  if (e.class === "CladaError") {
    const cls = BY_CATEGORY[e.category] ?? CladaError;
    throw new cls(e.message, e.type, e.category, e.retryable, e.report);
  }
  if (e.class === "ConvertError") throw new ConvertError(e.message, e.task);
  throw invalid(e.message);
}

/** A document as bytes: a string (UTF-8) or bytes (read as a file is). */
function documentBytes(document) {
  if (typeof document === "string") return Buffer.from(document, "utf8");
  if (document instanceof Uint8Array) {
    return Buffer.from(document.buffer, document.byteOffset, document.byteLength);
  }
  throw invalid(`document must be a string or a Uint8Array (a model's reply), not ${describe(document)}`);
}

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}

/**
 * The options given, as a fresh object of their own properties only: an
 * option inherited from a prototype (`Object.prototype.allow = [...]`,
 * planted by a polluted dependency) is never read, so nothing outside the
 * call can widen what it allows.
 */
function options(value, name) {
  // None given: an object without a prototype too, so that nothing is
  // read through Object.prototype either.
  if (value === undefined || value === null) return Object.create(null);
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalid(`${name} must be an object of options, not ${describe(value)}`);
  }
  const own = Object.create(null);
  for (const key of Object.keys(value)) own[key] = value[key];
  return own;
}

function string(value, name, fallback) {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "string") throw invalid(`${name} must be a string, not ${describe(value)}`);
  return value;
}

function knownKeys(given, known, call) {
  for (const key of Object.keys(given)) {
    if (!known.includes(key)) {
      throw invalid(`${call}: unknown option ${JSON.stringify(key)}; the options are ${known.join(", ")}`);
    }
  }
}

const APPLY_KEYS = ["dialect", "dryRun", "atomic", "match", "git", "allow", "timeout", "allowEmpty"];

/** The options of apply as the addon takes them. */
function applyOptions(given) {
  const o = options(given, "options");
  knownKeys(o, APPLY_KEYS, "apply");
  let atomic = null;
  if (o.atomic === true) atomic = "unit";
  else if (typeof o.atomic === "string") atomic = o.atomic;
  else if (o.atomic !== undefined && o.atomic !== null && o.atomic !== false) {
    throw invalid(`atomic must be false, true, "unit" or "document", not ${describe(o.atomic)}`);
  }
  let git = false;
  let author = null;
  if (typeof o.git === "string") [git, author] = [true, o.git];
  else if (typeof o.git === "boolean") git = o.git;
  else if (o.git !== undefined && o.git !== null) {
    throw invalid(`git must be a boolean or the author, e.g. "Ada <ada@example.com>", not ${describe(o.git)}`);
  }
  const allow = o.allow ?? [];
  if (!Array.isArray(allow) || allow.some((c) => typeof c !== "string")) {
    throw invalid(`allow must be an array of command lines, e.g. ["npm test"], not ${describe(allow)}`);
  }
  if (allow.some((c) => c.trim() === "")) {
    throw invalid(`allow holds an empty command, which approves nothing: give the exact command lines a RUN may carry, e.g. ["npm test"]`);
  }
  let timeout = null;
  let timeoutText = null;
  if (typeof o.timeout === "string") {
    timeoutText = o.timeout;
  } else if (o.timeout !== undefined && o.timeout !== null) {
    if (typeof o.timeout !== "number" || !(o.timeout > 0) || !Number.isFinite(o.timeout)) {
      throw invalid(`timeout must be seconds above 0, e.g. 120, a duration such as "30s", or null, not ${JSON.stringify(o.timeout)}`);
    }
    timeout = o.timeout;
  }
  if (o.dryRun !== undefined && typeof o.dryRun !== "boolean") {
    throw invalid(`dryRun must be a boolean, not ${describe(o.dryRun)}`);
  }
  if (o.allowEmpty !== undefined && typeof o.allowEmpty !== "boolean") {
    throw invalid(`allowEmpty must be a boolean, not ${describe(o.allowEmpty)}`);
  }
  // napi takes an absent field, not null, for none; and it looks a field
  // up through the prototype chain: the object has none.
  const native = Object.assign(Object.create(null), {
    dialect: string(o.dialect, "dialect", "auto"),
    dryRun: o.dryRun ?? false,
    match: string(o.match, "match", "whitespace"),
    git,
    allow: [...allow],
    allowEmpty: o.allowEmpty ?? false,
  });
  if (atomic !== null) native.atomic = atomic;
  if (author !== null) native.author = author;
  if (timeout !== null) native.timeout = timeout;
  if (timeoutText !== null) native.timeoutText = timeoutText;
  return native;
}

function rootPath(root) {
  if (typeof root !== "string" || root === "") {
    throw invalid(`root must be the path of a directory, a non-empty string, not ${describe(root)}`);
  }
  return root;
}

function check(document, opts) {
  const o = options(opts, "options");
  knownKeys(o, ["dialect"], "check");
  return settle(native.checkJson(documentBytes(document), string(o.dialect, "dialect", "auto")));
}

async function apply(document, root, opts) {
  // Arguments are checked before the promise: a wrong call throws at once.
  const json = native.applyJson(documentBytes(document), rootPath(root), applyOptions(opts));
  return settle(await json);
}

function applySync(document, root, opts) {
  return settle(native.applySyncJson(documentBytes(document), rootPath(root), applyOptions(opts)));
}

// applyFiles, in memory (PROTOCOL §7.6).
const FILES_KEYS = ["dialect", "dryRun", "atomic", "match", "allowEmpty", "changes"];

function applyFiles(document, files, opts) {
  const bytes = documentBytes(document);
  const o = options(opts, "options");
  knownKeys(o, FILES_KEYS, "applyFiles");
  const { paths, contents } = fileMap(files);
  // `changes` is applyFiles' own (apply always reports them).
  const { changes, ...rest } = o;
  if (changes !== undefined && typeof changes !== "boolean") {
    throw invalid(`changes must be a boolean, not ${describe(changes)}`);
  }
  const settings = applyOptions(rest);
  settings.changes = changes ?? false;
  const answer = native.applyFilesJson(bytes, paths, contents, settings);
  const report = settle(answer.json);
  // The files by path, in an object without a prototype: a file named
  // `__proto__` or `constructor` is a key like any other.
  const after = Object.create(null);
  answer.paths.forEach((path, i) => {
    Object.defineProperty(after, path, { value: answer.contents[i], enumerable: true, writable: true, configurable: true });
  });
  return { files: after, report };
}

/** `files`: a Map or an object, of paths to strings (UTF-8) or bytes. */
function fileMap(files) {
  let entries;
  if (files instanceof Map) entries = [...files.entries()];
  else if (files !== null && typeof files === "object" && !Array.isArray(files)) entries = Object.entries(files);
  else throw invalid(`files must be an object or a Map of paths to contents, not ${describe(files)}`);
  const paths = [];
  const contents = [];
  for (const [path, value] of entries) {
    if (typeof path !== "string") throw invalid(`files has the key ${String(path)}: each path is a string`);
    if (typeof value === "string") contents.push(Buffer.from(value, "utf8"));
    else if (value instanceof Uint8Array) contents.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    else throw invalid(`files[${JSON.stringify(path)}] is ${describe(value)}: contents are strings or Uint8Arrays`);
    paths.push(path);
  }
  return { paths, contents };
}

function convert(document, to, opts) {
  const o = options(opts, "options");
  knownKeys(o, ["from"], "convert");
  return settle(native.convertJson(documentBytes(document), string(to, "to", undefined), string(o.from, "from", "auto")));
}

function prompt() {
  return native.prompt();
}

function schema(which) {
  return settle(native.schemaJson(string(which, "which", "")));
}

const version = native.version();

module.exports = {
  check,
  apply,
  applySync,
  applyFiles,
  convert,
  prompt,
  schema,
  version,
  CladaError,
  CladaValidationError,
  CladaRuntimeError,
  CladaSystemError,
  ConvertError,
};
