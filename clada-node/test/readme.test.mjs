// The README's Node section, run as printed: the install line is .ci/run's
// own, the example command prints what the README shows, and the agent
// loop is examples/agent-loop.ts (which `tsc --noEmit` checks) and works
// against a fake model.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { HERE, REPO, tempDir, clada } from "./support.mjs";

const SECTION = "## From Node: the `clada` package";

function section() {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  assert.ok(readme.includes(SECTION));
  return readme.split(SECTION)[1].split("\n## ")[0];
}

/** The fenced blocks of `text` in `language`, in order. */
function fenced(text, language) {
  const blocks = [];
  let open = null;
  let current = [];
  for (const line of text.split(/(?<=\n)/)) {
    if (open === null && line.startsWith("```")) [open, current] = [line.slice(3).trim(), []];
    else if (open !== null && line.trim() === "```") {
      if (open === language) blocks.push(current.join(""));
      open = null;
    } else if (open !== null) current.push(line);
  }
  return blocks;
}

/** A directory where `require("clada")` finds this package. */
function linked() {
  const dir = tempDir();
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(HERE, join(dir, "node_modules", "clada"));
  return dir;
}

test("the install command is the one .ci/run runs", () => {
  const install = fenced(section(), "sh")[0].split("\n")[0];
  assert.equal(install, "npm install ./clada-node");
  const ci = readFileSync(join(REPO, ".ci", "run"), "utf8");
  // npm's flags for a quiet log aside.
  const ran = ci.split("\n").map((l) => l.trim().replace(" --no-audit --no-fund", ""));
  assert.ok(ran.includes(install), ".ci/run does not run it");
});

test("the example command prints what the README shows, and changes nothing", () => {
  const example = fenced(section(), "sh")[0].split("\n")[1];
  const status = () => execFileSync("git", ["status", "--porcelain", "examples"], { cwd: REPO }).toString();
  const before = status();
  const out = execFileSync("bash", ["-c", example], {
    cwd: REPO,
    env: { ...process.env, NODE_PATH: join(linked(), "node_modules") },
  }).toString();
  assert.equal(out, fenced(section(), "text")[0]);
  assert.equal(status(), before);
});

test("the agent loop is examples/agent-loop.ts, in at most 15 lines of loop", () => {
  const loop = readFileSync(join(HERE, "examples", "agent-loop.ts"), "utf8");
  assert.equal(fenced(section(), "ts")[0], loop);
  const body = loop.slice(loop.indexOf("export async function"));
  assert.ok(body.trimEnd().split("\n").length <= 15, body);
});

const FIRST = `<<<<<<< WRITE path="greeting.txt"
Hello
>>>>>>> END
<<<<<<< SEARCH path="notes.txt"
teh
=======
the
>>>>>>> REPLACE
`;
const SECOND = `<<<<<<< SEARCH path="notes.txt"
taht
=======
that
>>>>>>> REPLACE
`;

test("the agent loop sends back what failed and stops when all is applied", async (t) => {
  let ts;
  try {
    ts = createRequire(import.meta.url)("typescript");
  } catch {
    t.skip("typescript is not installed (npm ci in clada-node installs it)");
    return;
  }
  const source = readFileSync(join(HERE, "examples", "agent-loop.ts"), "utf8");
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  const dir = linked();
  writeFileSync(join(dir, "agent-loop.js"), js.outputText);
  const { runAgent } = createRequire(join(dir, "x.js"))("./agent-loop.js");

  const root = tempDir();
  writeFileSync(join(root, "notes.txt"), "taht\n");
  const seen = [];
  const model = async (messages) => {
    seen.push(messages.map((m) => ({ ...m })));
    return seen.length === 1 ? FIRST : SECOND;
  };
  assert.equal(await runAgent(model, "greet and fix the typo", root), true);
  assert.equal(seen.length, 2);
  assert.equal(seen[0][0].content, clada.prompt());
  const feedback = seen[1].at(-1).content;
  assert.match(feedback, /Applied, never send again: tasks 1\./);
  assert.match(feedback, /task 2: /);
  assert.equal(readFileSync(join(root, "notes.txt"), "utf8"), "that\n");
  assert.equal(readFileSync(join(root, "greeting.txt"), "utf8"), "Hello\n");
});
