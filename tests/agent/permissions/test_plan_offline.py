"""Offline means offline: a plan-mode command (or any with ``sandbox.network: false``) can
send no UDP and reach no Unix socket outside, not only no TCP; with the network on, the same
command can.

Each case runs under the namespace layer (skipped where the kernel refuses it) and the
Landlock-only path, with the decoy HOME and workspace of the fixtures.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.permissions.plan import PlanAwareSandbox
from tools.guard import signal_guard
from tools.guard.landlock import abi_version
from tools.guard.sandbox import (
    LAYERS_VARIABLE,
    Sandbox,
    SandboxMode,
    SandboxSettings,
    namespaces_missing,
)

pytestmark = pytest.mark.skipif(
    abi_version() < 1, reason="the kernel has no Landlock (Linux 5.13+ with it enabled)"
)
SEND = """
import socket, sys
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.sendto(b"udp", ("127.0.0.1", int(sys.argv[1])))
unix = socket.socket(socket.AF_UNIX)
unix.connect(sys.argv[2])
unix.sendall(b"unix")
"""


@dataclass
class Listeners:
    """A UDP listener on loopback and a Unix socket in a directory outside the workspace."""

    udp: socket.socket
    unix: socket.socket
    path: Path

    def command(self) -> str:
        port = self.udp.getsockname()[1]
        args = [sys.executable, "-c", SEND, str(port), str(self.path)]
        return " ".join(shlex.quote(arg) for arg in args)

    def reached(self) -> dict[str, bool]:
        """Which listener got something (non-blocking: the command has ended)."""
        found = {"udp": True, "unix": True}
        try:
            self.udp.recv(16)
        except BlockingIOError:
            found["udp"] = False
        try:
            self.unix.accept()[0].close()
        except BlockingIOError:
            found["unix"] = False
        return found


@pytest.fixture
def listeners(tmp_path: Path) -> Iterator[Listeners]:
    outside = tmp_path / "outside"
    outside.mkdir()
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
        socket.socket(socket.AF_UNIX) as unix,
    ):
        udp.bind(("127.0.0.1", 0))
        unix.bind(str(outside / "s.sock"))
        unix.listen()
        for sock in (udp, unix):
            sock.setblocking(False)
        yield Listeners(udp, unix, outside / "s.sock")


@pytest.fixture(params=["namespaces", "landlock"])
def layer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "landlock":
        monkeypatch.setenv(LAYERS_VARIABLE, "landlock")
    elif missing := namespaces_missing():
        pytest.skip(f"no namespaces here: {missing}")
    if request.param == "landlock" and signal_guard.offline_program(os.uname().machine) is None:
        pytest.skip("without namespaces, only the seccomp filter (x86_64, aarch64) stops UDP")
    return str(request.param)


def _run(argv: list[str], workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=workspace, capture_output=True, text=True, check=False)


def test_a_plan_mode_command_reaches_no_socket(
    layer: str, listeners: Listeners, workspace: Path
) -> None:
    planning = [True]
    plan = PlanAwareSandbox.around(Sandbox.create(SandboxSettings()), lambda: planning[0])
    assert plan.blocks_network
    assert (layer == "namespaces") == plan.planning.namespaces

    refused = _run(plan.argv(listeners.command(), workspace), workspace)

    assert refused.returncode != 0
    assert listeners.reached() == {"udp": False, "unix": False}
    assert "Traceback" in refused.stderr  # python's own error: the send was refused

    planning[0] = False  # the plan is approved: an ordinary command, network on
    allowed = _run(plan.argv(listeners.command(), workspace), workspace)

    assert allowed.returncode == 0, allowed.stderr
    assert listeners.reached() == {"udp": True, "unix": True}


def test_network_false_turns_off_more_than_tcp(
    layer: str, listeners: Listeners, workspace: Path
) -> None:
    sandbox = Sandbox.create(SandboxSettings(network=False))
    assert sandbox.blocks_network
    command = f"touch made && {listeners.command()}"

    run = _run(sandbox.argv(command, workspace), workspace)

    assert run.returncode != 0
    assert (workspace / "made").exists()  # writes in the workspace still work
    assert listeners.reached() == {"udp": False, "unix": False}
    assert sandbox.mode is SandboxMode.WORKSPACE_WRITE


def test_the_offline_filter_refuses_sockets_but_not_socketpair(layer: str, workspace: Path) -> None:
    sandbox = Sandbox.create(SandboxSettings(network=False))
    check = (
        "import socket\n"
        "a, b = socket.socketpair(); a.sendall(b'ok'); print(b.recv(2).decode())\n"
        "try:\n    socket.socket(socket.AF_INET6, socket.SOCK_RAW, 58)\n"
        "except OSError as exc:\n    print('raw refused', exc.errno)\n"
    )
    run = _run(sandbox.wrap([sys.executable, "-c", check], workspace), workspace)

    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "ok"
    assert run.stdout.splitlines()[1].startswith("raw refused")
