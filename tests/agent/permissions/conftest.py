"""Fixtures for the permission tests: a workspace and a home, each with its .claude folder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """(workspace, home), each with an empty ``.claude`` directory for Claude Code's files."""
    workspace, home = tmp_path / "repo", tmp_path / "home"
    (workspace / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    return workspace, home
