// reports.d.ts is what the JSON Schemas give, and real reports hold only
// the fields the schemas declare, with every required one.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { HERE, clada, exampleProject, tour } from "./support.mjs";

test("reports.d.ts matches the schemas (gen-reports.mjs --check)", () => {
  execFileSync(process.execPath, [join(HERE, "gen-reports.mjs"), "--check"], { stdio: "pipe" });
});

/** The paths in `value` where it strays from `schema`: unknown or missing fields. */
function strays(value, schema, root, where = "$") {
  if (schema.$ref) return strays(value, root.$defs[schema.$ref.replace("#/$defs/", "")], root, where);
  for (const key of ["anyOf", "oneOf"]) {
    if (schema[key]) {
      const each = schema[key].map((s) => strays(value, s, root, where));
      return each.find((e) => e.length === 0) ?? each.flat();
    }
  }
  const types = [schema.type].flat();
  if (value === null) return types.includes("null") ? [] : [`${where}: null`];
  if (Array.isArray(value)) return value.flatMap((v, i) => strays(v, schema.items ?? {}, root, `${where}[${i}]`));
  if (typeof value !== "object") return [];
  if (!schema.properties) return [`${where}: an object where the schema has ${JSON.stringify(schema.type)}`];
  const out = [];
  for (const key of schema.required ?? []) if (!(key in value)) out.push(`${where}.${key}: missing`);
  for (const [key, v] of Object.entries(value)) {
    if (!(key in schema.properties)) out.push(`${where}.${key}: not in the schema`);
    else out.push(...strays(v, schema.properties[key], root, `${where}.${key}`));
  }
  return out;
}

test("reports hold the schemas' fields, no more", async () => {
  const apply = clada.schema("apply");
  const check = clada.schema("check");
  const root = exampleProject();
  const reports = [
    [await clada.apply(tour(), root, { dryRun: true }), apply],
    [await clada.apply(tour() + '\n<<<<<<< SEARCH path="nope"\nx\n=======\ny\n>>>>>>> REPLACE\n', root), apply],
    [clada.check(tour()), check],
    [clada.check('<<<<<<< WRITE path="a"\n'), check],
  ];
  for (const [report, schema] of reports) assert.deepEqual(strays(report, schema, schema), []);
  // The check finds what it is meant to find.
  assert.notDeepEqual(strays({ ...clada.check(""), extra: 1 }, check, check), []);
});
