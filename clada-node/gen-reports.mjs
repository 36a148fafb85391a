#!/usr/bin/env node
// Writes clada-node/reports.d.ts, the TypeScript types of clada's reports,
// from their JSON Schemas (grammar/schema/apply.json and check.json, which
// `clada schema apply|check` prints), as clada-py/gen_reports.py writes
// Python's TypedDicts from the same files.
//
//     node clada-node/gen-reports.mjs           # write reports.d.ts
//     node clada-node/gen-reports.mjs --check   # exit 1 if it is not up to date
//
// The schemas use a small part of JSON Schema (objects with properties,
// arrays, `$ref`, `anyOf`/`oneOf`, `enum`/`const`, nullable types). A
// keyword this script does not know stops it, rather than being typed
// wrongly.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join, basename } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const SCHEMAS = ["apply", "check"].map((n) => join(here, "..", "grammar", "schema", `${n}.json`));
const OUTPUT = join(here, "reports.d.ts");

// Keywords that only narrow a value (not its TypeScript type), or document it.
const IGNORED = new Set(["description", "format", "minimum", "maximum", "minItems", "maxItems", "title", "$schema", "default"]);
const STRUCTURAL = new Set(["type", "properties", "required", "items", "$ref", "anyOf", "oneOf", "enum", "const", "$defs"]);
const SCALARS = { string: "string", integer: "number", number: "number", boolean: "boolean", null: "null" };

function fail(message) {
  console.error(`gen-reports.mjs: ${message}`);
  process.exit(1);
}

function checkKeywords(schema, where) {
  const unknown = Object.keys(schema).filter((k) => !IGNORED.has(k) && !STRUCTURAL.has(k));
  if (unknown.length) fail(`${where}: keywords ${JSON.stringify(unknown.sort())} are not handled; teach this script what they mean`);
}

/** `A | B`, each once, null last. */
function union(parts) {
  const unique = [...new Set(parts)];
  const rest = unique.filter((p) => p !== "null");
  return (unique.includes("null") ? [...rest, "null"] : rest).join(" | ");
}

/** The TypeScript type of a value that `schema` describes. */
function annotation(schema, where) {
  checkKeywords(schema, where);
  if ("$ref" in schema) return schema.$ref.replace(/^#\/\$defs\//, "");
  if ("const" in schema) return JSON.stringify(schema.const);
  if ("enum" in schema) return union(schema.enum.map((v) => JSON.stringify(v)));
  for (const key of ["anyOf", "oneOf"]) {
    if (key in schema) return union(schema[key].map((s, i) => annotation(s, `${where}.${key}[${i}]`)));
  }
  const types = schema.type;
  if (types === undefined) fail(`${where}: a schema without a type`);
  const parts = [];
  for (const t of Array.isArray(types) ? types : [types]) {
    if (t in SCALARS) parts.push(SCALARS[t]);
    else if (t === "array") {
      const item = annotation(schema.items ?? {}, `${where}[]`);
      parts.push(item.includes(" ") ? `Array<${item}>` : `${item}[]`);
    } else if (t === "object") fail(`${where}: an object inside a field; give it a name in the schema ($defs)`);
    else fail(`${where}: unknown type ${JSON.stringify(t)}`);
  }
  return union(parts);
}

function doc(text, indent) {
  if (!text) return [];
  const lines = text.replaceAll("*/", "*\\/").split("\n");
  if (lines.length === 1) return [`${indent}/** ${lines[0]} */`];
  return [`${indent}/**`, ...lines.map((l) => (l ? `${indent} * ${l}` : `${indent} *`)), `${indent} */`];
}

function render(name, schema, where) {
  checkKeywords(schema, where);
  const lines = doc(schema.description, "");
  if (!("properties" in schema)) {
    const t = annotation(schema, where);
    if (t.length > 80 && !t.includes("[")) {
      // One value a line, as a formatter would.
      return [...lines, `export type ${name} =`, ...t.split(" | ").map((v, i, all) => `  | ${v}${i === all.length - 1 ? ";" : ""}`)];
    }
    return [...lines, `export type ${name} = ${t};`];
  }
  const required = new Set(schema.required ?? []);
  lines.push(`export interface ${name} {`);
  for (const [field, sub] of Object.entries(schema.properties)) {
    lines.push(...doc(sub.description, "  "));
    const key = /^[A-Za-z_$][\w$]*$/.test(field) ? field : JSON.stringify(field);
    lines.push(`  ${key}${required.has(field) ? "" : "?"}: ${annotation(sub, `${where}.${field}`)};`);
  }
  lines.push("}");
  return lines;
}

function definitions() {
  const found = new Map();
  for (const path of SCHEMAS) {
    const schema = JSON.parse(readFileSync(path, "utf8"));
    const source = basename(path);
    const { $defs = {}, ...root } = schema;
    const each = { ...$defs, [schema.title]: root };
    for (const [name, sub] of Object.entries(each)) {
      const lines = render(name, sub, `${source}: ${name}`);
      const seen = found.get(name);
      if (seen && seen.lines.join("\n") !== lines.join("\n")) {
        fail(`${name} differs between ${seen.source} and ${source}: name them apart in the schemas`);
      }
      if (!seen) found.set(name, { lines, source });
    }
  }
  return found;
}

function module() {
  const defs = definitions();
  const out = [
    "// The reports of clada as TypeScript types: what `check` and `apply`",
    "// return, field for field the JSON of `clada check|apply --format json`",
    "// (PROTOCOL §9.2).",
    "//",
    "// Generated from grammar/schema/*.json by clada-node/gen-reports.mjs; do",
    "// not edit: run `node clada-node/gen-reports.mjs` after changing the schemas.",
  ];
  for (const name of [...defs.keys()].sort()) out.push("", ...defs.get(name).lines);
  return out.join("\n") + "\n";
}

const text = module();
const args = process.argv.slice(2);
if (args.length === 1 && args[0] === "--check") {
  const current = existsSync(OUTPUT) ? readFileSync(OUTPUT, "utf8") : "";
  if (current !== text) {
    const a = current.split("\n");
    const b = text.split("\n");
    const first = a.findIndex((line, i) => line !== b[i]);
    console.error(`first difference at line ${first + 1}:\n- ${a[first]}\n+ ${b[first]}`);
    fail(`${OUTPUT} is not what the schemas give: run \`node clada-node/gen-reports.mjs\``);
  }
  console.log(`${basename(OUTPUT)} matches the schemas`);
} else if (args.length === 0) {
  writeFileSync(OUTPUT, text);
  console.log(`wrote ${OUTPUT}`);
} else {
  fail("usage: node gen-reports.mjs [--check]");
}
