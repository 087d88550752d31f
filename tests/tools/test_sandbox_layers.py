"""Attacks on what runs outside the sandbox, run as an attacker would, under both layers.

Each test runs with the decoy HOME and workspace of the fixtures, a canary beside them, and a
sandbox whose only writable places are the workspace and a scratch dir in the test's temp
dir. ``layer`` (tests/tools/conftest.py) runs each attack under the namespace layer (skipped where
the kernel refuses it) and under the Landlock-only path, forced with the switch a person (or
a test) can set.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.tools.conftest import NAMESPACES_MISSING, MakeHarness
from tests.tools.test_run_command import wait_until_gone
from tools.guard.landlock import abi_version
from tools.guard.sandbox import Sandbox, SandboxMode

pytestmark = pytest.mark.skipif(
    abi_version() < 1, reason="the kernel has no Landlock (Linux 5.13+ with it enabled)"
)
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


@pytest.fixture
def repo(workspace: Path) -> Path:
    """A repository with a commit, a submodule's git dir and the agent's config."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.txt").write_text("a\n")
    subprocess.run([*GIT, "add", "a.txt"], cwd=workspace, check=True)
    subprocess.run([*GIT, "commit", "-qm", "init"], cwd=workspace, check=True)
    module = workspace / ".git" / "modules" / "sub"
    (module / "hooks").mkdir(parents=True)
    (module / "config").write_text("[core]\n\tbare = false\n")
    (workspace / "agent.yaml").write_text("approval: ask\n")
    return workspace


def _state(repo: Path) -> dict[str, bytes]:
    """Every file under .git except objects, refs and logs (what git reads or runs)."""
    git = repo / ".git"
    found = {}
    for path in sorted(git.rglob("*")):
        rel = path.relative_to(git)
        if rel.parts[0] in {"objects", "refs", "logs", "index", "ORIG_HEAD", "COMMIT_EDITMSG"}:
            continue
        found[str(rel)] = path.read_bytes() if path.is_file() else b"<dir>"
    return found


def _canaries_survive(tmp_path: Path) -> None:
    assert (tmp_path / "home" / "CANARY").read_text() == "do not delete"
    canary = tmp_path / "OUTSIDE_CANARY"
    assert canary.read_text() == "outside the workspace"
    assert canary.stat().st_mode & 0o777 == 0o644
    assert canary.stat().st_mtime > 1_000_000_000 + 365 * 86400 * 20  # not 2001


async def test_a_hard_link_alias_of_git_config_cannot_be_written(
    make_harness: MakeHarness, repo: Path, sandbox: Sandbox, tmp_path: Path
) -> None:
    before = (repo / ".git" / "config").read_text()
    harness = make_harness(sandbox=sandbox)

    linked = await harness.run("run_command", command="ln .git/config cfg; ls")
    if not (repo / "cfg").exists():  # the namespace layer: a link across a mount fails
        assert "Invalid cross-device link" in linked.content or "Read-only" in linked.content
        os.link(repo / ".git" / "config", repo / "cfg")  # as if made another way
    written = await harness.run(
        "write_file", path="cfg", content="[core]\n\tfsmonitor = touch PWNED\n"
    )
    edited = await harness.run(
        "edit_file", path="cfg", old_string="[core]", new_string="[core]\n\tfsmonitor = x"
    )

    assert written.is_error
    assert "protected file .git/config under another name" in written.content
    assert edited.is_error
    assert (repo / ".git" / "config").read_text() == before
    _canaries_survive(tmp_path)


async def test_any_file_with_two_links_is_not_written_in_place(
    make_harness: MakeHarness, repo: Path, sandbox: Sandbox
) -> None:
    (repo / "one").write_text("x\n")
    os.link(repo / "one", repo / "two")
    harness = make_harness(sandbox=sandbox)

    result = await harness.run("write_file", path="two", content="y\n")

    assert result.is_error
    assert "2 hard links" in result.content
    assert (repo / "one").read_text() == "x\n"


GIT_CONFIG_WRITES = [
    "echo '[core] fsmonitor = touch PWNED' > .git/config.worktree",
    "echo /tmp/evil > .git/commondir",
    "echo '[core] fsmonitor = touch PWNED' >> .git/modules/sub/config",
    "printf '#!/bin/sh\\ntouch PWNED\\n' > .git/modules/sub/hooks/post-checkout",
    "mkdir -p .git/worktrees/x && echo /tmp > .git/worktrees/x/commondir",
    "echo '* filter=evil' > .git/info/attributes",
    "printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit",
    "echo 'approval: full-auto' > agent.yaml; mkdir -p .agent; echo '{}' > .mcp.json",
]


@pytest.mark.parametrize("command", GIT_CONFIG_WRITES)
async def test_git_configuration_files_cannot_be_written_by_a_command(
    make_harness: MakeHarness, repo: Path, sandbox: Sandbox, tmp_path: Path, command: str
) -> None:
    before = _state(repo)
    agent_config = (repo / "agent.yaml").read_text()
    harness = make_harness(sandbox=sandbox)

    await harness.run("run_command", command=command)

    assert _state(repo) == before
    assert (repo / "agent.yaml").read_text() == agent_config
    assert not (repo / ".agent").exists()
    assert not (repo / ".mcp.json").exists()
    _canaries_survive(tmp_path)


@pytest.mark.parametrize(
    "path",
    [".git/config.worktree", ".git/commondir", ".git/modules/sub/config", ".git/info/exclude"],
)
async def test_file_tools_ask_before_writing_git_configuration(
    make_harness: MakeHarness, repo: Path, sandbox: Sandbox, path: str
) -> None:
    harness = make_harness(sandbox=sandbox)  # full-auto, and nobody to ask

    result = await harness.run("write_file", path=path, content="[core]\n\tfsmonitor = x\n")

    assert result.is_error
    assert "needs the person's approval" in result.content
    assert "fsmonitor" not in (repo / path).read_text() if (repo / path).exists() else True


async def test_git_work_still_works(
    make_harness: MakeHarness, repo: Path, sandbox: Sandbox
) -> None:
    harness = make_harness(sandbox=sandbox)
    git = " ".join(GIT)
    command = (
        f"echo b > b.txt && {git} add b.txt && {git} commit -qm b && {git} branch side && "
        f"{git} checkout -q side && echo c >> a.txt && {git} stash -q && {git} checkout -q - && "
        f"{git} stash list && {git} log --oneline | wc -l"
    )

    result = await harness.run("run_command", command=command)

    assert not result.is_error, result.content
    assert "stash@{0}" in result.content
    assert result.content.splitlines()[-2].strip() == "2"
    assert "put back" not in result.content


async def test_git_config_from_a_command_is_refused_with_what_to_do(
    make_harness: MakeHarness, repo: Path, sandbox: Sandbox
) -> None:
    before = (repo / ".git" / "config").read_text()
    harness = make_harness(sandbox=sandbox)

    result = await harness.run("run_command", command="git config user.name mallory")

    assert result.is_error
    # Refused at once (namespaces: a read-only file) or put back after (Landlock alone).
    assert "may not change .git/config" in result.content
    assert "to run themselves" in result.content or "ask the person" in result.content
    assert "may write only inside the workspace" not in result.content  # not the wrong hint
    assert (repo / ".git" / "config").read_text() == before


async def test_a_refused_write_to_an_agent_home_elsewhere_gets_the_outside_hint(
    make_harness: MakeHarness, repo: Path, sandbox: Sandbox, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "home" / ".agent" / "sessions"
    elsewhere.mkdir(parents=True)
    harness = make_harness(sandbox=sandbox)

    result = await harness.run("run_command", command=f"touch {elsewhere}/x.jsonl")

    assert result.is_error
    assert "may write only inside the workspace" in result.content
    assert "may not change .git/config" not in result.content
    assert not (elsewhere / "x.jsonl").exists()


@pytest.mark.parametrize("signal", ["-9", "-STOP"])
async def test_a_command_that_kills_or_stops_its_launcher_leaves_nothing_behind(
    make_harness: MakeHarness, repo: Path, sandbox: Sandbox, tmp_path: Path, signal: str
) -> None:
    writer = (
        "sleep 300.51 & sleep 1; printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/post-commit; "
        "echo late > late"
    )
    command = f'(setsid sh -c "{writer}" &); sleep 0.2; kill {signal} $PPID; echo after'
    harness = make_harness(sandbox=sandbox)

    started = time.monotonic()
    result = await harness.run("run_command", command=command, timeout=15)

    assert time.monotonic() - started < 10, result.content
    assert "after" in result.content
    time.sleep(1.5)  # longer than the writer waits
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
    assert not (repo / "late").exists()
    assert wait_until_gone("sleep 300.51", 2) == []
    _canaries_survive(tmp_path)


async def test_metadata_outside_the_workspace_cannot_change(
    make_harness: MakeHarness, workspace: Path, sandbox: Sandbox, tmp_path: Path
) -> None:
    if not sandbox.namespaces:
        pytest.skip("Landlock has no right for chmod or utime: only the namespace layer stops it")
    harness = make_harness(sandbox=sandbox)

    result = await harness.run(
        "run_command",
        command="chmod 000 ../OUTSIDE_CANARY; touch -d 2001-01-01 ../OUTSIDE_CANARY ~/CANARY; "
        "mv ../OUTSIDE_CANARY ../moved",
    )

    assert result.is_error
    assert "Read-only file system" in result.content
    _canaries_survive(tmp_path)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root")
@pytest.mark.skipif(bool(NAMESPACES_MISSING), reason=f"no namespaces: {NAMESPACES_MISSING}")
def test_the_namespace_layer_works_for_a_normal_user() -> None:
    """The tests run as root here; a person does not. Run the launcher as nobody (in a temp
    dir of its own: pytest's is closed to other users)."""
    with tempfile.TemporaryDirectory() as top:
        _as_nobody(Path(top))


def _as_nobody(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    canary = tmp_path / "canary"
    canary.write_text("keep")
    for path in (work, work / ".git", work / ".git" / "config"):
        os.chown(path, 65534, 65534)
    sandbox = Sandbox("workspace-write", abi=abi_version(), namespaces=True)
    argv = sandbox.wrap(["sh", "-c", "echo x >> .git/config; echo ok > f; chmod 0 ../canary"], work)
    argv[0] = shutil.which("python3") or sys.executable  # the launcher needs no packages
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    argv = [*nobody, *[a for a in argv if a != "--parent" and not a.isdigit()]]

    done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=30)

    assert (work / "f").read_text() == "ok\n", done.stderr
    assert (work / ".git" / "config").read_text() == "[core]\n"
    assert canary.stat().st_mode & 0o777 == 0o644
    assert "Read-only file system" in done.stderr


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="no filter here")
def test_the_signal_guard_alone_keeps_kill_off_the_launcher(tmp_path: Path) -> None:
    """What stops ``kill -9 $PPID`` where Landlock cannot scope signals (before Linux 6.12):
    tried without Landlock, in a child of a throwaway Python standing in for the launcher.
    Only signal 0 is sent (it checks, and does nothing): were the filter to fail, a real
    signal to -1 would reach every process the tests' user may signal."""
    script = (
        "import ctypes, os, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "from tools.guard import signal_guard\n"
        "launcher = os.getpid()\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS\n"
        "    assert signal_guard.install(launcher, os.getpgid(launcher))\n"
        "    refused = []\n"
        "    for target in (launcher, -os.getpgid(launcher), -1):\n"
        "        try:\n"
        "            os.kill(target, 0)\n"
        "        except PermissionError:\n"
        "            refused.append(target)\n"
        "    try:\n"
        "        os.pidfd_open(launcher)\n"
        "    except PermissionError:\n"
        "        refused.append('pidfd')\n"
        "    os.kill(os.getpid(), 0)  # its own processes stay reachable\n"
        "    os._exit(0 if len(refused) == 4 else 1)\n"
        "_, status = os.waitpid(child, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr


async def test_read_only_allows_no_write_to_shared_memory(
    make_harness: MakeHarness, workspace: Path, sandbox: Sandbox
) -> None:
    """The README promises no writes in read-only; /dev/shm is a writable tmpfs everywhere."""
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here")
    name = Path("/dev/shm") / f"agent-test-{os.getpid()}-{workspace.parent.name}"
    harness = make_harness(sandbox=replace(sandbox, mode=SandboxMode.READ_ONLY))
    try:
        result = await harness.run("run_command", command=f"echo leak > {name}")
        assert result.is_error
        assert not name.exists()
    finally:
        name.unlink(missing_ok=True)
    writable = await make_harness(sandbox=sandbox).run(
        "run_command", command=f"echo ok > {name} && cat {name} && rm {name}"
    )
    assert not writable.is_error, writable.content  # workspace-write keeps it for tools
