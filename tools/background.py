"""Background commands: ``run_command`` with ``run_in_background``, read and stopped later.

Each command runs through the same sandbox launcher as a foreground one, in its own process
group. A daemon thread reads its output into a ring of `RING_BYTES`; everything else (the
events, the notes for the model, stopping) happens on the agent's thread, so the event bus
and the session are never touched from the reader.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from providers.events import Event
from tools.blocking import in_worker
from tools.text import decode

RING_BYTES = 1024 * 1024
"""Output kept per command; older output is dropped, and the next read says how much."""
TERM_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL of a command's process group."""
_HOLD_LINE = 4096
"""A running command's unfinished last line is held back for the next read (a secret cut
in two would escape redaction), unless it grows longer than this."""

Emit = Callable[[Event], None]


class BackgroundStarted(Event):
    """A command was started in the background (kept so a resumed session knows of it)."""

    type: Literal["background_started"] = "background_started"
    shell_id: str
    command: str

    def describe(self) -> str:
        return f"{self.shell_id} started in the background"


class BackgroundEnded(Event):
    """A background command ended: exited, killed, or stopped with the agent."""

    type: Literal["background_ended"] = "background_ended"
    shell_id: str
    status: str

    def describe(self) -> str:
        return f"{self.shell_id} {self.status}"


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@dataclass(eq=False)
class BackgroundShell:
    """One background command, its output ring and how far the model has read it."""

    id: str
    command: str
    process: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)
    stopped_by: str = ""
    """Who stopped it ("kill_command", "/bashes", "the session's end"); "" while it ran on."""
    announced: bool = False
    """Whether the model heard that it ended."""
    recorded: bool = False
    """Whether its end went to the session."""
    eof: threading.Event = field(default_factory=threading.Event)
    """Set when the last writer closed the pipe: all the output is in the ring."""
    stirred: threading.Event = field(default_factory=threading.Event)
    """Set by the first output, or by the end of the output."""
    _ring: bytearray = field(default_factory=bytearray)
    _base: int = 0
    """The absolute offset of the ring's first byte."""
    _read_to: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def wait(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the command to end (blocking: call it off the loop)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(max(0.0, seconds))

    def status(self) -> str:
        """``running``, ``exited with code N``, ``killed by signal N`` or ``stopped by X``."""
        code = self.process.poll()
        if code is None:
            return "running"
        if self.stopped_by:
            return f"stopped by {self.stopped_by}"
        return f"killed by signal {-code}" if code < 0 else f"exited with code {code}"

    def pump(self, fd: int) -> None:
        """Read the output until every writer closed the pipe (runs on its own thread)."""
        try:
            while chunk := os.read(fd, 65_536):
                self.stirred.set()
                with self._lock:
                    self._ring += chunk
                    if (excess := len(self._ring) - RING_BYTES) > 0:
                        del self._ring[:excess]
                        self._base += excess
        except OSError:
            pass
        finally:
            os.close(fd)
            self.eof.set()
            self.stirred.set()

    def unread(self) -> tuple[bytes, int]:
        """The output not read yet (and the bytes dropped unread), marked as read."""
        ended = not self.running
        with self._lock:
            start = max(self._read_to, self._base)
            lost = start - self._read_to
            data = bytes(self._ring[start - self._base :])
            cut = data.rfind(b"\n") + 1
            if not ended and cut < len(data) and len(data) - cut <= _HOLD_LINE:
                data = data[:cut]
            self._read_to = start + len(data)
        return data, lost

    def signal(self, sig: signal.Signals) -> None:
        if self.running:
            _kill_group(self.pid, sig)


@dataclass(frozen=True)
class Read:
    """What `BackgroundShells.read` returns to the model."""

    text: str
    status: str


class BackgroundShells:
    """The background commands of one agent: started, read, stopped, announced, listed.

    Args:
        emit: Where `BackgroundStarted` / `BackgroundEnded` go (the session keeps them).
        lost: Commands a resumed session had running when it stopped: ``{id: command}``.
    """

    def __init__(self, emit: Emit | None = None, lost: Mapping[str, str] | None = None) -> None:
        self._emit = emit
        self._shells: dict[str, BackgroundShell] = {}
        self._next = 1 + max((_number(name) for name in lost or ()), default=0)
        self._lost = dict(lost or {})

    def start(
        self, command: str, argv: list[str], *, cwd: Path, env: dict[str, str], emit: Emit
    ) -> BackgroundShell:
        """Start ``argv`` (the sandbox's) in its own process group; raises `OSError`.

        Called on the agent's thread: the launcher asks for SIGTERM when the thread that
        started it ends (``PR_SET_PDEATHSIG``), and that thread lives as long as the agent.
        """
        if self._emit is None:
            self._emit = emit
        read_fd, write_fd = os.pipe()
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
            )
        except OSError:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        shell = BackgroundShell(f"bash_{self._next}", command, process)
        self._next += 1
        self._shells[shell.id] = shell
        threading.Thread(target=shell.pump, args=(read_fd,), daemon=True).start()
        self._say(BackgroundStarted(shell_id=shell.id, command=command))
        return shell

    def get(self, shell_id: str) -> BackgroundShell | None:
        return self._shells.get(shell_id.strip())

    @property
    def ids(self) -> list[str]:
        return list(self._shells)

    def listing(self) -> list[BackgroundShell]:
        """Every command of this agent, oldest first; ends noticed since are recorded."""
        self._record_ends()
        return list(self._shells.values())

    @property
    def running_count(self) -> int:
        return sum(shell.running for shell in self._shells.values())

    async def read(
        self, shell: BackgroundShell, pattern: Any, redact: Callable[[str], str]
    ) -> Read:
        """The output new since the last read (only lines ``pattern`` finds, if given)."""
        status = shell.status()  # before reading: an end seen here has all its output
        if status != "running":
            await _drain(shell)
        data, lost = shell.unread()
        text = redact(decode(data))
        if pattern is not None:
            text = "\n".join(line for line in text.splitlines() if pattern.search(line))
        if lost:
            text = f"[{lost} bytes of older output were dropped unread]\n{text}"
        if status != "running":
            shell.announced = True
            self._record_ends()
        return Read(text, status)

    async def stop(self, shell: BackgroundShell, by: str) -> str:
        """SIGTERM the command's process group, SIGKILL what is left after a grace period."""
        if shell.running:
            shell.stopped_by = by
            shell.signal(signal.SIGTERM)
            await in_worker(shell.wait, TERM_GRACE)
            _kill_group(shell.pid, signal.SIGKILL)  # what is left, the launcher included
            await in_worker(shell.wait, 5.0)
        shell.announced = True
        self._record_ends()
        return shell.status()

    def close(self) -> None:
        """Stop every running command (SIGTERM, then SIGKILL): none outlives the agent."""
        running = [shell for shell in self._shells.values() if shell.running]
        for shell in running:
            shell.stopped_by = "the session's end"
            shell.signal(signal.SIGTERM)
        deadline = time.monotonic() + TERM_GRACE
        for shell in running:
            shell.wait(deadline - time.monotonic())
        for shell in running:
            _kill_group(shell.pid, signal.SIGKILL)  # what the launcher may have left
            shell.wait(1.0)
        self._record_ends()

    @property
    def lost(self) -> str:
        """The commands a resumed session lost, for the person; "" when none (or told)."""
        return ", ".join(f"{name} (`{_short(cmd)}`)" for name, cmd in self._lost.items())

    def news(self) -> str | None:
        """One short note for the model: commands that ended since it last heard, and those
        a resumed session lost with the restart; None when there is nothing to say."""
        notes = []
        if lost := self.lost:
            notes.append(
                f"background commands of this session were lost when the agent restarted: "
                f"{lost}; start them again if they are still needed"
            )
            for name in self._lost:  # told once: a later resume does not tell it again
                self._say(BackgroundEnded(shell_id=name, status="lost with a restart"))
            self._lost = {}
        ended = [s for s in self._shells.values() if not s.announced and not s.running]
        for shell in ended:
            shell.announced = True
            notes.append(
                f"background {shell.id} (`{_short(shell.command)}`) {shell.status()}; "
                "command_output shows its output"
            )
        self._record_ends()
        return f"[{'; '.join(notes)}]" if notes else None

    def _record_ends(self) -> None:
        for shell in self._shells.values():
            if not shell.recorded and not shell.running:
                shell.recorded = True
                self._say(BackgroundEnded(shell_id=shell.id, status=shell.status()))

    def _say(self, event: Event) -> None:
        if self._emit is not None:
            self._emit(event)


def lost_commands(events: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The background commands a stored session started and never saw end: ``{id: command}``."""
    started: dict[str, str] = {}
    for event in events:
        name = event.get("shell_id")
        if not isinstance(name, str):
            continue
        if event.get("type") == "background_started":
            started[name] = str(event.get("command", ""))
        elif event.get("type") == "background_ended":
            started.pop(name, None)
    return started


async def _drain(shell: BackgroundShell) -> None:
    """Give the reader a moment to take what an ended command left in the pipe."""
    if not shell.eof.is_set():
        await in_worker(shell.eof.wait, 1.0)


def _number(shell_id: str) -> int:
    match = re.fullmatch(r"bash_(\d{1,9})", shell_id)
    return int(match.group(1)) if match else 0


def _short(command: str) -> str:
    first = command.strip().splitlines()[0] if command.strip() else ""
    return first if len(first) <= 80 else first[:79] + "…"
