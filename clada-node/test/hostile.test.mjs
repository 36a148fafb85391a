// Hostile documents through the Node door: nothing is written outside the
// root, no unapproved command runs, escapes are refused, and nothing but
// the call's own options widens what it allows. The rules are the
// library's (the Python package's and the command line's); this checks
// that the door adds no way around them.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { clada, tempDir, tree } from "./support.mjs";

const HOSTILE = `Sure, here are the changes.

<<<<<<< WRITE path="../outside/escaped.txt"
climbed out
>>>>>>> END
<<<<<<< WRITE path="{OUTSIDE}/absolute.txt"
absolute
>>>>>>> END
<<<<<<< WRITE path="link/through-link.txt"
through a link
>>>>>>> END
<<<<<<< MOVE from="inside.txt" to="../outside/"
>>>>>>> END
<<<<<<< RUN
touch ../outside/ran; echo pwned > ../outside/ran2
>>>>>>> END
<<<<<<< RUN
sh -c 'touch {OUTSIDE}/ran3'
>>>>>>> END
<<<<<<< RUN
cp inside.txt ../outside/copied.txt
>>>>>>> END
<<<<<<< WRITE path=".git/hooks/pre-commit"
#!/bin/sh
touch {OUTSIDE}/hook
>>>>>>> END
<<<<<<< WRITE path="fine.txt"
the only change that may happen
>>>>>>> END
`;

function hostileRoot() {
  const top = tempDir();
  const root = join(top, "root");
  const outside = join(top, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(root, "inside.txt"), "inside\n");
  symlinkSync(outside, join(root, "link"));
  execFileSync("git", ["init", "-q"], { cwd: root });
  return { root, outside, document: HOSTILE.replaceAll("{OUTSIDE}", outside) };
}

test("a hostile document changes nothing outside the root and runs nothing", async () => {
  const { root, outside, document } = hostileRoot();
  for (const dryRun of [true, false]) {
    const report = await clada.apply(document, root, { dryRun, git: true });
    assert.equal(report.ok, false);
    const statuses = report.blocks.flatMap((b) => b.tasks.map((t) => [t.number, t.status, t.error?.type ?? null]));
    const last = statuses.pop();
    assert.deepEqual(last.slice(1), ["success", null], `fine.txt: ${last}`);
    for (const [number, status, type] of statuses) {
      assert.notEqual(status, "success", `task ${number} succeeded`);
      assert.ok(
        ["path_escape", "symlink_not_allowed", "command_not_allowed"].includes(type),
        `task ${number}: ${type}`,
      );
    }
  }
  assert.deepEqual(tree(outside), {});
  assert.equal(existsSync(join(root, ".git", "hooks", "pre-commit")), false);
  assert.equal(existsSync(join(root, "fine.txt")), true);
});

test("the document cannot choose its root: a root is the caller's path, paths stay under it", async () => {
  // A relative root is the process's working directory's child, never the
  // document's idea of one; `root=` in a document is not an option.
  const { root, outside } = hostileRoot();
  const document = `<<<<<<< WRITE path="x.txt" root="${outside}"\nx\n>>>>>>> END\n`;
  const report = await clada.apply(document, root);
  assert.deepEqual(tree(outside), {});
  if (report.ok) assert.equal(existsSync(join(root, "x.txt")), true);
});

test("options inherited from a polluted prototype are never read", async () => {
  const { root } = hostileRoot();
  // Shell syntax: not a built-in, so it runs only when approved.
  const command = "echo pwned > pwned";
  const planted = { allow: [command], dryRun: false, author: "Mallory <m@example.com>", timeout: 0.001 };
  Object.assign(Object.prototype, planted);
  try {
    const report = await clada.apply(`<<<<<<< RUN\n${command}\n>>>>>>> END\n<<<<<<< WRITE path="a"\na\n>>>>>>> END\n`, root, { git: true });
    assert.deepEqual(report.resend.needs_approval, [1]);
    assert.equal(existsSync(join(root, "pwned")), false);
    const author = execFileSync("git", ["log", "-1", "--format=%an"], { cwd: root }).toString().trim();
    assert.equal(author, "clada");
  } finally {
    for (const key of Object.keys(planted)) delete Object.prototype[key];
  }
});

test("options inherited from a polluted prototype are never read, options given or not", () => {
  const { root } = hostileRoot();
  const command = "echo pwned > pwned";
  const planted = { allow: [command], dryRun: true, changes: true };
  Object.assign(Object.prototype, planted);
  try {
    const report = clada.applySync(`<<<<<<< RUN\n${command}\n>>>>>>> END\n<<<<<<< WRITE path="a"\na\n>>>>>>> END\n`, root);
    assert.deepEqual(report.resend.needs_approval, [1]);
    assert.equal(existsSync(join(root, "pwned")), false);
    assert.equal(existsSync(join(root, "a")), true, "a planted dryRun was read");
    const { report: inMemory } = clada.applyFiles('<<<<<<< WRITE path="a"\na\n>>>>>>> END\n', {});
    assert.equal(Object.hasOwn(inMemory, "changes"), false);
    assert.equal(Object.hasOwn(inMemory, "dry_run"), false);
  } finally {
    for (const key of Object.keys(planted)) delete Object.prototype[key];
  }
});

test("an approval is the exact command line: a document cannot stretch it", async () => {
  const { root } = hostileRoot();
  const report = await clada.apply("<<<<<<< RUN\ntrue; touch pwned\n>>>>>>> END\n", root, { allow: ["true"] });
  assert.deepEqual(report.resend.needs_approval, [1]);
  assert.equal(existsSync(join(root, "pwned")), false);
});
