"""Fixtures of the Python package's tests (helpers in support.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support import clada_binary


@pytest.fixture
def cli() -> Path:
    return clada_binary()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty project directory, with a sibling `outside/` that must stay
    empty."""
    (tmp_path / "root").mkdir()
    (tmp_path / "outside").mkdir()
    return tmp_path / "root"


@pytest.fixture(autouse=True)
def own_clada_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """clada's configuration, state and runtime directories in a fresh
    home, so that no test reads or writes the user's approvals or locks."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(home / "run"))
    for key in list(os.environ):
        if key.startswith("GIT_"):
            monkeypatch.delenv(key)
    return home
