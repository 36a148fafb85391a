"""The attack corpus (corpus/security/, format in its README) as
clada-cli/tests/security.rs reads and sets it up: a case's `expect` file as
data, its scratch directory, and what the runs left behind. A line this
reader does not know fails the case, never skips it: a new kind of line
needs its meaning here too."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support import REPO, git

CORPUS = REPO / "corpus/security"
CASES = sorted(p for p in CORPUS.iterdir() if (p / "expect").exists())

# The first word of every line an `expect` file may hold (besides `first`,
# which prefixes one of EXPECT_LINES), as the README's table lists them.
EXPECT_LINES = frozenset({"task", "exit", "error", "git-error"})
SET_UP_LINES = frozenset(
    {"file", "dir", "link", "hardlink", "fifo", "repo", "config", "repo-above", "approve", "approve-in"}
    | {"no-runtime-dir", "flag", "home-is-root", "absent", "present", "content", "note", "output-lacks"}
    | {"scoped", "stream"}
)


@dataclass
class Expect:
    """What one run must report."""

    exit: int | None = None
    # Task number -> "success", "rolled-back", "skipped", "failed TYPE" or "failed *".
    tasks: dict[int, str] = field(default_factory=dict)
    # The run's own error type (`report["error"]["type"]`).
    error: str | None = None
    # A git failure is reported (`report["git"]["error"]`).
    git_error: bool = False


@dataclass
class Case:
    """One case's set-up and expectations, from its `expect` file."""

    last: Expect = field(default_factory=Expect)
    # The first of two runs (`first ...` lines).
    first: Expect = field(default_factory=Expect)
    flags: list[str] = field(default_factory=list)
    files: list[tuple[str, str]] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    hardlinks: list[tuple[str, str]] = field(default_factory=list)
    fifos: list[str] = field(default_factory=list)
    repo: bool = False
    config: list[tuple[str, str]] = field(default_factory=list)
    home_is_root: bool = False
    absent: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    # Commands approved before the runs: (dir, command), None for the root.
    approve: list[tuple[str | None, str]] = field(default_factory=list)
    no_runtime_dir: bool = False
    repo_above: bool = False
    contents: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Text the output (the report and what was printed) must not hold.
    output_lacks: list[str] = field(default_factory=list)
    # The case needs Landlock ABI 6 (signals and abstract sockets scoped to
    # the sandbox): skipped, saying so, on an older kernel.
    scoped: bool = False
    # The document is a stream (`apply --stream`), which only the command
    # line reads.
    stream: bool = False


def read_case(text: str) -> Case:
    case = Case()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        bad = AssertionError(f"expect line {n}: cannot read {raw!r} (see corpus/security/README.md)")
        word, _, rest = line.partition(" ")
        expect = case.last
        if word == "first":
            expect = case.first
            word, _, rest = rest.partition(" ")
            if word not in EXPECT_LINES:
                raise bad

        def two() -> tuple[str, str]:
            first, space, second = rest.partition(" ")
            if not space:
                raise bad
            return first, second

        def number(text: str) -> int:
            try:
                return int(text)
            except ValueError:
                raise bad from None

        match word:
            case "exit":
                expect.exit = number(rest)
            case "task":
                task, outcome = two()
                expect.tasks[number(task)] = outcome
            case "error":
                expect.error = rest
            case "git-error":
                expect.git_error = True
            case "approve":
                case.approve.append((None, rest))
            case "approve-in":
                case.approve.append(two())
            case "no-runtime-dir":
                case.no_runtime_dir = True
            case "repo-above":
                case.repo_above = True
            case "flag":
                case.flags.append(rest)
            case "file":
                case.files.append(two())
            case "dir":
                case.dirs.append(rest)
            case "link":
                case.links.append(two())
            case "hardlink":
                case.hardlinks.append(two())
            case "fifo":
                case.fifos.append(rest)
            case "content":
                case.contents.append(two())
            case "note":
                case.notes.append(rest)
            case "repo":
                case.repo = True
            case "config":
                case.config.append(two())
            case "home-is-root":
                case.home_is_root = True
            case "absent":
                case.absent.append(rest)
            case "present":
                case.present.append(rest)
            case "output-lacks":
                case.output_lacks.append(rest)
            case "scoped":
                case.scoped = True
            case "stream":
                case.stream = True
            case _:
                raise bad
    return case


@dataclass
class Places:
    """The scratch directory of a case: `root/`, the canary `outside/`, the
    secret beside the root, clada's `TMPDIR`; the names `{ROOT}`,
    `{OUTSIDE}`, `{SECRET}` and `{TMP}` stand for in a case's text."""

    work: Path

    @property
    def root(self) -> Path:
        return self.work / "root"

    @property
    def outside(self) -> Path:
        return self.work / "outside"

    @property
    def secret(self) -> Path:
        return self.work / "secret.txt"

    @property
    def tmp(self) -> Path:
        return self.work / "tmp"

    def fill(self, text: str) -> str:
        for name, path in (("ROOT", self.root), ("OUTSIDE", self.outside), ("SECRET", self.secret), ("TMP", self.tmp)):
            text = text.replace("{" + name + "}", str(path))
        return text


def set_up(case: Case, places: Places, token: str) -> None:
    """The scratch directory: the root with the case's files (committed once
    with `repo`, hooks off, the configuration only afterwards, so that none
    of it runs here), the empty canary, the secret, the temporary directory."""
    root = places.root
    for made in (root, places.outside, places.tmp):
        made.mkdir(parents=True)
    places.secret.write_text(token + "\n")
    if case.repo:
        git(root, "init", "-q")
    for d in case.dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    for path, content in case.files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(places.fill(content).replace("\\n", "\n").encode())
    for path, target in case.links:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(places.fill(target), root / path)
    for path, target in case.hardlinks:
        os.link(root / target, root / path)
    for path in case.fifos:
        os.mkfifo(root / path, 0o644)
    if case.repo:
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", "initial")
        for key, value in case.config:
            git(root, "config", "--file", ".git/config", key, places.fill(value))
    if case.repo_above:
        # The work tree is the scratch directory: the root's files and a
        # tracked `secret.txt` beside it, whose secret content is in a
        # stash and in the work tree, never committed.
        git(places.work, "init", "-q")
        places.secret.write_text("before\n")
        git(places.work, "add", "secret.txt", "root")
        git(places.work, "commit", "-q", "-m", "initial")
        places.secret.write_text(token + "\n")
        git(places.work, "stash", "-q")
        places.secret.write_text(token + "\n")


def store_approvals(case: Case, approvals: Path, places: Places) -> None:
    """The case's approvals in clada's configuration file, as `clada allow`
    (with `--dir` for `approve-in`) stores them, under the root's canonical
    path."""
    if not case.approve:
        return
    at_root: list[str] = []
    dirs: dict[str, dict[str, list[str]]] = {}
    for d, command in case.approve:
        if d is None:
            at_root.append(places.fill(command))
        else:
            dirs.setdefault(d, {"commands": []})["commands"].append(places.fill(command))
    store = {"roots": {str(places.root.resolve()): {"commands": at_root, "dirs": dirs}}}
    approvals.parent.mkdir(parents=True, exist_ok=True)
    approvals.write_text(json.dumps(store))


def plumbing(repo: Path, *args: str) -> bytes | None:
    """git's plumbing on the repository of `repo` (its `.git` named, never
    searched for): nothing a case's configuration names (hooks, filters,
    fsmonitor, pager, diff programs) runs. None when git fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    done = subprocess.run(
        ["git", f"--git-dir={repo / '.git'}", "--no-pager", "-c", "core.fsmonitor=false", *args],
        env=env,
        capture_output=True,
    )
    return done.stdout if done.returncode == 0 else None


def head(repo: Path) -> str | None:
    out = plumbing(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    return out.decode().strip() if out else None


def commits_holding(repo: Path, before: str | None, token: str) -> list[str]:
    """The files of the commits made since `before` (all of `HEAD`'s history
    when None) that hold `token`."""
    commits = plumbing(repo, "rev-list", "HEAD", *(["--not", before] if before else []))
    found = []
    for commit in (commits or b"").decode().split():
        for entry in (plumbing(repo, "ls-tree", "-r", "-z", commit) or b"").split(b"\0"):
            meta, _, path = entry.partition(b"\t")
            _, kind, oid = (meta.decode().split() + ["", "", ""])[:3]
            if kind == "blob" and token.encode() in (plumbing(repo, "cat-file", "blob", oid) or b""):
                found.append(f"{commit}:{path.decode(errors='replace')}")
    return found


def is_temp_name(name: str) -> bool:
    """Whether `name` has the shape of clada's temporary names
    (`.NAME.clada-PID-N.tmp`, PROTOCOL §7.4)."""
    return name.startswith(".") and name.endswith(".tmp") and ".clada-" in name


def temp_names(root: Path) -> list[str]:
    """The temporary names below `root`, outside `.git`, never following
    links."""
    found = []
    for d, subdirs, files in os.walk(root):
        subdirs[:] = [s for s in subdirs if s != ".git"]
        found += [os.path.join(d, n) for n in subdirs + files if is_temp_name(n)]
    return found


def committed_temp_names(root: Path) -> list[str]:
    """The paths with a temporary name in the tree of the root repository's
    `HEAD`."""
    listing = plumbing(root, "ls-tree", "-r", "-t", "-z", "--name-only", "HEAD") or b""
    paths = [p.decode(errors="replace") for p in listing.split(b"\0") if p]
    return [p for p in paths if is_temp_name(p.rsplit("/", 1)[-1])]


def outcomes(report: dict[str, Any]) -> dict[int, str]:
    """Each task's outcome in a report, as an `expect` file writes it."""
    found = {}
    for block in report.get("blocks") or []:
        for t in block.get("tasks") or []:
            error = t.get("error") or {}
            if t["status"] == "failed" and error.get("type"):
                found[t["number"]] = f"failed {error['type']}"
            elif t.get("rolled_back") is True:
                found[t["number"]] = "rolled-back"
            else:
                found[t["number"]] = t["status"]
    return found


def check_report(expect: Expect, exit_code: int, report: dict[str, Any]) -> list[str]:
    """What differs between a run's exit code and report and `expect`."""
    problems = []
    if expect.exit is not None and exit_code != expect.exit:
        problems.append(f"exit {exit_code}, expected {expect.exit}")
    error = report.get("error") or {}
    if expect.error is not None and error.get("type") != expect.error:
        problems.append(f"run error {error or None}, expected {expect.error}")
    if expect.git_error and (report.get("git") or {}).get("error") is None:
        problems.append("no git error reported")
    got = outcomes(report)
    for number, want in expect.tasks.items():
        outcome = got.get(number, "missing")
        if not (outcome.startswith("failed") if want == "failed *" else outcome == want):
            problems.append(f"task {number}: {outcome}, expected {want}")
    return problems
