"""The extension's hand-written stub (python/clada/_clada.pyi), which
editors read: stubtest checks its signatures in CI; here, that each
function's docstring is the extension's own (src/lib.rs), word for word."""

from __future__ import annotations

import ast
import inspect

import clada._clada
from support import REPO

STUB = REPO / "clada-py/python/clada/_clada.pyi"


def test_every_function_of_the_stub_has_the_extension_docstring() -> None:
    functions = [node for node in ast.parse(STUB.read_text()).body if isinstance(node, ast.FunctionDef)]
    assert sorted(f.name for f in functions) == sorted(n for n in clada._clada.__all__ if n != "__version__")
    for function in functions:
        own = inspect.cleandoc(getattr(clada._clada, function.name).__doc__ or "")
        assert ast.get_docstring(function) == own, f"{function.name}: copy src/lib.rs's docstring into {STUB.name}"
