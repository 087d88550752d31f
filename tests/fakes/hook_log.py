"""Hooks that keep what they were given: each run writes its payload into a file of its own in
a folder (hooks running at once do not interleave), for an end-to-end test to read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.cli import write_person_config


def recording_hook(seen: Path) -> dict[str, Any]:
    """A hook entry (Claude Code's shape) that writes each payload into a new file in ``seen``,
    which it creates."""
    seen.mkdir()
    return {"hooks": [{"type": "command", "command": f'cat > "$(mktemp -p {seen})"'}]}


def person_hooks(home: Path, hooks: dict[str, list[dict[str, Any]]]) -> None:
    """Make ``hooks`` the person's own (a project's hooks wait for trust)."""
    write_person_config(home, json.dumps({"hooks": hooks}))


def record_recovery_hooks(home: Path, seen: Path) -> None:
    """The person's Recovery and Notification hooks write each payload into ``seen``."""
    hook = recording_hook(seen)
    person_hooks(home, {"Recovery": [hook], "Notification": [hook]})


def hook_payloads(seen: Path) -> list[dict[str, Any]]:
    """Every payload the hooks recording into ``seen`` were given."""
    return [json.loads(path.read_text()) for path in seen.iterdir()]
