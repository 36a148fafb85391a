// clada's applyFiles (clada-node) against Cline's own matcher,
// constructNewFileContent of its diff.ts (vendored, transpiled by esbuild),
// in one Node process, on the same inputs:
//
// - the Cline and Roo cases of the corpus (corpus/apply/cline_*, roo_*:
//   Cline's and Roo's own diff suites) whose call holds one <path> and one
//   <diff>: Cline is given that diff and the file, clada the whole call;
// - a synthetic set: 1,000 SEARCH edits of one 20,000-line file, in one
//   call; and 200 files of 500 lines with 5 edits each, a call per file.
//
// Each side is timed on its own, in rounds that alternate; medians of wall
// and CPU time (one thread: per core). The files each side makes are
// compared; those of the synthetic set must be equal.
//
//   (cd clada-node && node build.mjs)      # the optimised addon (profile node)
//   cd benches/peers/cline && npm ci && npm run bench [-- ROUNDS]
"use strict";

import { readdirSync, readFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

import { constructNewFileContent } from "./build/diff.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "../../..");
const clada = createRequire(import.meta.url)(process.env.CLADA_NODE || join(repo, "clada-node"));
const rounds = Number(process.argv[2] || 7);

/** A case: the document for clada, its files, and per call the path,
 * the file and the diff for Cline. */
function corpusCases() {
  const dir = join(repo, "corpus/apply");
  const cases = [];
  for (const name of readdirSync(dir).sort()) {
    if (!/^(cline|roo)_/.test(name)) continue;
    const document = readFileSync(join(dir, name, "patch.txt"), "utf8");
    const calls = [...document.matchAll(/<(replace_in_file|apply_diff)>\s*<path>([^<]*)<\/path>\s*<diff>\n?([\s\S]*?)\n?<\/diff>/g)];
    if (calls.length !== 1 || /<args>/.test(document)) continue;
    const [, , path, diff] = calls[0];
    const input = join(dir, name, "input", path);
    const original = existsSync(input) ? readFileSync(input, "utf8") : "";
    const files = existsSync(input) ? { [path]: original } : {};
    cases.push({ name, document, files, calls: [{ path, original, diff }] });
  }
  return cases;
}

function block(search, replace) {
  return `------- SEARCH\n${search}=======\n${replace}+++++++ REPLACE\n`;
}

function call(path, diff) {
  return `<replace_in_file>\n<path>${path}</path>\n<diff>\n${diff}</diff>\n</replace_in_file>\n`;
}

/** `edits` edits of a file of `lines` lines, spread evenly, in order: each
 * a SEARCH of three lines and a REPLACE that changes the middle one. */
function fileEdits(path, lines, edits) {
  const line = (i) => `    let value_${i} = compute(${i}, "${path}") + ${i * 7}; // line ${i}\n`;
  let original = "";
  for (let i = 0; i < lines; i++) original += line(i);
  let diff = "";
  const step = Math.floor(lines / edits);
  for (let k = 0; k < edits; k++) {
    const i = k * step + 1;
    diff += block(line(i - 1) + line(i) + line(i + 1), line(i - 1) + line(i).replace("compute", "recompute") + line(i + 1));
  }
  return { path, original, diff };
}

function syntheticCases() {
  const big = fileEdits("src/big.rs", 20_000, 1_000);
  const many = [];
  for (let f = 0; f < 200; f++) many.push(fileEdits(`src/m${f}.rs`, 500, 5));
  return {
    "1,000 edits of one 20,000-line file": [
      { name: "big", document: call(big.path, big.diff), files: { [big.path]: big.original }, calls: [big] },
    ],
    "200 files of 500 lines, 5 edits each (a call per file)": many.map((c) => ({
      name: c.path,
      document: call(c.path, c.diff),
      files: { [c.path]: c.original },
      calls: [c],
    })),
  };
}

async function runCline(cases) {
  const out = [];
  for (const c of cases) {
    for (const { diff, original } of c.calls) {
      try {
        out.push((await constructNewFileContent(diff, original, true)).newContent);
      } catch {
        out.push(null);
      }
    }
  }
  return out;
}

async function runClada(cases) {
  const out = [];
  for (const c of cases) {
    let result = null;
    try {
      result = clada.applyFiles(c.document, c.files, { dialect: "cline" });
    } catch {
      // A call refused as a whole.
    }
    for (const { path } of c.calls) {
      const ok = result && result.report.ok;
      out.push(ok ? Buffer.from(result.files[path] ?? new Uint8Array()).toString("utf8") : null);
    }
  }
  return out;
}

async function timed(run, passes) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < passes; i++) await run();
  const wall = Number(process.hrtime.bigint() - start) / 1e6 / passes;
  const used = process.cpuUsage(cpu);
  return [wall, (used.user + used.system) / 1e3 / passes];
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

async function measure(label, cases, passes, mustAgree) {
  const cline = await runCline(cases);
  const ours = await runClada(cases);
  const calls = cline.length;
  const applied = (v) => v.filter((x) => x !== null).length;
  const both = cline.filter((x, i) => x !== null && ours[i] !== null).length;
  const same = cline.filter((x, i) => x !== null && x === ours[i]).length;
  if (mustAgree) assert.equal(same, calls, `${label}: clada and Cline make other files`);
  const t = { clada: [], cline: [] };
  for (let r = 0; r < rounds; r++) {
    t.clada.push(await timed(() => runClada(cases), passes));
    t.cline.push(await timed(() => runCline(cases), passes));
  }
  console.log(`\n${label}: ${calls} calls; applied: clada ${applied(ours)}, Cline ${applied(cline)}, both ${both}, to the same file ${same}`);
  console.log(`${"".padEnd(36)} ${"wall".padStart(10)} ${"calls/s".padStart(9)} ${"CPU".padStart(10)}`);
  const med = {};
  for (const [name, label2] of [["clada", "clada applyFiles"], ["cline", "Cline constructNewFileContent"]]) {
    const w = median(t[name].map((x) => x[0]));
    const c = median(t[name].map((x) => x[1]));
    med[name] = [w, c];
    console.log(`${label2.padEnd(36)} ${w.toFixed(3).padStart(7)} ms ${((calls * 1000) / w).toFixed(0).padStart(9)} ${c.toFixed(3).padStart(7)} ms`);
  }
  console.log(`clada is ${(med.cline[0] / med.clada[0]).toFixed(2)}x Cline (wall), ${(med.cline[1] / med.clada[1]).toFixed(2)}x (CPU)`);
}

console.log(`Node ${process.version}; medians of ${rounds} rounds, one thread`);
await measure("Cline and Roo cases of the corpus", corpusCases(), 200, false);
for (const [label, cases] of Object.entries(syntheticCases())) {
  await measure(label, cases, 3, true);
}
