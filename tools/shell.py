"""run_command: a shell command in its own process group, with a timeout that kills the group."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import BaseModel, Field

from tools.background import BackgroundShells
from tools.background_tools import FIRST_OUTPUT_WAIT, start_in_background
from tools.base import Tool, ToolContext, ToolError, ToolOutput
from tools.blocking import in_worker
from tools.events import ProtectedPathsRestored, ProtectedScanIncomplete
from tools.guard.landlock import EXIT_SANDBOX_FAILED
from tools.guard.protected import ProtectedSnapshot
from tools.guard.protected_scan import WALK_BUDGET
from tools.guard.sandbox import Sandbox, SandboxSettings
from tools.saved_output import SavedOutput
from tools.settings import ToolSettings
from tools.text import Gap, decode

_TERM_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL of a timed-out process group."""
_DRAIN = 2.0
"""Seconds to keep reading after the shell exited, for output still in the pipe."""
_KEEP_BYTES = 512 * 1024
"""Bytes of head and of tail kept while reading, so a flood of output cannot exhaust memory."""
_DENIED = ("Permission denied", "Read-only file system", "Operation not permitted")
"""What a write refused by the sandbox looks like in a command's output."""
_REFUSED = ("Device or resource busy", *_DENIED)
"""How a refused write to a protected file reads: read-only mounted, a rename over it is EBUSY."""
_PROTECTED_NAMES = r"(?:\.git/|agent\.yaml|\.agent/|\.mcp\.json|\.claude/)"
PROTECTED_HINT = (
    "[sandbox: commands may not change .git/config, .git/hooks, the agent's configuration or "
    "a file git or a configured hook runs (git config, git remote add, git worktree add and "
    "git submodule update write them). Do "
    "not retry or work around it; tell the person the exact command to run themselves.]"
)


class RunCommandInput(BaseModel):
    command: str = Field(description="Shell command, run with `bash -c` in the workspace root.")
    timeout: float | None = Field(
        default=None, gt=0, description="Seconds before the command is killed (optional)."
    )
    run_in_background: bool = Field(
        default=False,
        description="Start it in the background and return at once with a shell id (for "
        "servers and watchers); read it with command_output, stop it with kill_command.",
    )


@dataclass
class _Capture:
    """Head and tail of a process's output, with a count of what fell in between.

    Once the output is longer than the model will be shown (``save_after`` bytes), all of it
    also goes to ``saved``, so the cut can say where the whole of it is.
    """

    saved: SavedOutput
    save_after: int
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0
    dropped_lines: int = 0
    total: int = 0

    def add(self, chunk: bytes) -> None:
        before, self.total = self.total, self.total + len(chunk)
        if before <= self.save_after < self.total:
            self.saved.start(bytes(self.head + self.tail) + chunk)
        elif before > self.save_after:
            self.saved.add(chunk)
        room = _KEEP_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > _KEEP_BYTES:
            excess = len(self.tail) - _KEEP_BYTES
            self.dropped += excess
            self.dropped_lines += self.tail.count(b"\n", 0, excess)
            del self.tail[:excess]

    def text(self) -> str:
        return decode(bytes(self.head)) + decode(bytes(self.tail))

    def redacted(self, redact: Callable[[str], str]) -> tuple[str, Gap | None]:
        """The output redacted (head and tail apart: a key split by the gap is gone), and the
        gap between them, if the flood left one."""
        if not self.dropped:
            return redact(self.text()), None
        head = redact(decode(bytes(self.head)))
        tail = redact(decode(bytes(self.tail)))
        return head + tail, Gap(at=len(head), bytes=self.dropped, lines=self.dropped_lines)


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _read_all(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(65_536):
        capture.add(chunk)


async def _stop_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, then SIGKILL what is left after a grace period.

    The launcher answers SIGTERM by killing every descendant, also those in other sessions.
    """
    _kill_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), _TERM_GRACE)
    _kill_group(proc.pid, signal.SIGKILL)
    await proc.wait()


class RunCommand(Tool[RunCommandInput]):
    name = "run_command"
    description = (
        "Run a shell command (bash -c) in the workspace root and return its combined "
        "stdout/stderr and exit code. stdin is closed: do not run interactive programs. "
        "Processes it leaves behind are killed when the command ends; for a server or a "
        "watcher, pass run_in_background. Commands run in a sandbox: "
        "they may write only inside the workspace and the temp directory, and may not "
        "change .git/config, .git/hooks or the agent's configuration."
    )
    input_model = RunCommandInput
    kind = "command"

    def __init__(
        self, sandbox: Sandbox | None = None, shells: BackgroundShells | None = None
    ) -> None:
        self._sandbox = sandbox
        self.shells = shells if shells is not None else BackgroundShells()
        """This agent's background commands."""
        self._scan_told = False  # the person hears once that the protected-path scan stopped

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox commands run in (the default one unless configured)."""
        if self._sandbox is None:
            self._sandbox = Sandbox.create(SandboxSettings())
        return self._sandbox

    def timeout(self, args: RunCommandInput, settings: ToolSettings) -> float:
        # The command enforces its own limit (to return the output so far); this outer
        # bound only catches a failure to stop the process group.
        if args.run_in_background:
            return FIRST_OUTPUT_WAIT + _DRAIN + 10.0
        return self._limit(args, settings) + _TERM_GRACE + _DRAIN + 5.0

    def _limit(self, args: RunCommandInput, settings: ToolSettings) -> float:
        return min(args.timeout or settings.command_timeout, settings.max_command_timeout)

    def command(self, args: RunCommandInput) -> str:
        return args.command

    def summary(self, args: RunCommandInput) -> str:
        first = args.command.strip().splitlines()[0] if args.command.strip() else ""
        return f"{'run in the background' if args.run_in_background else 'run'}: {first[:120]}"

    def details(self, args: RunCommandInput, ctx: ToolContext) -> str:
        return args.command

    async def run(self, args: RunCommandInput, ctx: ToolContext) -> ToolOutput:
        snapshot = await in_worker(
            ProtectedSnapshot.take, ctx.workspace, self.sandbox.hook_commands
        )
        if not (snapshot.found.complete or self._scan_told):
            self._scan_told = True
            ctx.emit(ProtectedScanIncomplete(budget=WALK_BUDGET))
        try:
            if args.run_in_background:
                output = await start_in_background(self.shells, self.sandbox, args.command, ctx)
            else:
                output = await self._run(args, ctx, snapshot.names())
        finally:
            restored = await asyncio.shield(in_worker(snapshot.restore))
            if restored:
                ctx.emit(ProtectedPathsRestored(paths=restored))
        if restored:
            names = ", ".join(restored)
            note = (
                f"[the command changed protected files, which were put back: {names}. "
                "Commands may not change .git/config, .git/hooks or the agent's configuration; "
                "ask the person to make that change.]"
            )
            return replace(output, content=f"{output.content}\n{note}", is_error=True)
        return output

    async def _run(
        self, args: RunCommandInput, ctx: ToolContext, protected: tuple[str, ...] = ()
    ) -> ToolOutput:
        # Our own pipe, not asyncio's: asyncio's wait() also waits for the pipe to close,
        # which a background child holding stdout would delay until the timeout.
        read_fd, write_fd = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.sandbox.argv(args.command, ctx.workspace),
                cwd=ctx.workspace,
                env=self.sandbox.environment(),  # without the provider keys and other secrets
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            raise ToolError(f"could not start bash: {exc}") from None
        finally:
            os.close(write_fd)
        capture = _Capture(
            SavedOutput(ctx.outputs, ctx.redact),
            save_after=min(ctx.settings.max_output_chars, _KEEP_BYTES),
        )
        try:
            return await self._collect(proc, read_fd, capture, args, ctx, protected)
        finally:
            capture.saved.close(keep=False)  # unless it was kept already: cancelled, failed

    async def _collect(
        self,
        proc: asyncio.subprocess.Process,
        read_fd: int,
        capture: _Capture,
        args: RunCommandInput,
        ctx: ToolContext,
        protected: tuple[str, ...],
    ) -> ToolOutput:
        limit = self._limit(args, ctx.settings)
        timed_out = False
        stream, transport = await _open_reader(read_fd)
        reader = asyncio.create_task(_read_all(stream, capture))
        try:
            try:
                await asyncio.wait_for(proc.wait(), limit)
            except TimeoutError:
                timed_out = True
                await _stop_group(proc)
            # Leftover background children would hold the pipe open; the call is over.
            _kill_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), _DRAIN)
        finally:
            if proc.returncode is None:  # cancelled: never leave the group running
                _kill_group(proc.pid, signal.SIGTERM)
                asyncio.get_running_loop().call_later(
                    _TERM_GRACE, _kill_group, proc.pid, signal.SIGKILL
                )
            reader.cancel()
            transport.close()
        if proc.returncode == EXIT_SANDBOX_FAILED and capture.text().startswith("sandbox:"):
            raise ToolError(
                capture.text().strip(),
                hint="the command did not run; tell the person the sandbox could not start",
            )
        output = _command_output(capture, proc.returncode, timed_out, limit, ctx)
        if not (output.is_error and self.sandbox.enforced):
            return output
        if _protected_refusal(output.content, ctx.workspace, protected):
            return replace(output, content=f"{output.content}\n{PROTECTED_HINT}", is_error=True)
        if any(denied in output.content for denied in _DENIED):
            return replace(
                output, content=f"{output.content}\n{self.sandbox.denied_hint()}", is_error=True
            )
        return output


def _protected_refusal(output: str, workspace: Path, protected: tuple[str, ...] = ()) -> bool:
    """Whether a line of ``output`` is a refused write to the workspace's protected files
    (named relative to it, or under its absolute path: never the agent's own home);
    ``protected`` are more of them (workspace-relative), found from the files."""
    before = rf"(?:^|[\s'\"`:=(]|{re.escape(str(workspace))}/)"
    names = "|".join([_PROTECTED_NAMES, *(re.escape(rel) for rel in protected)])
    named = re.compile(before + f"(?:{names})")
    return any(
        named.search(line) and any(refused in line for refused in _REFUSED)
        for line in output.splitlines()
    )


async def _open_reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(fd, "rb", buffering=0)
    )
    return stream, transport


def _command_output(
    capture: _Capture, code: int | None, timed_out: bool, limit: float, ctx: ToolContext
) -> ToolOutput:
    """The output with how the command ended; cut later, once, by the executor, which
    counts in the gap the capture left and names the file holding the whole output."""
    settings = ctx.settings
    output, gap = capture.redacted(ctx.redact)  # redacted before any cut: see ToolContext
    body = output.rstrip("\n") or ("" if gap else "(no output)")
    if gap is not None:
        gap = replace(gap, at=min(gap.at, len(body)))
    if timed_out:
        reason = (
            f"[timed out after {limit:g}s; the command and its child processes were killed. "
            "Output so far is shown above. Run it in smaller steps, or pass a larger timeout "
            f"(at most {settings.max_command_timeout:g}s).]"
        )
        text, is_error = f"{body}\n{reason}", True
    elif code is not None and code < 0:
        text, is_error = f"{body}\n[killed by signal {-code}]", True
    else:
        text, is_error = f"{body}\n[exit code {code}]", code != 0
    cut = gap is not None or len(text) > settings.max_output_chars
    saved = capture.saved.close(keep=cut)
    whole = None
    if saved is not None:
        whole = str(saved) + (" (its first 16 MiB)" if capture.saved.truncated else "")
    return ToolOutput(text, is_error=is_error, gap=gap, whole=whole)
