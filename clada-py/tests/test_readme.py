"""The README's Python section, run exactly as printed: the commands (the
install line is `.ci/run`'s own) and the agent loop, against a fake model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support import REPO

SECTION = "## From Python: `import clada`"


def section() -> str:
    readme = (REPO / "README.md").read_text()
    assert SECTION in readme
    return readme.split(SECTION, 1)[1].split("\n## ", 1)[0]


def fenced(text: str, language: str) -> list[str]:
    """The fenced blocks of `text` in `language` ("" for none), in order."""
    blocks, current, open_as = [], [], None
    for line in text.splitlines(keepends=True):
        if open_as is None and line.startswith("```"):
            open_as, current = line[3:].strip(), []
        elif open_as is not None and line.strip() == "```":
            if open_as == language:
                blocks.append("".join(current))
            open_as = None
        elif open_as is not None:
            current.append(line)
    return blocks


def test_the_install_command_is_the_one_ci_runs() -> None:
    install = fenced(section(), "sh")[0].splitlines()[0]
    assert install == "pip install ./clada-py"
    ci = (REPO / ".ci/run").read_text()
    assert any(line.strip().endswith(install) for line in ci.splitlines()), ".ci/run does not run it"


def test_the_example_command_prints_what_the_readme_shows() -> None:
    commands, printed = fenced(section(), "sh")[0], fenced(section(), "text")[0]
    example = commands.splitlines()[1]
    # `python3` is the interpreter the package is installed in.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    before = subprocess.run(["git", "status", "--porcelain", "examples"], cwd=REPO, capture_output=True, text=True)
    out = subprocess.run(["bash", "-c", example], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert out.stdout == printed
    after = subprocess.run(["git", "status", "--porcelain", "examples"], cwd=REPO, capture_output=True, text=True)
    assert after.stdout == before.stdout, "the dry run changed the example project"


FIRST_REPLY = """I'll add the greeting and fix the typo.

<<<<<<< WRITE path="greeting.txt"
Hello
>>>>>>> END
<<<<<<< SEARCH path="app.py"
print("helo")
=======
print("hello")
>>>>>>> REPLACE
"""
SECOND_REPLY = """Sorry, the text is different:

<<<<<<< SEARCH path="app.py"
print("hallo")
=======
print("hello")
>>>>>>> REPLACE
"""


def test_the_agent_loop_resends_only_what_failed(root: Path) -> None:
    (root / "app.py").write_text('print("hallo")\n')
    (snippet,) = fenced(section(), "python")
    namespace: dict[str, Any] = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    seen: list[list[dict[str, str]]] = []

    def model(messages: list[dict[str, str]]) -> str:
        seen.append([dict(m) for m in messages])
        return [FIRST_REPLY, SECOND_REPLY][len(seen) - 1]

    assert namespace["run_agent"](model, "greet, and fix the typo", str(root)) is True
    assert len(seen) == 2
    system, request = seen[0]
    assert system["content"].startswith("# Editing files with clada") and request["content"].startswith("greet")
    # The text report, as MCP returns it: what failed, why, what to send.
    feedback = seen[1][-1]["content"]
    assert "task 1: applied, never send again" in feedback
    assert "[task-2] ✗ Error: match_count_mismatch in app.py (found 0 matches, expected 1)" in feedback
    assert "closest text at line 1" in feedback
    assert "task 2: failed, fix and send again" in feedback
    assert (root / "greeting.txt").read_text() == "Hello\n"
    assert (root / "app.py").read_text() == 'print("hello")\n'


def test_the_agent_loop_gives_up_after_its_rounds(root: Path) -> None:
    (root / "app.py").write_text("nothing alike\n")
    (snippet,) = fenced(section(), "python")
    namespace: dict[str, Any] = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    calls = []

    def model(messages: list[dict[str, str]]) -> str:
        calls.append(len(messages))
        return SECOND_REPLY

    assert namespace["run_agent"](model, "fix it", str(root), rounds=2) is False
    # Each round adds the reply and what to send again.
    assert calls == [2, 4]
