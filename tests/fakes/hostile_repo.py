"""A hostile repository: files git or the agent runs, named the many ways git and hooks allow.

Build it only in a test's decoy workspace (`make_hostile_repository`); every script in it
only exits, so running one by mistake harms nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

HOOK = "./scripts/lint.sh"
"""The agent's own ``hooks:`` command (as configured in agent.yaml or the person's config)."""
TARGETS = [
    "vendor/lib/.git/config",
    "vendor/lib/.git/hooks/pre-commit",
    ".githooks/pre-commit",
    "extra.cfg",
    "scripts/clean.sh",
    ".gitattributes",
    "hooks/check.sh",
    ".claude/settings.json",
    ".claude/hooks/x.py",
    "scripts/lint.sh",
    "mod/.git",
    ".git/modules/mod/config",
    "tools/textconv.py",
]
"""Every file of `make_hostile_repository` that git or the agent runs or reads as configuration."""
NEW_FILES = [
    ".githooks/post-checkout",
    "vendor/lib/.git/hooks/post-checkout",
    ".claude/settings.local.json",
    ".claude/commands/x.md",
]
"""Files that do not exist yet, and that git or the agent would run or read if they did."""


def _git(*args: str | Path) -> None:
    subprocess.run(["git", *map(str, args)], check=True, capture_output=True)


def make_hostile_repository(workspace: Path) -> None:
    """A repository as it might be cloned: husky-style hooks, an included config that
    defines a filter driver, a nested repository, a submodule, and Claude Code hooks."""
    _git("init", "-q", workspace)
    files = {
        ".githooks/pre-commit": "#!/bin/sh\nexit 0\n",
        "extra.cfg": '[filter "x"]\n\tclean = ./scripts/clean.sh\n',
        "scripts/clean.sh": "#!/bin/sh\ncat\n",
        "scripts/lint.sh": "#!/bin/sh\nexit 0\n",
        "scripts/other.sh": "#!/bin/sh\nexit 0\n",
        "tools/textconv.py": "print()\n",
        ".gitattributes": "*.bin filter=x\n",
        "hooks/check.sh": "#!/bin/sh\nexit 0\n",
        ".claude/hooks/x.py": "print()\n",
        "mod/.git": "gitdir: ../.git/modules/mod\n",
        ".git/modules/mod/HEAD": "ref: refs/heads/main\n",
        ".git/modules/mod/config": "[core]\n\tworktree = ../../../mod\n",
        "src/app.py": "print('app')\n",
    }
    for rel, text in files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
        if rel.endswith(".sh"):
            (workspace / rel).chmod(0o755)
    with (workspace / ".git" / "config").open("a") as config:
        config.write("[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../extra.cfg\n")
        config.write('[diff "py"]\n\ttextconv = "python3 tools/textconv.py"\n')
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": "bash hooks/check.sh"},
                        {"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/x.py"},
                    ],
                }
            ]
        }
    }
    (workspace / ".claude" / "settings.json").write_text(json.dumps(settings))
    nested = workspace / "vendor" / "lib"
    nested.mkdir(parents=True)
    _git("init", "-q", nested)
    (nested / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
