"""clada from Python: check, apply and convert the edit documents language
models write, in process.

    import clada

    report = clada.apply(reply, "path/to/project")
    if not report["ok"]:
        print(clada.render(report))

``check``, ``apply`` and ``schema`` return the reports of ``clada check``,
``clada apply`` and ``clada schema`` with ``--format json``, as dicts typed by
the TypedDicts here (``ApplyReport``, ``CheckReport``, ...); ``render`` gives
the text report of a run, what the command line prints and a model should
read. A call that cannot run raises ``CladaError``; nothing ever prompts.
"""

from ._clada import __version__, apply, apply_files, check, convert, prompt, schema
from ._errors import CladaError, ConvertError
from ._render import render
from ._reports import *  # noqa: F403
from ._reports import __all__ as _report_types

__all__ = [
    "CladaError",
    "ConvertError",
    "__version__",
    "apply",
    "apply_files",
    "check",
    "convert",
    "prompt",
    "render",
    "schema",
    *_report_types,
]
