// The attack corpus (corpus/security/, format in its README) through the
// Node door: each case whose set-up is plain files, directories, links and
// approvals at the root (given as `allow`, which holds at the root as
// `clada allow` does) is applied with `apply`, and checked for its own
// expectations and for the promises: the canary beside the root stays
// empty, the secret is never in the report and never changed. Cases that
// need a flag, a repository or clada's directories in the root run through
// the command line (clada-cli/tests/security.rs) and the Python package.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { REPO, clada, tempDir } from "./support.mjs";

const CORPUS = join(REPO, "corpus", "security");
const HANDLED = new Set(["task", "exit", "file", "dir", "link", "approve", "absent", "present", "content"]);

function unescape(text) {
  return text.replaceAll("\\n", "\n");
}

function readCase(name) {
  const lines = readFileSync(join(CORPUS, name, "expect"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  if (existsSync(join(CORPUS, name, "doc2.md"))) return null;
  if (!lines.every((l) => HANDLED.has(l.split(" ")[0]))) return null;
  return lines;
}

const cases = readdirSync(CORPUS).filter((n) => existsSync(join(CORPUS, n, "expect"))).sort();
const runnable = cases.filter((n) => readCase(n) !== null);

test("the corpus has cases the Node door runs", () => {
  assert.ok(runnable.length >= 40, `only ${runnable.length} of ${cases.length}`);
});

for (const name of runnable) {
  test(`security case ${name}`, async () => {
    const lines = readCase(name);
    const scratch = tempDir();
    const root = join(scratch, "root");
    const outside = join(scratch, "outside");
    const home = join(scratch, "home");
    const tmp = join(scratch, "tmp");
    const secretPath = join(scratch, "secret.txt");
    const secret = `secret-${Math.random().toString(36).slice(2)}-${name}`;
    for (const d of [root, outside, home, tmp]) mkdirSync(d, { recursive: true });
    writeFileSync(secretPath, secret);
    // clada's directories, read when the call is made.
    Object.assign(process.env, {
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      XDG_STATE_HOME: join(home, ".local", "state"),
      XDG_RUNTIME_DIR: join(home, "run"),
      TMPDIR: tmp,
    });
    mkdirSync(join(home, "run"), { recursive: true, mode: 0o700 });
    const fill = (text) =>
      text.replaceAll("{ROOT}", root).replaceAll("{OUTSIDE}", outside).replaceAll("{SECRET}", secretPath).replaceAll("{TMP}", tmp);
    const allow = [];
    const expectations = [];
    for (const line of lines) {
      const [kind, ...rest] = line.split(" ");
      const arg = rest.join(" ");
      if (kind === "file") {
        const [path, ...content] = rest;
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), unescape(fill(content.join(" "))));
      } else if (kind === "dir") mkdirSync(join(root, arg), { recursive: true });
      else if (kind === "link") {
        const [path, target] = rest;
        mkdirSync(dirname(join(root, path)), { recursive: true });
        symlinkSync(fill(target), join(root, path));
      } else if (kind === "approve") allow.push(fill(arg));
      else expectations.push([kind, rest]);
    }
    const document = fill(readFileSync(join(CORPUS, name, "doc.md"), "utf8"));
    const report = await clada.apply(document, root, { allow });
    const tasks = new Map(report.blocks.flatMap((b) => b.tasks).map((t) => [t.number, t]));
    const shown = JSON.stringify(report);
    for (const [kind, rest] of expectations) {
      if (kind === "task") {
        const [n, status, type] = rest;
        const task = tasks.get(Number(n));
        assert.ok(task, `task ${n} is not in the report: ${shown}`);
        if (status === "rolled-back") assert.equal(task.rolled_back, true);
        else assert.equal(task.status, status, `task ${n}: ${JSON.stringify(task)}`);
        if (status === "failed" && type !== "*") assert.equal(task.error?.type, type, `task ${n}: ${JSON.stringify(task)}`);
      } else if (kind === "exit") {
        // The command line's exit code: 0 is a report that is ok.
        assert.equal(report.ok, rest[0] === "0", `exit ${rest[0]}: ${shown}`);
      } else if (kind === "absent") assert.equal(existsSync(join(root, rest[0])), false, `${rest[0]} exists`);
      else if (kind === "present") assert.equal(existsSync(join(root, rest[0])), true, `${rest[0]} is missing`);
      else if (kind === "content") {
        const [path, ...content] = rest;
        assert.equal(readFileSync(join(root, path), "utf8"), unescape(fill(content.join(" "))));
      }
    }
    assert.deepEqual(readdirSync(outside), [], "the canary directory beside the root was written");
    assert.equal(readFileSync(secretPath, "utf8"), secret, "the secret was changed");
    assert.ok(!shown.includes(secret), "the secret is in the report");
  });
}
