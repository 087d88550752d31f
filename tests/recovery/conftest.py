"""Fixtures: `rec` (an event recorder building recovering providers on the virtual clock) and
`redis_url` (a real redis-server for this test, skipped where none is installed)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.clock import VirtualClock
from tests.recovery.support import Recorder


@pytest.fixture
def rec(clock: VirtualClock) -> Recorder:
    return Recorder(clock)


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A real ``redis-server`` on a free loopback port, for this test only."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    pytest.importorskip("redis", reason="the redis client is not installed (pip install redis)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, process)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"redis-server exited with status {process.returncode}")
        with socket.socket() as client:
            if client.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    pytest.fail("redis-server did not start listening within 20 s")
