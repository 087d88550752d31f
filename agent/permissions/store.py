"""Allow rules the person added from the approval prompt, kept per workspace.

They live under ``AGENT_HOME`` (0700 directory, 0600 file), not in the repository: a rule
in a file the repository ships would let a cloned project allow its own commands.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from agent.permissions.rules import parse_rule
from tools.shell_reading import analyse

_DIRECTORY = "permissions"
_WITH_SUBCOMMANDS = frozenset(
    [
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "go",
        "docker",
        "podman",
        "kubectl",
        "uv",
        "pip",
        "poetry",
        "gh",
        "make",
        "just",
        "dotnet",
        "mvn",
        "gradle",
        "terraform",
        "helm",
        "rake",
        "bundle",
        "composer",
        "deno",
    ]
)
"""Programs whose second word is a subcommand: "always allow" offers ``git push``, not ``git``
(which would allow every git command), and ``touch``, not ``touch notes.txt``."""


def command_prefix(command: str) -> str | None:
    """The prefix "always allow" offers for ``command``: its program and, for a program with
    subcommands (``git push``, ``npm test``), the subcommand. None unless the command is one
    simple command, read before it runs, with nothing around it (no assignment, wrapper,
    nested shell or substitution), which no single prefix would describe."""
    reading = analyse(command)
    if not reading.knowable or len(reading.commands) != 1:
        return None
    (only,) = reading.commands
    plain = not (only.assignments or only.wrappers or only.via or only.substituted)
    if not (plain and only.name and only.literal[:1] == (True,)):
        return None
    words = only.argv
    second = words[1] if len(words) > 1 and only.literal[1] else ""
    if words[0] in _WITH_SUBCOMMANDS and second[:1].isalpha():
        return f"{words[0]} {second}"
    return words[0]


class ProjectRules:
    """The remembered allow rules of one workspace.

    Args:
        home: ``AGENT_HOME``.
        workspace: The project the rules are for.
    """

    def __init__(self, home: Path, workspace: Path) -> None:
        digest = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:24]
        self.path = home / _DIRECTORY / f"{digest}.json"
        self._workspace = str(workspace.resolve())

    def load(self) -> list[str]:
        """The rules; none when the file is missing or unreadable."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        rules = data.get("allow") if isinstance(data, dict) else None
        valid: list[str] = []
        for text in rules if isinstance(rules, list) else []:
            with contextlib.suppress(ValueError):
                parse_rule(str(text))
                valid.append(str(text))
        return valid

    def add(self, rule: str) -> None:
        """Remember ``rule``. Raises `OSError` when it cannot be saved."""
        parse_rule(rule)
        rules = self.load()
        if rule not in rules:
            self._save([*rules, rule])

    def remove(self, rule: str) -> bool:
        """Forget ``rule``; whether it was kept. Raises `OSError` when it cannot be saved."""
        rules = self.load()
        if rule not in rules:
            return False
        self._save([kept for kept in rules if kept != rule])
        return True

    def _save(self, rules: list[str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps({"workspace": self._workspace, "allow": rules}, indent=2)
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        with os.fdopen(os.open(temporary, flags, 0o600), "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        os.replace(temporary, self.path)
