// check, apply, convert, prompt and schema do what the commands do.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { clada, exampleProject, tempDir, tour, tree } from "./support.mjs";

const EDIT = `<<<<<<< SEARCH path="a.txt"
one
=======
two
>>>>>>> REPLACE
`;

test("check reads a document and touches nothing", () => {
  const report = clada.check(tour());
  assert.equal(report.ok, true);
  assert.equal(report.dialect, "clada");
  assert.equal(report.summary.blocks, 6);
  const broken = clada.check('<<<<<<< WRITE path="a"\nx\n');
  assert.equal(broken.ok, false);
  assert.equal(broken.diagnostics[0].code, "malformed_structure");
});

test("a document in bytes that are not UTF-8 is a report, not an error", () => {
  const report = clada.check(new Uint8Array([0x6f, 0x6b, 0x0a, 0xff, 0x0a]));
  assert.equal(report.ok, false);
  assert.equal(report.diagnostics[0].code, "invalid_utf8");
});

test("apply of the tour as a dry run changes nothing and reports what it would", async () => {
  const root = exampleProject();
  const before = tree(root);
  const report = await clada.apply(tour(), root, { dryRun: true });
  assert.deepEqual(report.summary, { blocks: 6, tasks: 9, succeeded: 9, already_applied: 0, failed: 0, skipped: 0 });
  assert.equal(report.dry_run, true);
  assert.ok(report.changes.length > 0);
  assert.deepEqual(tree(root), before);
});

test("apply writes, keeps the report's key order, and commits nothing unless asked", async () => {
  const root = tempDir();
  execFileSync("git", ["init", "-q"], { cwd: root });
  writeFileSync(join(root, "a.txt"), "one\n");
  const report = await clada.apply(EDIT, root);
  assert.equal(report.ok, true);
  assert.deepEqual(report.resend, { applied: [1], already_applied: [], failed: [], needs_approval: [], skipped: [] });
  assert.equal(readFileSync(join(root, "a.txt"), "utf8"), "two\n");
  // The command line's order: version first, as `clada apply --format json` writes it.
  assert.deepEqual(Object.keys(report).slice(0, 3), ["version", "dialect", "blocks"]);
  assert.equal(report.git.committed, undefined);
  assert.throws(() => execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, stdio: "pipe" }));
});

test("a real run's report says what it changed, with counts and a diff", async () => {
  const root = tempDir();
  writeFileSync(join(root, "a.txt"), "one\n");
  const report = await clada.apply(EDIT + '<<<<<<< WRITE path="b.txt"\nb\n>>>>>>> END\n', root);
  assert.equal(report.ok, true);
  assert.equal(report.dry_run, undefined);
  assert.deepEqual(
    report.changes?.map((c) => [c.path, c.change, c.added, c.removed]),
    [["a.txt", "modified", 1, 1], ["b.txt", "created", 1, 0]],
  );
  assert.equal(report.changes?.[0].diff, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n");
  assert.equal(report.changes?.[0].omitted, undefined);
  // In memory, the same, when asked.
  const { report: inMemory } = clada.applyFiles(EDIT, { "a.txt": "one\n" }, { changes: true });
  assert.deepEqual(inMemory.changes, [report.changes?.[0]]);
});

test("git: \"Name <email>\" commits as that author", async () => {
  const root = tempDir();
  execFileSync("git", ["init", "-q"], { cwd: root });
  writeFileSync(join(root, "a.txt"), "one\n");
  const report = await clada.apply(EDIT, root, { git: "Ada <ada@example.com>" });
  assert.equal(report.ok, true, JSON.stringify(report));
  const author = execFileSync("git", ["log", "-1", "--format=%an <%ae>"], { cwd: root }).toString().trim();
  assert.equal(author, "Ada <ada@example.com>");
});

test("a failed edit is a report whose resend names it", () => {
  const root = tempDir();
  writeFileSync(join(root, "a.txt"), "three\n");
  const report = clada.applySync(EDIT, root);
  assert.equal(report.ok, false);
  assert.deepEqual(report.resend.failed, [1]);
  const task = report.blocks[0].tasks[0];
  assert.equal(task.status, "failed");
  assert.equal(task.error.type, "match_count_mismatch");
  assert.equal(readFileSync(join(root, "a.txt"), "utf8"), "three\n");
});

test("apply runs off the event loop: timers fire while it works; applySync blocks them", async () => {
  const root = tempDir();
  const slow = "<<<<<<< RUN\nsleep 0.4\n>>>>>>> END\n";
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  try {
    const report = await clada.apply(slow, root, { allow: ["sleep 0.4"] });
    assert.equal(report.ok, true, JSON.stringify(report.blocks));
    assert.ok(ticks >= 5, `only ${ticks} ticks of 20 ms during a 400 ms apply`);
    ticks = 0;
    clada.applySync(slow, root, { allow: ["sleep 0.4"] });
    assert.equal(ticks, 0);
  } finally {
    clearInterval(timer);
  }
});

test("a command nobody approved does not run, and says how to approve it", async () => {
  const root = tempDir();
  const report = await clada.apply("<<<<<<< RUN\ntouch ran && true\n>>>>>>> END\n", root);
  assert.equal(report.ok, false);
  assert.deepEqual(report.resend.needs_approval, [1]);
  assert.equal(report.blocks[0].tasks[0].error.type, "command_not_allowed");
  assert.equal(existsSync(join(root, "ran")), false);
});

test("convert writes another dialect", () => {
  const aider = clada.convert(EDIT, "aider");
  assert.match(aider, /<<<<<<< SEARCH\none\n=======\ntwo\n>>>>>>> REPLACE/);
  assert.equal(clada.check(aider, { dialect: "aider" }).ok, true);
});

test("prompt and schema are the command line's", () => {
  assert.match(clada.prompt(), /SEARCH/);
  const apply = clada.schema("apply");
  assert.equal(apply.title, "ApplyReport");
  assert.deepEqual(apply, JSON.parse(readFileSync(new URL("../../grammar/schema/apply.json", import.meta.url), "utf8")));
  assert.equal(clada.schema("check").title, "CheckReport");
  assert.equal(typeof clada.version, "string");
});
