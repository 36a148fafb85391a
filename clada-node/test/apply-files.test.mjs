// applyFiles, the in-memory apply (PROTOCOL §7.6).
import assert from "node:assert/strict";
import { test } from "node:test";
import { clada } from "./support.mjs";

test("applyFiles edits files in memory and keeps their bytes", () => {
  const document = '<<<<<<< SEARCH path="a.txt"\none\n=======\ntwo\n>>>>>>> REPLACE\n';
  const input = { "a.txt": "zero\r\none\r\n", "b.bin": new Uint8Array([0xff]) };
  const { files, report } = clada.applyFiles(document, input);
  assert.equal(report.ok, true);
  assert.deepEqual(report.resend.applied, [1]);
  assert.equal(Buffer.from(files["a.txt"]).toString(), "zero\r\ntwo\r\n");
  assert.deepEqual([...files["b.bin"]], [0xff]);
  // The input is not changed.
  assert.equal(input["a.txt"], "zero\r\none\r\n");
  // A Map does as well as an object.
  assert.equal(clada.applyFiles(document, new Map(Object.entries(input))).report.ok, true);
});

test("applyFiles refuses keys that escape or are not normalised, naming them", () => {
  for (const key of ["../x", "/etc/passwd", "a/../b", "./a", "a//b"]) {
    assert.throws(() => clada.applyFiles("", { [key]: "x" }), (e) => {
      assert.ok(e instanceof clada.CladaValidationError, `${key}: ${e}`);
      assert.equal(e.type, "path_escape");
      assert.ok(e.message.includes(JSON.stringify(key)), e.message);
      return true;
    });
  }
});

test("applyFiles keeps a file named __proto__ as a file, never as a prototype", () => {
  const { files } = clada.applyFiles('<<<<<<< WRITE path="__proto__"\npolluted\n>>>>>>> END\n', {});
  assert.ok(Object.hasOwn(files, "__proto__"));
  assert.equal(Buffer.from(files["__proto__"]).toString(), "polluted\n");
  assert.equal(Object.getPrototypeOf(files), null);
  assert.equal({}.polluted, undefined);
});

test("applyFiles runs no command: a RUN task is skipped, never run", () => {
  const { report } = clada.applyFiles("<<<<<<< RUN\necho pwned > pwned\n>>>>>>> END\n", {});
  assert.equal(report.blocks[0].tasks[0].status, "skipped");
  assert.deepEqual(report.resend.skipped, [1]);
});

test("applyFiles checks its arguments", () => {
  assert.throws(() => clada.applyFiles("", ["a.txt"]), TypeError);
  assert.throws(() => clada.applyFiles("", { "a.txt": 1 }), TypeError);
  assert.throws(() => clada.applyFiles("", {}, { git: true }), /unknown option "git"/);
});


test("applyFiles gives the report's changes only when asked", () => {
  const document = '<<<<<<< SEARCH path="a.txt"\none\n=======\ntwo\n>>>>>>> REPLACE\n';
  const input = { "a.txt": "zero\none\n" };
  const plain = clada.applyFiles(document, input);
  assert.equal(plain.report.ok, true);
  assert.equal("changes" in plain.report, false);
  const asked = clada.applyFiles(document, input, { changes: true });
  assert.deepEqual(asked.report.changes, [
    { path: "a.txt", change: "modified", added: 1, removed: 1, diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n zero\n-one\n+two\n" },
  ]);
  // The rest of the report, and the files, are the same either way.
  const { changes, duration_ms: _a, ...rest } = asked.report;
  const { duration_ms: _b, ...plainRest } = plain.report;
  assert.deepEqual(rest, plainRest);
  assert.deepEqual(asked.files, plain.files);
  // A dry run always says what it would change.
  assert.equal(clada.applyFiles(document, input, { dryRun: true }).report.changes.length, 1);
  assert.throws(() => clada.applyFiles(document, input, { changes: "yes" }), /changes must be a boolean/);
  // Only the options' own `changes` counts, never one planted on a prototype.
  Object.prototype.changes = true;
  try {
    assert.equal(Object.hasOwn(clada.applyFiles(document, input).report, "changes"), false);
  } finally {
    delete Object.prototype.changes;
  }
});
