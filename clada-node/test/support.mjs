// What the tests share: the package, the repository, temporary roots.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { after } from "node:test";

export const HERE = dirname(dirname(fileURLToPath(import.meta.url)));
export const REPO = dirname(HERE);
export const clada = createRequire(import.meta.url)("../index.js");

const made = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory, removed after the tests of the file. */
export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "clada-node-"));
  made.push(dir);
  return dir;
}

/** A copy of examples/project in a new directory. */
export function exampleProject() {
  const dir = tempDir();
  cpSync(join(REPO, "examples", "project"), dir, { recursive: true });
  return dir;
}

export function tour() {
  return readFileSync(join(REPO, "examples", "tour.md"), "utf8");
}

/** Every file under `dir` with its contents, by relative path. */
export function tree(dir) {
  const out = {};
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(dir, path)] = readFileSync(path, "utf8");
    }
  };
  walk(dir);
  return out;
}
