"""Protected paths: git config and hooks and the agent's config, in commands and file tools.

Commands run for real in the decoy workspace; symlinks point only into the test's temp dir.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.tools.conftest import MakeHarness, RecordingApprover
from tools.guard.landlock import abi_version
from tools.guard.protected import ProtectedSnapshot, protected_reason
from tools.guard.sandbox import Sandbox

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


@pytest.fixture
def repo(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "agent.yaml").write_text("approval: ask\n")
    return workspace


def test_protected_reason_names_git_and_agent_config(tmp_path: Path) -> None:
    for rel in (
        ".git/config",
        ".git/hooks/pre-commit",
        ".git",
        "agent.yaml",
        ".agent/x",
        ".GIT/CONFIG",
    ):
        assert protected_reason(tmp_path, tmp_path / rel), rel
    for rel in (".git/objects/ab", "src/agent.yaml", ".gitignore", "README.md"):
        assert protected_reason(tmp_path, tmp_path / rel) is None, rel


async def test_a_command_cannot_change_git_config_or_add_a_hook(
    make_harness: MakeHarness, repo: Path
) -> None:
    before = (repo / ".git" / "config").read_text()
    harness = make_harness(sandbox=Sandbox("off"))
    result = await harness.run(
        "run_command",
        command="git config core.fsmonitor 'touch pwned' && "
        "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit && "
        "chmod +x .git/hooks/pre-commit && echo 'approval: full-auto' > agent.yaml && "
        "mkdir -p .agent && echo x > .agent/rules",
    )
    assert result.is_error
    assert "put back" in result.content
    for name in (".git/config", ".git/hooks/pre-commit", "agent.yaml", ".agent"):
        assert name in result.content
    assert (repo / ".git" / "config").read_text() == before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert (repo / "agent.yaml").read_text() == "approval: ask\n"
    assert not (repo / ".agent").exists()
    [event] = harness.of_type("protected_paths_restored")
    assert ".git/config" in event.paths  # type: ignore[attr-defined]


async def test_hooks_replaced_by_a_symlink_are_put_back_without_writing_through_it(
    make_harness: MakeHarness, repo: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".git" / "hooks" / "mine").write_text("keep")
    harness = make_harness(sandbox=Sandbox("off"))
    result = await harness.run(
        "run_command", command=f"rm -rf .git/hooks && ln -s {elsewhere} .git/hooks"
    )
    assert "put back" in result.content
    hooks = repo / ".git" / "hooks"
    assert hooks.is_dir()
    assert not hooks.is_symlink()
    assert (hooks / "mine").read_text() == "keep"
    assert list(elsewhere.iterdir()) == []


async def test_ordinary_git_work_is_not_disturbed(make_harness: MakeHarness, repo: Path) -> None:
    harness = make_harness()
    (repo / "f.txt").write_text("one\n")
    command = " && ".join(
        [
            "git status --short",
            " ".join(GIT) + " add f.txt agent.yaml",
            " ".join(GIT) + " commit -qm first",
            "git log --oneline | wc -l",
            "git diff HEAD",
        ]
    )
    result = await harness.run("run_command", command=command)
    assert not result.is_error, result.content
    assert "put back" not in result.content
    assert not harness.of_type("protected_paths_restored")


async def test_a_new_or_removed_repository_is_the_commands_business(
    make_harness: MakeHarness, workspace: Path
) -> None:
    # Under the namespace layer an existing repository's config is a mount: rm fails there.
    harness = make_harness(sandbox=Sandbox("workspace-write", abi=abi_version()))
    created = await harness.run("run_command", command="git init -q . && ls .git/hooks | wc -l")
    assert not created.is_error, created.content
    assert (workspace / ".git" / "config").exists()
    removed = await harness.run("run_command", command="rm -rf .git")
    assert not removed.is_error, removed.content
    assert not (workspace / ".git").exists()


def test_snapshot_restores_a_deleted_agent_config(workspace: Path) -> None:
    (workspace / "agent.yaml").write_text("approval: ask\n")
    snapshot = ProtectedSnapshot.take(workspace)
    (workspace / "agent.yaml").unlink()
    assert snapshot.restore() == ["agent.yaml"]
    assert (workspace / "agent.yaml").read_text() == "approval: ask\n"


async def test_file_tools_cannot_write_protected_paths_unattended(
    make_harness: MakeHarness, repo: Path
) -> None:
    harness = make_harness(approval="full-auto")
    for path in ("agent.yaml", ".git/config", ".git/hooks/post-checkout", ".agent/x"):
        result = await harness.run("write_file", path=path, content="approval: full-auto\n")
        assert result.is_error, path
        assert "protected" in result.content
        assert "non-interactively" in result.content
    assert (repo / "agent.yaml").read_text() == "approval: ask\n"
    assert not (repo / ".git" / "hooks" / "post-checkout").exists()


async def test_a_link_to_a_protected_file_is_protected_too(
    make_harness: MakeHarness, repo: Path
) -> None:
    (repo / "innocent").symlink_to(repo / ".git" / "config")
    harness = make_harness(approval="full-auto")
    result = await harness.run(
        "edit_file", path="innocent", old_string="[core]", new_string="[core]\n\tfsmonitor = x"
    )
    assert result.is_error
    assert ".git/config is protected" in result.content


async def test_the_person_is_asked_in_every_mode(make_harness: MakeHarness, repo: Path) -> None:
    approver = RecordingApprover(answer=True)
    harness = make_harness(approval="full-auto", approver=approver)
    result = await harness.run("write_file", path="agent.yaml", content="model: openai:gpt-4.1\n")
    assert not result.is_error, result.content
    [request] = approver.requests
    assert "agent.yaml is protected" in request.summary
    declined = make_harness(approval="auto-edit", approver=RecordingApprover(answer=False))
    result = await declined.run("write_file", path=".git/hooks/pre-push", content="x")
    assert result.is_error
    assert not (repo / ".git" / "hooks" / "pre-push").exists()


async def test_allow_protected_writes_opts_out(make_harness: MakeHarness, repo: Path) -> None:
    harness = make_harness(
        approval="full-auto", sandbox=Sandbox("workspace-write", allow_protected_writes=True)
    )
    result = await harness.run("write_file", path="agent.yaml", content="approval: ask\nx: 1\n")
    assert not result.is_error, result.content
