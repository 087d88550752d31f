"""Run one command hook and read what it said, as Claude Code does.

The command runs with ``sh -c`` as the person, in the workspace, outside the command sandbox,
in its own process group, with the event's JSON on stdin. Exit code 0: stdout that starts
with ``{`` is parsed as the JSON output, other stdout is plain text. Exit code 2: a block,
stderr is the reason. Any other code, a timeout, a crash or JSON that does not parse: a
non-blocking error, for the person to see.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent.hooks.settings import CommandHook

OUTPUT_LIMIT = 64 * 1024
"""Bytes kept of a hook's stdout and of its stderr; the rest is read and dropped."""

Permission = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class HookVerdict:
    """What one hook run means, whatever the event.

    Attributes:
        block: The reason the action is blocked (exit 2's stderr, ``decision: block``'s
            reason, or a ``deny``), or None.
        permission: PreToolUse's ``permissionDecision`` (``decision: approve`` is ``allow``).
        updated_input: PreToolUse's ``updatedInput``.
        context: ``additionalContext``, or exit 0's plain stdout (for the events that add it).
        stop: ``continue: false``'s ``stopReason`` (or a default text), else None.
        message: ``systemMessage``, shown to the person.
        error: Why the hook failed without blocking (shown to the person), else None.
    """

    block: str | None = None
    permission: Permission | None = None
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: str | None = None
    stop: str | None = None
    message: str | None = None
    error: str | None = None


async def run_hook(
    hook: CommandHook,
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    limit: int = OUTPUT_LIMIT,
) -> HookVerdict:
    """Run ``hook`` with ``payload`` on stdin and read its verdict; never raises but on
    cancellation (the hook is killed then too)."""
    name = _short(hook.command)
    try:
        process = await asyncio.create_subprocess_shell(
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,  # its own group, so a timeout kills its children too
        )
    except OSError as exc:
        return HookVerdict(error=f"hook {name} could not start: {exc.strerror or exc}")
    try:
        out, err = await asyncio.wait_for(_talk(process, payload, limit), hook.timeout)
    except TimeoutError:
        _kill(process)
        await process.wait()
        return HookVerdict(error=f"hook {name} timed out after {hook.timeout:g}s and was killed")
    except BaseException:
        _kill(process)
        raise
    code = process.returncode
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace").strip()
    if code == 2:
        return HookVerdict(block=stderr or f"blocked by hook {name}")
    if code != 0:
        detail = f": {stderr[-500:]}" if stderr else ""
        return HookVerdict(error=f"hook {name} failed (exit code {code}){detail}")
    return parse_output(stdout, name)


def parse_output(stdout: str, name: str = "") -> HookVerdict:
    """The verdict of a hook that exited 0 with ``stdout``."""
    text = stdout.strip()
    if not text.startswith("{"):
        return HookVerdict(context=text or None)
    try:
        data = json.loads(text)
    except ValueError as exc:
        return HookVerdict(error=f"hook {name} printed JSON that does not parse ({exc})")
    if not isinstance(data, dict):
        return HookVerdict(error=f"hook {name} printed JSON that is not an object")
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    permission = specific.get("permissionDecision")
    reason = _text(specific.get("permissionDecisionReason")) or ""
    decision = data.get("decision")
    # Claude Code's older PreToolUse spelling: approve/block at the top level.
    if permission is None and decision == "approve":
        permission, reason = "allow", _text(data.get("reason")) or ""
    block = None
    if decision == "block":
        block = _text(data.get("reason")) or f"blocked by hook {name}"
    if permission == "deny":
        block = reason or f"denied by hook {name}"
    updated = specific.get("updatedInput")
    stop = None
    if data.get("continue") is False:
        stop = _text(data.get("stopReason")) or f"hook {name} asked to stop"
    return HookVerdict(
        block=block,
        permission=permission if permission in ("allow", "deny", "ask") else None,
        permission_reason=reason,
        updated_input=updated if isinstance(updated, dict) else None,
        context=_text(specific.get("additionalContext")),
        stop=stop,
        message=_text(data.get("systemMessage")),
    )


async def _talk(
    process: asyncio.subprocess.Process, payload: Mapping[str, Any], limit: int
) -> tuple[bytes, bytes]:
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    data = json.dumps(payload, default=str).encode()
    # A hook that never reads stdin must not block us: write and close in the background.
    writer = asyncio.ensure_future(_feed(process.stdin, data))
    try:
        out, err = await asyncio.gather(
            _read_bounded(process.stdout, limit), _read_bounded(process.stderr, limit)
        )
        await process.wait()
    finally:
        writer.cancel()
    return out, err


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the hook exited without reading: fine
        stdin.write(data)
        await stdin.drain()
        stdin.close()


async def _read_bounded(stream: asyncio.StreamReader, limit: int) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < limit:
            kept += chunk[: limit - len(kept)]
    return bytes(kept)


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _short(command: str) -> str:
    first = command.strip().splitlines()[0] if command.strip() else command
    return repr(first if len(first) <= 60 else first[:57] + "...")
