"""Issue 30, items 5 and 9 through the Python package: a diagnostic's fix
carries the lines it makes, the text report shows them, and the help of an
aider block without a file name speaks aider's format."""

from __future__ import annotations

import clada

NEAR = '<<<<< SEARCH path="a.txt"\nold\n=====\nnew\n>>>>> REPLACE\n'
FIXED = '<<<<<<< SEARCH path="a.txt"\nold\n=======\nnew\n>>>>>>> REPLACE'


def test_a_fix_carries_the_lines_it_makes_and_the_text_shows_them() -> None:
    report = clada.check(NEAR)
    assert report["ok"] is False
    fixes = [d["fix"] for d in report["diagnostics"] if "fix" in d]
    assert [f["lines"] for f in fixes] == [{"start_line": 1, "end_line": 5, "text": FIXED}]
    text = clada.render(report)
    assert "Note: the fix makes lines 1-5 read:" in text, text
    assert '<<<<<<< SEARCH path="a.txt"' in text, text


def test_an_aider_block_without_a_file_is_told_in_aiders_words() -> None:
    report = clada.check("```python\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n")
    [d] = [d for d in report["diagnostics"] if d["severity"] == "error"]
    assert d["kind"] == "missing_attribute"
    assert d["message"] == "this SEARCH block names no file"
    assert d["help"] is not None and d["help"].startswith("put the file's path on its own line just before the block")
    assert "fix" not in d
