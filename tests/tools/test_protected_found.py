"""Protected paths found from the files: a hostile repository whose git configuration, nested
repository, submodule and hook settings name files that later run outside the sandbox.

Everything happens in the decoy workspace and HOME of the fixtures; each attack is tried by a
sandboxed command under both sandbox layers and by the file tools, and must leave every
targeted file as it was (and the canaries beside the workspace untouched).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.fakes.hostile_repo import HOOK, NEW_FILES, TARGETS, make_hostile_repository
from tests.tools.conftest import MakeHarness, RecordingApprover
from tools.guard.landlock import abi_version
from tools.guard.protected import ProtectedSnapshot, protected_reason
from tools.guard.protected_scan import scan
from tools.guard.sandbox import Sandbox


@pytest.fixture
def hostile(workspace: Path) -> Path:
    make_hostile_repository(workspace)
    return workspace


def _contents(workspace: Path, paths: list[str]) -> dict[str, bytes | None]:
    return {
        rel: (workspace / rel).read_bytes() if (workspace / rel).is_file() else None
        for rel in paths
    }


def test_the_scan_finds_what_git_and_the_hooks_run_and_nothing_else(hostile: Path) -> None:
    found = scan(hostile, [HOOK])

    missing = [rel for rel in TARGETS + NEW_FILES if found.reason(rel) is None]
    assert missing == []
    for rel in ("src/app.py", "scripts/other.sh", "vendor/lib/.git/objects/x", "mod/file"):
        assert found.reason(rel) is None, rel
    assert "vendor/lib/.git" in found.git_dirs
    assert found.complete
    assert "core.hooksPath" in (found.reason(".githooks/pre-commit") or "")


def test_every_target_asks_by_name_or_by_what_names_it(hostile: Path) -> None:
    for rel in TARGETS + NEW_FILES:
        assert protected_reason(hostile, hostile / rel, [HOOK]), rel
    for rel in ("src/app.py", "scripts/other.sh", "README.md"):
        assert protected_reason(hostile, hostile / rel, [HOOK]) is None, rel


def test_the_walk_is_bounded_and_says_so(hostile: Path) -> None:
    deep = hostile / "node_modules"
    for index in range(50):
        (deep / f"p{index}").mkdir(parents=True)
    found = scan(hostile, budget=20)
    assert not found.complete
    assert found.reason(".git/config")  # found without the walk: named at the top


def test_a_symlink_out_of_the_workspace_is_not_followed(hostile: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-hooks"
    outside.mkdir()
    with (hostile / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\thooksPath = {outside}\n[include]\n\tpath = /dev/zero\n")
    (hostile / "vendor" / "link.cfg").symlink_to(outside)

    found = scan(hostile)

    assert all(not root.rel.startswith("..") for root in found.roots)
    assert all(str(outside) not in root.rel for root in found.roots)


requires_landlock = pytest.mark.skipif(
    abi_version() < 1, reason="the kernel has no Landlock (Linux 5.13+ with it enabled)"
)


@requires_landlock
@pytest.mark.parametrize("target", TARGETS)
async def test_a_sandboxed_command_cannot_change_what_git_or_a_hook_runs(
    make_harness: MakeHarness, hostile: Path, sandbox: Sandbox, tmp_path: Path, target: str
) -> None:
    before = _contents(hostile, TARGETS)
    harness = make_harness(sandbox=replace(sandbox, hook_commands=(HOOK,)))

    result = await harness.run("run_command", command=f"printf 'touch PWNED\\n' >> {target}")

    # Refused at once (namespaces: a read-only mount) or put back after (Landlock alone).
    assert result.is_error, result.content
    assert "Read-only file system" in result.content or "put back" in result.content
    assert "may write only inside the workspace" not in result.content  # not the wrong hint
    assert _contents(hostile, TARGETS) == before
    assert not (hostile / "PWNED").exists()
    assert (tmp_path / "home" / "CANARY").read_text() == "do not delete"


@requires_landlock
async def test_a_sandboxed_command_cannot_add_a_hook_or_a_settings_file(
    make_harness: MakeHarness, hostile: Path, sandbox: Sandbox
) -> None:
    harness = make_harness(sandbox=sandbox)
    writes = "; ".join(f"mkdir -p $(dirname {rel}); echo x > {rel}" for rel in NEW_FILES)

    result = await harness.run("run_command", command=f"{writes}; echo done")

    assert result.is_error, result.content
    assert [rel for rel in NEW_FILES if (hostile / rel).exists()] == []


@requires_landlock
async def test_ordinary_work_in_the_hostile_repository_still_runs(
    make_harness: MakeHarness, hostile: Path, sandbox: Sandbox
) -> None:
    harness = make_harness(sandbox=replace(sandbox, hook_commands=(HOOK,)))

    result = await harness.run(
        "run_command", command="echo more >> src/app.py && echo y > scripts/other.sh && ls"
    )

    assert not result.is_error, result.content
    assert "put back" not in result.content
    assert (hostile / "src" / "app.py").read_text().endswith("more\n")


@pytest.mark.parametrize(
    "target",
    [
        "hooks/check.sh",
        ".githooks/pre-commit",
        "extra.cfg",
        "vendor/lib/.git/config",
        "scripts/lint.sh",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ],
)
async def test_file_tools_ask_under_accept_edits(
    make_harness: MakeHarness, hostile: Path, target: str
) -> None:
    approver = RecordingApprover(answer=False)
    harness = make_harness(
        approval="auto-edit",
        approver=approver,
        sandbox=Sandbox("workspace-write", hook_commands=(HOOK,)),
    )
    before = _contents(hostile, [target])

    result = await harness.run("write_file", path=target, content="touch PWNED\n")

    assert result.is_error
    [request] = approver.requests
    assert f"{target} is protected" in request.summary
    assert _contents(hostile, [target]) == before


@pytest.mark.parametrize("target", ["hooks/check.sh", ".githooks/pre-commit", "scripts/lint.sh"])
async def test_file_tools_refuse_them_without_a_person(
    make_harness: MakeHarness, hostile: Path, target: str
) -> None:
    harness = make_harness(
        approval="full-auto", sandbox=Sandbox("workspace-write", hook_commands=(HOOK,))
    )
    before = _contents(hostile, [target])

    written = await harness.run("write_file", path=target, content="touch PWNED\n")
    edited = await harness.run(
        "edit_file", path=target, old_string="exit 0", new_string="touch PWNED"
    )

    for result in (written, edited):
        assert result.is_error
        assert "protected" in result.content
        assert "non-interactively" in result.content
    assert _contents(hostile, [target]) == before


def test_the_snapshot_puts_back_what_the_scan_found(hostile: Path) -> None:
    snapshot = ProtectedSnapshot.take(hostile, [HOOK])
    (hostile / "hooks" / "check.sh").write_text("touch PWNED\n")
    (hostile / ".githooks" / "post-merge").write_text("touch PWNED\n")
    (hostile / "vendor" / "lib" / ".git" / "config").unlink()

    restored = snapshot.restore()

    assert restored == sorted(["hooks/check.sh", ".githooks/post-merge", "vendor/lib/.git/config"])
    assert (hostile / "hooks" / "check.sh").read_text() == "#!/bin/sh\nexit 0\n"
    assert not (hostile / ".githooks" / "post-merge").exists()
    assert (hostile / "vendor" / "lib" / ".git" / "config").is_file()
