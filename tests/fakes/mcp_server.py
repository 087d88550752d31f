"""A real MCP server, written with the official SDK, that misbehaves on request.

Run it as ``python mcp_server.py [--http PORT]``. Its tools cover what real servers do:
answer (``echo``, ``add``, ``picture``, ``long_text``), fail (``fail``), crash mid-call
(``crash``), crash once then work (``flaky_read``), hang (``hang``), and corrupt the stdio
stream (``garbage``, ``bad_result``). ``count`` is not idempotent and records each time it
runs, so a test can tell whether it was retried. The environment shapes the whole server:

- ``FAKE_MCP_START_DELAY``: seconds to sleep before serving (a slow start).
- ``FAKE_MCP_START_GATE``: a file; the server serves only once it exists (a start a test
  lets finish when it chooses).
- ``FAKE_MCP_NEVER_START``: exit at once with a message on stderr.
- ``FAKE_MCP_STATE``: a directory for the marker files of ``flaky_read`` and ``count``, and
  ``starts`` (each start's pid, a line each).
- ``FAKE_MCP_SECRET``: printed to stderr at start (to test that logs redact it).
- ``FAKE_MCP_ENV_FILE``: a file the server writes its whole environment to at start, as a
  JSON object (to test what the agent passes it).
- ``FAKE_MCP_COPY``: a file the server reads at start (relative to its working directory);
  what it got, or why it got nothing, goes to ``copied`` in ``FAKE_MCP_STATE``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

server = MCPServer("fake", log_level="WARNING")
# The protocol's stdout, kept before the SDK diverts fd 1 to stderr: what a native library
# that prints to the original stdout would write to.
_WIRE = os.dup(1)


def _state() -> Path:
    return Path(os.environ.get("FAKE_MCP_STATE", "."))


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return f"echo: {text}"


@server.tool(annotations=ToolAnnotations(idempotent_hint=True))
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool(annotations=READ_ONLY)
def picture() -> Image:
    """A 1x1 PNG."""
    return Image(data=PIXEL, format="png")


@server.tool(annotations=READ_ONLY)
def long_text(size: int) -> str:
    """``size`` characters of text."""
    return "x" * size


@server.tool()
def fail() -> str:
    """Always raises."""
    raise ValueError("the database is locked")


@server.tool()
def crash() -> str:
    """Kills the server in the middle of the call (not idempotent: never retried)."""
    os._exit(3)


@server.tool(annotations=READ_ONLY)
def flaky_read() -> str:
    """Crashes the server the first time, answers after the restart."""
    marker = _state() / "flaky_read_crashed"
    if not marker.exists():
        marker.write_text("1")
        os._exit(4)
    return "flaky_read ok after restart"


@server.tool()
def count() -> str:
    """Not idempotent: appends a line each time it runs, then crashes the server."""
    with (_state() / "count_calls").open("a") as log:
        log.write("called\n")
    os._exit(5)


@server.tool(annotations=READ_ONLY)
async def hang() -> str:
    """Blocks the server's event loop: it answers neither this call nor a ping."""
    while True:
        time.sleep(3600)


@server.tool()
async def spawn_and_hang() -> str:
    """Starts a background child (its pid goes to the state dir), then blocks the server."""
    child = subprocess.Popen(["sleep", "300"], start_new_session=False)
    (_state() / "child_pid").write_text(str(child.pid))
    while True:
        time.sleep(3600)


@server.tool(annotations=READ_ONLY)
def garbage() -> str:
    """Writes a line that is not JSON-RPC into the stdio stream, then never answers."""
    os.write(_WIRE, b"DEBUG: connected to the database\n")
    while True:
        time.sleep(3600)


@server.tool(annotations=READ_ONLY)
def bad_result(ctx: Context) -> str:  # type: ignore[type-arg]
    """Answers its own call with a result of the wrong shape (content is not a list)."""
    reply = {"jsonrpc": "2.0", "id": int(ctx.request_id), "result": {"content": "oops"}}
    os.write(_WIRE, (json.dumps(reply) + "\n").encode())
    return "never seen"


def main() -> None:
    if os.environ.get("FAKE_MCP_STATE"):
        with (_state() / "starts").open("a") as starts:
            starts.write(f"{os.getpid()}\n")
    if os.environ.get("FAKE_MCP_ENV_FILE"):
        Path(os.environ["FAKE_MCP_ENV_FILE"]).write_text(json.dumps(dict(os.environ)))
    if os.environ.get("FAKE_MCP_COPY"):
        try:
            copied = f"read: {Path(os.environ['FAKE_MCP_COPY']).read_text()!r}"
        except OSError as exc:
            copied = f"refused: {exc.strerror}"
        (_state() / "copied").write_text(copied)
    if os.environ.get("FAKE_MCP_SECRET"):
        print(f"starting with token {os.environ['FAKE_MCP_SECRET']}", file=sys.stderr, flush=True)
    if os.environ.get("FAKE_MCP_NEVER_START"):
        print("fatal: cannot open the database", file=sys.stderr, flush=True)
        sys.exit(2)
    time.sleep(float(os.environ.get("FAKE_MCP_START_DELAY", "0")))
    gate = os.environ.get("FAKE_MCP_START_GATE")
    while gate and not Path(gate).exists():
        time.sleep(0.05)
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()


if __name__ == "__main__":
    main()
