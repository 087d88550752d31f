"""JSON-RPC messages over stdio, one per line, for the ACP connection (`acp` SDK's Transport).

Why not the SDK's own stdio transport: it drops a line that is not JSON without a word, and a
client waiting for an answer would wait forever. Here a malformed message is answered with a
JSON-RPC error (parse error, invalid request) and the server goes on.

stdout belongs to the protocol alone: `claim_stdout` moves the process's file descriptor 1 to
stderr, so whatever else writes there (a library, a child process) cannot corrupt the stream.
Reading and writing happen on two daemon threads, so a client that stops reading, or never
closes its end, cannot keep the process from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import structlog

log = structlog.get_logger("agent.acp.transport")

MAX_LINE = 50 * 1024 * 1024
"""The longest message read (the SDK's limit too): a prompt with embedded files is large."""


def claim_stdout() -> int:
    """A private copy of stdout for the protocol; fd 1 and `sys.stdout` then go to stderr."""
    protocol = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


def _error(request_id: Any, code: int, message: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": message, "data": data},
    }


def read_lines(fd: int, chunk: int = 1 << 16, limit: int = MAX_LINE) -> Iterator[bytes | None]:
    """The non-blank lines read from ``fd``, until its end; None for one over ``limit``.

    Plain ``os.read``, not ``sys.stdin``: a daemon thread blocked in a buffered reader's
    ``readline`` makes the interpreter abort at exit (it cannot take the reader's lock).
    """
    pending = bytearray()
    skipping = False
    while data := os.read(fd, chunk):
        searched = len(pending)  # only the new bytes can hold the next newline
        pending += data
        start = 0
        while (end := pending.find(b"\n", max(start, searched))) >= 0:
            line = bytes(pending[start:end])
            start = end + 1
            if skipping:
                skipping = False
            elif line.strip():
                yield line
        del pending[:start]
        if len(pending) > limit:
            pending.clear()
            if not skipping:
                skipping = True
                yield None
    if pending.strip() and not skipping:
        yield bytes(pending)


def check_message(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``line`` as a JSON-RPC message, or the error that answers it (exactly one is set)."""
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError) as error:
        return None, _error(None, -32700, "Parse error", {"details": f"not JSON: {error}"})
    if not isinstance(message, dict):
        kind = type(message).__name__
        details = f"a message must be a JSON object, not {kind} (batches are not supported)"
        return None, _error(None, -32600, "Invalid request", {"details": details})
    request_id = message.get("id")
    if request_id is not None and not isinstance(request_id, str | int):
        details = "id must be a string or an integer"
        return None, _error(None, -32600, "Invalid request", {"details": details})
    if message.get("jsonrpc") != "2.0":
        details = 'jsonrpc must be "2.0"'
        return None, _error(request_id, -32600, "Invalid request", {"details": details})
    if "method" in message:
        if not isinstance(message["method"], str):
            details = "method must be a string"
            return None, _error(request_id, -32600, "Invalid request", {"details": details})
        return message, None
    if "id" in message and ("result" in message or "error" in message):
        return message, None  # a response to one of our requests
    details = "neither a request (method) nor a response (id with result or error)"
    return None, _error(request_id, -32600, "Invalid request", {"details": details})


class StdioTransport:
    """Whole JSON-RPC messages in from the file descriptor ``source``, out to ``sink``.

    ``receive`` returns None at the client's end of input, or once a write failed because the
    client went away (EPIPE): either way the conversation is over.
    """

    def __init__(self, source: int, sink: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._incoming: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._sink = sink
        self.closed = False
        self.redactors: list[Callable[[str], str]] = []
        """Each session's secret redactor: nothing the client is sent shows a key."""
        threading.Thread(target=self._read, args=(source,), name="acp-in", daemon=True).start()
        self._writer = threading.Thread(target=self._write, name="acp-out", daemon=True)
        self._writer.start()

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            raise ConnectionError("the client has gone away")
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        for redact in self.redactors:
            text = redact(text)
        self._outgoing.put(text.encode() + b"\n")

    async def receive(self) -> dict[str, Any] | None:
        return await self._incoming.get()

    async def close(self) -> None:
        """Stop sending once what was queued is written (for at most two seconds)."""
        self.closed = True
        self._outgoing.put(None)
        await asyncio.to_thread(self._writer.join, 2.0)

    def _deliver(self, message: dict[str, Any] | None) -> None:
        self._loop.call_soon_threadsafe(self._incoming.put_nowait, message)

    def _read(self, source: int) -> None:
        try:
            for line in read_lines(source):
                message: dict[str, Any] | None = None
                error: dict[str, Any] | None
                if line is None:
                    details = f"a message may be at most {MAX_LINE} bytes"
                    error = _error(None, -32600, "Invalid request", {"details": details})
                else:
                    message, error = check_message(line)
                if error is None:
                    self._deliver(message)
                else:
                    log.warning("malformed_message", error=error["error"]["data"]["details"])
                    self._outgoing.put(self._encode(error))
        except OSError as problem:
            log.warning("stdin_failed", error=str(problem))
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                self._deliver(None)

    @staticmethod
    def _encode(message: dict[str, Any]) -> bytes:
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"

    def _write(self) -> None:
        while (data := self._outgoing.get()) is not None:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._sink, view) :]
            except OSError as error:  # EPIPE: the client closed its end
                log.info("client_gone", error=str(error))
                self.closed = True
                with contextlib.suppress(RuntimeError):
                    self._deliver(None)
                return
