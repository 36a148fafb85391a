// A call that cannot run throws an Error subclass with the protocol's
// type; a bad argument is a TypeError; a failed document never throws.
import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { clada, tempDir } from "./support.mjs";

test("a root that does not exist rejects with CladaRuntimeError file_not_found", async () => {
  const missing = join(tempDir(), "nowhere");
  await assert.rejects(clada.apply("", missing), (e) => {
    assert.ok(e instanceof clada.CladaError);
    assert.ok(e instanceof clada.CladaRuntimeError);
    assert.ok(e instanceof Error);
    assert.equal(e.name, "CladaRuntimeError");
    assert.equal(e.type, "file_not_found");
    assert.equal(e.category, "runtime");
    assert.equal(e.retryable, false);
    assert.equal(e.report, null);
    assert.match(e.message, /nowhere/);
    return true;
  });
});

test("a document over 50 MiB is a CladaValidationError input_too_large", () => {
  const big = new Uint8Array(50 * 1024 * 1024 + 1).fill(0x78);
  assert.throws(() => clada.check(big), (e) => e instanceof clada.CladaValidationError && e.type === "input_too_large");
});

test("a document with errors is not converted: CladaError with the check report", () => {
  assert.throws(() => clada.convert('<<<<<<< WRITE path="a"\nx\n', "aider"), (e) => {
    assert.ok(e instanceof clada.CladaValidationError);
    assert.equal(e.type, "malformed_structure");
    assert.equal(e.report.ok, false);
    return true;
  });
});

test("a task the target cannot express is a ConvertError with its number", () => {
  assert.throws(() => clada.convert("<<<<<<< RUN\nls\n>>>>>>> END\n", "udiff"), (e) => {
    assert.ok(e instanceof clada.ConvertError);
    assert.ok(!(e instanceof clada.CladaError));
    assert.equal(e.task, 1);
    return true;
  });
});

test("bad arguments are TypeErrors naming them (apply's reject), and nothing runs", async () => {
  const root = tempDir();
  const cases = [
    [() => clada.check(42), /document must be a string or a Uint8Array/],
    [() => clada.check("", { dialect: "diff" }), /dialect="diff" is not a dialect/],
    [() => clada.check("", { dialet: "aider" }), /unknown option "dialet"/],
    [() => clada.apply("", root, { match: "fuzzy" }), /match="fuzzy"/],
    [() => clada.apply("", root, { atomic: "all" }), /atomic="all"/],
    [() => clada.apply("", root, { allow: "npm test" }), /allow must be an array/],
    [() => clada.apply("", root, { allow: [" "] }), /empty command/],
    [() => clada.apply("", root, { timeout: 0 }), /timeout must be seconds above 0/],
    [() => clada.apply("", root, { git: "<>" }), /git="<>"/],
    [() => clada.apply("", ""), /root must be the path of a directory/],
    [() => clada.convert("", "cml"), /to="cml" is not a dialect clada writes/],
    [() => clada.schema("report"), /there are two reports/],
  ];
  for (const [call, message] of cases) {
    const expected = (e) => {
      assert.ok(e instanceof TypeError, `${e}`);
      assert.match(e.message, message);
      return true;
    };
    // apply is asynchronous: its errors, a bad argument's too, reject.
    await assert.rejects(async () => call(), expected);
  }
});
