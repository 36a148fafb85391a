// Builds the addon from source (npm's `install` script): `cargo build` of
// the crate clada-node, then the shared library copied to ./clada.node,
// which index.js loads. Needs Rust (cargo) and nothing else: no prebuilt
// binary is downloaded, and napi needs no Node headers.
//
// The profile is `node` (the workspace Cargo.toml: optimised, without the
// released binary's whole-program link); CLADA_NODE_PROFILE=dev builds
// the debug build instead, sharing `cargo test`'s (what CI does).
import { execFileSync } from "node:child_process";
import { copyFileSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const profile = process.env.CLADA_NODE_PROFILE || "node";
const cargo = process.env.CARGO || "cargo";

const started = Date.now();
execFileSync(cargo, ["build", "--locked", "-p", "clada-node", "--profile", profile], {
  cwd: here,
  stdio: "inherit",
});
const metadata = JSON.parse(
  execFileSync(cargo, ["metadata", "--format-version", "1", "--no-deps", "--locked"], {
    cwd: here,
    maxBuffer: 64 << 20,
  }).toString(),
);
// Cargo names the dev profile's directory `debug`.
const dir = join(metadata.target_directory, profile === "dev" ? "debug" : profile);
const library = {
  darwin: "libclada_node.dylib",
  win32: "clada_node.dll",
}[process.platform] ?? "libclada_node.so";
// Copied beside, then renamed: a process that has the old addon loaded
// keeps its mapping, and nobody loads half a file.
const partial = join(here, "clada.node.partial");
copyFileSync(join(dir, library), partial);
renameSync(partial, join(here, "clada.node"));
console.error(`clada: built clada.node (${profile}) in ${Math.round((Date.now() - started) / 1000)} s`);
