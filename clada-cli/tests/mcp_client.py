"""`clada mcp` driven by the official MCP Python SDK (the `mcp` package).

Run by `clada-cli/tests/mcp.rs` (`a_python_sdk_session`) when an interpreter
with `mcp` installed is at hand: `CLADA_MCP_PYTHON`, else `python3`; `.ci/run`
makes one in a virtual environment with pinned versions. Usage:

    python mcp_client.py CLADA ROOT

ROOT holds `app.py` (`x = 1`). Prints what it checked; exits non-zero (with
the assertion that failed) when the server is not what a client expects.
"""

import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

CLADA, ROOT = sys.argv[1], sys.argv[2]


def server(*args):
    return StdioServerParameters(command=CLADA, args=["mcp", *args])


async def session_checks():
    async with stdio_client(server("--no-git", "-C", ROOT)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "clada", init.server_info
            # The instructions teach the format (the text of `clada prompt`).
            assert "<<<<<<< SEARCH" in (init.instructions or ""), init.instructions
            print("initialize: serverInfo and instructions")

            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert sorted(tools) == ["apply", "check"], sorted(tools)
            check, apply = tools["check"], tools["apply"]
            assert check.annotations.read_only_hint is True, check.annotations
            assert apply.annotations.read_only_hint is False, apply.annotations
            assert apply.annotations.destructive_hint is True, apply.annotations
            assert check.output_schema and apply.output_schema
            print("tools/list: annotations and output schemas")

            # A good document: the SDK validates the structured content
            # against the output schema (jsonschema) before returning it.
            doc = '<<<<<<< SEARCH path="app.py"\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n'
            r = await session.call_tool("check", {"document": doc})
            assert not r.is_error, r
            assert r.structured_content["ok"] is True, r.structured_content
            text = r.content[0].text
            assert text.startswith("Block 1 (standalone task): ok"), text
            assert "OK: 1 block, 1 task, 0 errors, 0 warnings" in text, text
            print("tools/call check: the text report, the JSON report validated")

            # Issue 30: a near-miss block's fix, as the lines it makes, in
            # the text and the structured report; an aider block without a
            # file name told in aider's words.
            near = '<<<<< SEARCH path="app.py"\nx = 1\n=====\nx = 2\n>>>>> REPLACE\n'
            r = await session.call_tool("check", {"document": near})
            text = r.content[0].text
            assert "Note: the fix makes lines 1-5 read:" in text, text
            assert '<<<<<<< SEARCH path="app.py"' in text, text
            [fix] = [d["fix"] for d in r.structured_content["diagnostics"] if "fix" in d]
            assert fix["lines"] == {
                "start_line": 1,
                "end_line": 5,
                "text": '<<<<<<< SEARCH path="app.py"\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE',
            }, fix
            bare = "```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n"
            r = await session.call_tool("apply", {"document": bare})
            assert r.is_error, r
            text = r.content[0].text
            assert "this SEARCH block names no file" in text, text
            assert "put the file's path on its own line just before the block" in text, text
            assert 'path="' not in text, text
            print("tools/call: fixes shown as lines, help in the block's dialect")

            r = await session.call_tool("apply", {"document": doc, "dry_run": True})
            assert not r.is_error, r
            assert r.structured_content["dry_run"] is True
            assert "Would edit app.py" in r.content[0].text, r.content[0].text
            with open(os.path.join(ROOT, "app.py")) as f:
                assert f.read() == "x = 1\n"
            r = await session.call_tool("apply", {"document": doc})
            assert not r.is_error, r
            assert "[task-1] ✓ Edited app.py (1 replacement)" in r.content[0].text
            with open(os.path.join(ROOT, "app.py")) as f:
                assert f.read() == "x = 2\n"
            print("tools/call apply: dry run, then for real")

            # The same edit again, without context: finding `x = 2` proves
            # nothing, so a tool error whose text says where it stands and
            # what to send next.
            r = await session.call_tool("apply", {"document": doc})
            assert r.is_error, r
            text = r.content[0].text
            assert "✗ Error: match_count_mismatch" in text, text
            assert "already stands at line 1: if that is this change, drop the edit" in text, text
            assert "task 1: failed, fix and send again" in text, text
            assert r.structured_content["ok"] is False
            print("tools/call apply: a failure, said in words")

            # An edit with its context, sent twice: the second time it is
            # already applied, a success (not a tool error).
            insert = '<<<<<<< SEARCH path="app.py"\nx = 2\n=======\nx = 2\ny = 3\n>>>>>>> REPLACE\n'
            r = await session.call_tool("apply", {"document": insert})
            assert not r.is_error, r
            r = await session.call_tool("apply", {"document": insert})
            assert not r.is_error, r
            assert r.structured_content["ok"] is True, r.structured_content
            assert r.structured_content["summary"]["already_applied"] == 1
            assert r.structured_content["resend"]["already_applied"] == [1]
            assert "[task-1] ✓ Already applied in app.py" in r.content[0].text, r.content[0].text
            print("tools/call apply: already applied, a success")

            # Arguments the tool does not take are a tool error the model
            # reads (SEP-1303); a missing document and a bad `atomic` too.
            for arguments, says in [
                ({"document": doc, "root": "/"}, "takes no argument `root`"),
                ({}, "needs `document`"),
                ({"document": 42}, "needs `document`"),
                ({"document": doc, "atomic": "yes"}, "`atomic` is"),
            ]:
                r = await session.call_tool("apply", arguments)
                assert r.is_error, r
                assert says in r.content[0].text, r.content[0].text
            print("tools/call with bad arguments: a tool error that says which")

            prompt = await session.get_prompt("clada")
            assert "<<<<<<< WRITE" in prompt.messages[0].content.text
            print("prompts/get clada")


async def changes_checks():
    """Issue 30: what a real run changed is in the structured content
    (`changes`, validated against the output schema by the SDK) of every
    apply, and in the text when the call asks (`diff`)."""
    root = tempfile.mkdtemp()
    with open(os.path.join(root, "a.py"), "w") as f:
        f.write("x = 1\ny = 2\n")
    edit = lambda old, new: (
        f'<<<<<<< SEARCH path="a.py"\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n'
        '<<<<<<< WRITE path="n.txt"\nhello\n>>>>>>> END\n'
    )
    async with stdio_client(server("--no-git", "-C", root)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("apply", {"document": edit("x = 1", "x = 3")})
            assert not r.is_error, r
            changes = r.structured_content["changes"]
            assert [(c["path"], c["change"], c["added"], c["removed"]) for c in changes] == [
                ("a.py", "modified", 1, 1),
                ("n.txt", "created", 1, 0),
            ], changes
            assert "-x = 1\n+x = 3\n" in changes[0]["diff"], changes
            # The text is `clada apply`'s: no diff unless asked.
            assert "=== Changed ===" not in r.content[0].text, r.content[0].text
            r = await session.call_tool(
                "apply", {"document": edit("y = 2", "y = 4"), "diff": True}
            )
            assert not r.is_error, r
            text = r.content[0].text
            assert "=== Changed ===\nmodified a.py (+1 -1)\n--- a/a.py\n+++ b/a.py\n" in text, text
            assert "-y = 2\n+y = 4\n" in text, text
            # n.txt was written again with what it held: no change.
            assert "n.txt" not in text.split("=== Changed ===")[1], text
            with open(os.path.join(root, "a.py")) as f:
                assert f.read() == "x = 3\ny = 4\n"
            r = await session.call_tool("apply", {"document": edit("x = 3", "x = 5"), "diff": "yes"})
            assert r.is_error, r
            assert "`diff` is a boolean" in r.content[0].text, r.content[0].text
    print("tools/call apply: what it changed, in the JSON always, in the text with diff")


async def bad_root_checks():
    missing = os.path.join(tempfile.mkdtemp(), "no-such-dir")
    try:
        async with stdio_client(server("-C", missing)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
    except (MCPError, BaseExceptionGroup) as e:
        # anyio may wrap the error in groups, one in another.
        while isinstance(e, BaseExceptionGroup):
            e = e.exceptions[0]
        assert isinstance(e, MCPError), repr(e)
        message = e.error.message
    else:
        raise AssertionError("a server without its root initialized")
    assert "cannot open the root directory" in message and missing in message, message
    print("a missing root: initialize fails, saying why")


async def cancel_checks():
    """Issue 31: an apply the client gives up on (the SDK sends
    `notifications/cancelled`) stops: its command is ended, the task after
    it never runs, and the server answers the next calls at once."""
    import anyio
    import time

    root = tempfile.mkdtemp()
    doc = (
        '<<<<<<< WRITE path="first.txt"\n1\n>>>>>>> END\n'
        "<<<<<<< RUN\nsleep 6\n>>>>>>> END\n"
        '<<<<<<< WRITE path="second.txt"\n2\n>>>>>>> END\n'
    )
    params = server("--no-git", "--allow-any-command", "-C", root)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            start = time.monotonic()
            with anyio.move_on_after(1.5):
                await session.call_tool("apply", {"document": doc})
                raise AssertionError("the apply was not cancelled")
            abandoned = time.monotonic()
            later = await session.call_tool(
                "apply", {"document": '<<<<<<< WRITE path="after.txt"\n3\n>>>>>>> END\n'}
            )
            assert not later.is_error, later
            assert time.monotonic() - abandoned < 2, "the cancelled run went on"
            await anyio.sleep(max(0, 6.5 - (time.monotonic() - start)))
            assert os.path.exists(os.path.join(root, "first.txt"))
            assert not os.path.exists(os.path.join(root, "second.txt")), "the task after it ran"
    print("a cancelled apply stops, and the next call is answered at once")


asyncio.run(session_checks())
asyncio.run(changes_checks())
asyncio.run(bad_root_checks())
asyncio.run(cancel_checks())
print("ok")
