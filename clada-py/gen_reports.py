#!/usr/bin/env python3
"""Writes clada-py/python/clada/_reports.py, the TypedDicts of clada's
reports, from their JSON Schemas (grammar/schema/apply.json and check.json,
which `clada schema apply|check` prints).

    python3 clada-py/gen_reports.py           # write the module
    python3 clada-py/gen_reports.py --check   # exit 1 if it is not up to date

The schemas use a small part of JSON Schema (objects with properties,
arrays, `$ref`, `anyOf`/`oneOf`, `enum`/`const`, nullable types). A keyword
this script does not know stops it, rather than being typed wrongly.
"""

from __future__ import annotations

import difflib
import json
import keyword
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMAS = [HERE.parent / "grammar/schema/apply.json", HERE.parent / "grammar/schema/check.json"]
OUTPUT = HERE / "python/clada/_reports.py"

# Keywords that only narrow a value (not its Python type), or document it.
IGNORED = {"description", "format", "minimum", "maximum", "minItems", "maxItems", "title", "$schema", "default"}
STRUCTURAL = {"type", "properties", "required", "items", "$ref", "anyOf", "oneOf", "enum", "const", "$defs"}
SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def fail(message: str) -> None:
    sys.exit(f"gen_reports.py: {message}")


def check_keywords(schema: dict, where: str) -> None:
    unknown = set(schema) - IGNORED - STRUCTURAL
    if unknown:
        fail(f"{where}: keywords {sorted(unknown)} are not handled; teach this script what they mean")


def literal(values: list) -> str:
    return "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"


def annotation(schema: dict, where: str, refs: set[str]) -> str:
    """The Python type of a value that `schema` describes."""
    check_keywords(schema, where)
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        refs.add(name)
        return name
    if "const" in schema:
        return literal([schema["const"]])
    if "enum" in schema:
        return literal(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return union([annotation(s, f"{where}.{key}", refs) for s in schema[key]])
    types = schema.get("type")
    if types is None:
        fail(f"{where}: a schema without a type")
    parts = []
    for t in types if isinstance(types, list) else [types]:
        if t in SCALARS:
            parts.append(SCALARS[t])
        elif t == "array":
            parts.append(f"list[{annotation(schema.get('items', {}), where + '[]', refs)}]")
        elif t == "object":
            fail(f"{where}: an object inside a field; give it a name in the schema ($defs)")
        else:
            fail(f"{where}: unknown type {t!r}")
    return union(parts)


def union(parts: list[str]) -> str:
    """`A | B`, with Literals merged and None last."""
    literals, others = [], []
    for p in parts:
        if p.startswith("Literal[") and p.endswith("]"):
            literals.append(p[len("Literal[") : -1])
        elif p not in others:
            others.append(p)
    if literals:
        others.insert(0, "Literal[" + ", ".join(literals) + "]")
    if "None" in others:
        others.remove("None")
        others.append("None")
    return " | ".join(others)


def docstring(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.split("\n")
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}'] + [f"{indent}{l}" if l else "" for l in lines[1:]] + [f'{indent}"""']


class Definition:
    def __init__(self, name: str, schema: dict, source: str):
        self.name, self.schema, self.source = name, schema, source
        self.refs: set[str] = set()
        self.lines = self.render()

    def render(self) -> list[str]:
        s, name = self.schema, self.name
        where = f"{self.source}: {name}"
        check_keywords(s, where)
        if "properties" not in s:
            # A value that is not an object with fields: a type alias.
            t = annotation(s, where, self.refs)
            if len(t) > 80 and t.startswith("Literal[") and t.endswith("]") and "|" not in t:
                # One value a line, as a formatter would.
                values = [v.strip() for v in t[len("Literal[") : -1].split(",")]
                lines = [f"{name}: TypeAlias = Literal["] + [f"    {v}," for v in values] + ["]"]
            else:
                lines = [f"{name}: TypeAlias = {t}"]
            return lines + docstring(s.get("description"), "")
        required = set(s.get("required", []))
        fields = []
        for field, sub in s.get("properties", {}).items():
            t = annotation(sub, f"{where}.{field}", self.refs)
            fields.append((field, t if field in required else f"NotRequired[{t}]", sub.get("description")))
        if any(keyword.iskeyword(f) or not f.isidentifier() for f, _, _ in fields):
            # A field named like a Python keyword (`from`): the functional form.
            lines = [f"{name} = TypedDict("]
            lines.append(f"    {json.dumps(name)},")
            lines.append("    {")
            for field, t, doc in fields:
                if doc:
                    lines += [f"        # {l}".rstrip() for l in doc.split("\n")]
                lines.append(f"        {json.dumps(field)}: {t},")
            lines += ["    },", ")"]
            return lines + docstring(s.get("description"), "")
        lines = [f"class {name}(TypedDict):"]
        lines += docstring(s.get("description"), "    ")
        for field, t, doc in fields:
            lines.append(f"    {field}: {t}")
            lines += docstring(doc, "    ")
        if not fields:
            lines.append("    pass")
        return lines


def definitions() -> dict[str, Definition]:
    found: dict[str, Definition] = {}
    for path in SCHEMAS:
        schema = json.loads(path.read_text())
        source = path.name
        each = dict(schema.get("$defs", {}))
        root = {k: v for k, v in schema.items() if k != "$defs"}
        each[schema["title"]] = root
        for name, sub in each.items():
            d = Definition(name, sub, source)
            if name in found and found[name].lines != d.lines:
                fail(f"{name} differs between {found[name].source} and {source}: name them apart in the schemas")
            found.setdefault(name, d)
    return found


def module() -> str:
    defs = definitions()
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in order:
            return
        if name in path:
            fail(f"a cycle through {' -> '.join(path + (name,))}")
        if name not in defs:
            fail(f"$ref to {name}, which no schema defines")
        for dep in sorted(defs[name].refs):
            visit(dep, path + (name,))
        order.append(name)

    # Each definition after those it names: the annotations are evaluated
    # when the module is imported (so that NotRequired is seen at run time).
    for name in sorted(defs):
        visit(name, ())
    out = [
        '"""The reports of clada as TypedDicts: what `clada.check` and `clada.apply`',
        "return, field for field the JSON of `clada check|apply --format json`",
        '(PROTOCOL §9.2).',
        "",
        "Generated from grammar/schema/*.json by clada-py/gen_reports.py; do not",
        "edit: run `python3 clada-py/gen_reports.py` after changing the schemas.",
        '"""',
        "",
        "from typing import Literal, NotRequired, TypeAlias, TypedDict",
        "",
        "__all__ = [",
    ]
    out += [f"    {json.dumps(n)}," for n in sorted(defs)]
    out.append("]")
    for name in order:
        out += ["", ""] + defs[name].lines
    return "\n".join(out) + "\n"


def main() -> None:
    text = module()
    if sys.argv[1:] == ["--check"]:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            sys.stdout.writelines(
                difflib.unified_diff(
                    current.splitlines(True), text.splitlines(True), str(OUTPUT), "generated"
                )
            )
            sys.exit(f"{OUTPUT} is not what the schemas give: run `python3 clada-py/gen_reports.py`")
        print(f"{OUTPUT.name} matches the schemas")
        return
    if sys.argv[1:]:
        sys.exit(__doc__)
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
