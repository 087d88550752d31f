"""The OS sandbox: commands run for real, confined to the decoy workspace.

The decoy HOME and the canary beside the workspace live in the test's temporary directory,
which the sandbox here does not make writable (its temp dir is a separate ``scratch``).
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.tools.conftest import MakeHarness
from tests.tools.test_run_command import running, wait_until_gone
from tools.guard.landlock import abi_version, point_caches
from tools.guard.sandbox import Sandbox, SandboxMode, SandboxSettings, namespaces_missing

requires_landlock = pytest.mark.skipif(
    abi_version() < 1, reason="the kernel has no Landlock (Linux 5.13+ with it enabled)"
)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    path = tmp_path / "scratch"
    path.mkdir()
    return path


def _sandbox(mode: SandboxMode, scratch: Path, *, network: bool = True) -> Sandbox:
    return Sandbox(mode, network=network, writable=(scratch,), abi=abi_version())


@requires_landlock
async def test_writes_inside_the_workspace_and_scratch_work(
    make_harness: MakeHarness, workspace: Path, scratch: Path
) -> None:
    harness = make_harness(sandbox=_sandbox("workspace-write", scratch))
    result = await harness.run(
        "run_command",
        command=f"mkdir -p a/b && echo hi > a/b/f && mv a/b/f g && echo t > {scratch}/t && cat g",
    )
    assert not result.is_error, result.content
    assert (workspace / "g").read_text() == "hi\n"
    assert (scratch / "t").read_text() == "t\n"


@requires_landlock
async def test_a_write_outside_is_refused_with_a_hint(
    make_harness: MakeHarness, decoy_home: Path, scratch: Path
) -> None:
    harness = make_harness(sandbox=_sandbox("workspace-write", scratch))
    result = await harness.run("run_command", command="echo pwned >> ~/CANARY; touch ../beside")
    assert result.is_error
    assert "Permission denied" in result.content
    assert "sandbox: commands may write only inside the workspace" in result.content
    assert (decoy_home / "CANARY").read_text() == "do not delete"
    assert not (decoy_home.parent / "beside").exists()


@requires_landlock
async def test_children_and_interpreters_are_confined_too(
    make_harness: MakeHarness, decoy_home: Path, scratch: Path
) -> None:
    harness = make_harness(sandbox=_sandbox("workspace-write", scratch))
    script = "import os, shutil; shutil.rmtree(os.path.expanduser('~'))"
    result = await harness.run("run_command", command=f'{sys.executable} -c "{script}"')
    assert result.is_error
    assert "PermissionError" in result.content
    assert (decoy_home / "CANARY").exists()


@requires_landlock
async def test_read_only_allows_reading_but_no_writes(
    make_harness: MakeHarness, workspace: Path, scratch: Path
) -> None:
    (workspace / "notes.txt").write_text("keep\n")
    harness = make_harness(sandbox=_sandbox("read-only", scratch))
    result = await harness.run("run_command", command="cat notes.txt; echo x > notes.txt")
    assert result.is_error
    assert result.content.startswith("keep")
    assert "sandbox: read-only" in result.content
    assert (workspace / "notes.txt").read_text() == "keep\n"
    ok = await harness.run("run_command", command="echo quiet > /dev/null && ls")
    assert not ok.is_error, ok.content


@requires_landlock
async def test_network_false_blocks_tcp_where_the_kernel_can(
    make_harness: MakeHarness, scratch: Path
) -> None:
    if abi_version() < 4:
        pytest.skip("Landlock ABI 4 (Linux 6.7) is needed to block TCP")
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        blocked = make_harness(sandbox=_sandbox("workspace-write", scratch, network=False))
        result = await blocked.run("run_command", command=f'{sys.executable} -c "{connect}"')
        assert result.is_error
        assert "PermissionError" in result.content
        allowed = make_harness(sandbox=_sandbox("workspace-write", scratch))
        result = await allowed.run("run_command", command=f'{sys.executable} -c "{connect}"')
        assert not result.is_error, result.content


async def test_background_children_that_leave_the_session_are_killed(
    make_harness: MakeHarness, workspace: Path, scratch: Path
) -> None:
    harness = make_harness(sandbox=_sandbox("workspace-write", scratch))
    result = await harness.run(
        "run_command", command="(setsid sleep 300.43 &); sleep 0.2; echo started"
    )
    assert not result.is_error, result.content
    assert wait_until_gone("sleep 300.43") == []


@pytest.mark.parametrize("mode", ["namespaces", "workspace-write", "off"])
def test_what_the_launcher_runs_dies_with_the_agent_even_after_kill_9(
    mode: str, workspace: Path, scratch: Path
) -> None:
    """An MCP server or a command must not outlive an agent killed before it could stop it."""
    if mode == "namespaces" and (missing := namespaces_missing()):
        pytest.skip(f"no namespaces here: {missing}")
    pid_file = workspace / "server.pid"
    marker = f"time.sleep(300.{os.getpid()})"  # found by what it runs: a PID namespace renumbers
    server = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); {marker}"
    namespaces = mode == "namespaces"
    agent = (
        "import subprocess, sys\n"
        "from pathlib import Path\n"
        "from tools.guard.sandbox import Sandbox\n"
        f"sandbox = Sandbox({'workspace-write' if namespaces else mode!r}, "
        f"writable=(Path({str(scratch)!r}),), abi={abi_version()}, namespaces={namespaces})\n"
        f"argv = sandbox.wrap([sys.executable, '-c', {server!r}], Path({str(workspace)!r}))\n"
        "subprocess.Popen(argv).wait()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen([sys.executable, "-c", agent], env=env)
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the server never started"
            assert process.poll() is None, "the agent ended early"
            time.sleep(0.05)
        assert running(marker)
        process.kill()
        process.wait()
        assert wait_until_gone(marker, 30) == []
    finally:
        process.kill()
        process.wait()


def test_settings_default_to_workspace_write_with_the_temp_dir(tmp_path: Path) -> None:
    sandbox = Sandbox.create(SandboxSettings(writable_paths=["~/cache"]), scratch=tmp_path)
    assert sandbox.mode == "workspace-write"
    assert tmp_path in sandbox.writable
    assert Path(os.path.expanduser("~/cache")) in sandbox.writable


def test_the_person_is_told_when_nothing_confines_commands() -> None:
    off = Sandbox("off")
    assert "Sandbox is off" in (off.notice() or "")
    assert "off" in off.describe()
    missing = Sandbox("workspace-write", abi=0)
    assert "No OS sandbox" in (missing.notice() or "")
    assert "not enforced" in missing.describe()
    working = Sandbox("workspace-write", abi=7)
    assert working.notice() is None
    assert working.describe() == "workspace-write (Landlock)"
    both = Sandbox("workspace-write", abi=7, namespaces=True)
    assert both.notice() is None
    assert both.describe() == "workspace-write (namespaces + Landlock)"
    refused = Sandbox("workspace-write", abi=7, namespaces_missing="the kernel refused")
    assert "Landlock only (the kernel refused)" in (refused.notice() or "")
    assert "no namespaces: the kernel refused" in refused.describe()


def test_caches_the_sandbox_would_refuse_are_moved_into_its_own(tmp_path: Path) -> None:
    workspace, scratch = tmp_path / "work", tmp_path / "scratch"
    cache = str(scratch / "cache")
    home = {"HOME": "/home/someone", "npm_config_cache": "/home/someone/.npm"}
    mine = {"XDG_CACHE_HOME": str(scratch / "mine"), "npm_config_cache": f"{workspace}/.npm"}
    writable = [str(workspace), str(scratch)]

    point_caches(home, cache, writable)
    point_caches(mine, cache, writable)

    assert home == {
        "HOME": "/home/someone",
        "XDG_CACHE_HOME": cache,
        "npm_config_cache": f"{cache}/npm",
    }
    assert mine == {
        "XDG_CACHE_HOME": str(scratch / "mine"),
        "npm_config_cache": f"{workspace}/.npm",
    }
    confined = Sandbox("workspace-write", abi=7, cache=scratch / "cache").wrap(["x"], workspace)
    assert confined[confined.index("--cache") + 1] == cache
    assert "--cache" not in Sandbox("read-only", abi=7, cache=scratch).wrap(["x"], workspace)
    assert "--cache" not in Sandbox("off", cache=scratch).wrap(["x"], workspace)


def _with_cache(scratch: Path) -> Sandbox:
    """The default sandbox, but without the system temp dir, which holds the decoy HOME."""
    return replace(Sandbox.create(SandboxSettings(), scratch=scratch), writable=(scratch,))


@requires_landlock
async def test_a_package_manager_writes_its_cache_under_the_sandbox(
    make_harness: MakeHarness, workspace: Path, decoy_home: Path, scratch: Path
) -> None:
    harness = make_harness(sandbox=_with_cache(scratch))
    command = (
        'mkdir -p "$XDG_CACHE_HOME/pip" "$npm_config_cache/_logs" && '
        'echo wheel > "$XDG_CACHE_HOME/pip/w" && echo log > "$npm_config_cache/_logs/l" && echo ok'
    )

    result = await harness.run("run_command", command=command)

    assert not result.is_error, result.content
    assert (scratch / "cache" / "pip" / "w").read_text() == "wheel\n"
    assert (scratch / "cache" / "npm" / "_logs" / "l").read_text() == "log\n"
    assert not (decoy_home / ".cache").exists()
    assert not (decoy_home / ".npm").exists()


@requires_landlock
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
async def test_npm_install_works_under_the_sandbox(
    make_harness: MakeHarness, workspace: Path, decoy_home: Path, scratch: Path
) -> None:
    manifest = b'{"name": "dep", "version": "1.0.0"}'
    with tarfile.open(workspace / "dep-1.0.0.tgz", "w:gz") as tarball:  # what npm pack makes
        entry = tarfile.TarInfo("package/package.json")
        entry.size = len(manifest)
        tarball.addfile(entry, io.BytesIO(manifest))
    harness = make_harness(sandbox=_with_cache(scratch))

    result = await harness.run(  # a tarball is unpacked through npm's cache
        "run_command",
        command="npm init -y >/dev/null && npm install --offline ./dep-1.0.0.tgz",
        timeout=120,
    )

    assert not result.is_error, result.content
    assert (workspace / "node_modules" / "dep").exists()
    assert not (decoy_home / ".npm").exists()
