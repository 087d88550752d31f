"""Helpers for hook tests: real hook commands, written as small Python scripts."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent.hooks import HookMatcher, Hooks
from providers import Event


class HookScripts:
    """Writes hook scripts into a directory and builds the ``hooks:`` settings for them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(exist_ok=True)
        self._count = 0

    def command(self, body: str) -> str:
        """A command running ``body`` (Python; ``data`` is the parsed stdin JSON)."""
        self._count += 1
        path = self.root / f"hook{self._count}.py"
        prelude = "import json, os, sys, time\nraw = sys.stdin.read()\ndata = json.loads(raw)\n"
        path.write_text(prelude + textwrap.dedent(body))
        return f"{sys.executable} {path}"

    def recorder(self, name: str) -> tuple[str, Path]:
        """A command that saves its stdin as ``name``.json (one JSON per line) and the path."""
        out = self.root / f"{name}.jsonl"
        command = self.command(f"open({str(out)!r}, 'a').write(raw.strip() + '\\n')\n")
        return command, out


def settings(
    event: str, command: str, matcher: str = "", timeout: float = 60.0
) -> dict[str, list[HookMatcher]]:
    """The ``hooks:`` setting running ``command`` for ``event``."""
    entry = {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": command, "timeout": timeout}],
    }
    return {event: [HookMatcher.model_validate(entry)]}


def records(path: Path) -> list[dict[str, Any]]:
    """The stdin JSONs a recorder saved."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


@pytest.fixture
def scripts(tmp_path: Path, decoy_home: Path) -> HookScripts:
    """Hook scripts under a decoy HOME (the hooks run as the person, unconfined)."""
    return HookScripts(tmp_path / "hooks")


def make_hooks(
    config: dict[str, list[HookMatcher]], workspace: Path, events: list[Event], **kwargs: Any
) -> Hooks:
    """`Hooks` for ``config`` in ``workspace``, its notices into ``events``."""
    return Hooks(
        config,
        workspace=workspace,
        session_id="sess-1",
        transcript_path=workspace / "session.jsonl",
        events=events.append,
        **kwargs,
    )
