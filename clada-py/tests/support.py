"""Helpers of the Python package's tests: the repository, the `clada` binary
the reports are compared with, the prompt's examples, trees and git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import clada

REPO = Path(__file__).resolve().parents[2]


def clada_binary() -> Path:
    """The `clada` binary of this checkout: `CLADA_BIN`, else the debug
    build in the target directory (`cargo build -p clada-cli`)."""
    given = os.environ.get("CLADA_BIN")
    if given:
        path = Path(given)
        if not path.is_file():
            pytest.fail(f"CLADA_BIN={given} is not a file: build it with `cargo build -p clada-cli`")
        return path
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "debug" / "clada"
    if not path.is_file():
        pytest.skip(f"no clada binary at {path}: build it with `cargo build -p clada-cli` or set CLADA_BIN")
    return path


def prompt_examples() -> list[str]:
    """The examples of `clada prompt`, each with its closing line break, as
    the Rust tests cut them (clada-cli/tests/cli.rs, report.rs)."""
    return [block.split("\n```")[0] + "\n" for block in clada.prompt().split("```clada\n")[1:]]


def prompt_project(root: Path) -> None:
    """The project every example of the prompt applies to, except the
    merge-conflict edit of notes.txt, which the MOVE before it takes away
    (clada-cli/tests/report.rs)."""
    files = {
        "src/app.py": 'import sys\n\ndef greet(name):\n    print("Hello " + name)\n\ndef main():\n    greet("world")\n',
        "notes.txt": "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n",
        "docs/index.md": "docs\n",
        "build/tmp/cache": "x\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def tree(root: Path) -> dict[str, str]:
    """Every file below `root` (links as `-> target`), by relative path."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if rel == ".git" or rel.startswith(".git/"):
            continue
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = path.read_bytes().decode("utf-8", "replace")
        elif path.is_dir():
            out[rel + "/"] = ""
    return out


def git(root: Path, *args: str) -> str:
    """git in `root`, with no user or system configuration and no hooks."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "core.hooksPath=/dev/null", *args],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
