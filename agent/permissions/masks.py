"""Path deny rules as the command sandbox enforces them: patterns over workspace paths.

Where the sandbox has a mount namespace, each path a ``Read(...)`` deny rule covers is masked
in a command's namespace, and each path an ``Edit(...)``/``Write(...)`` deny rule covers is
read-only there (`tools.guard.sandbox.DeniedPatterns`), so no program reads or writes it
whatever it is written in. The patterns mean what `agent.permissions.rules` matches, with
one addition: a pattern for a directory's contents (``secrets/``, ``secrets/**``) covers the
directory itself, so it is masked whole. A rule without a path (``Read``) or for a path
outside the workspace masks nothing: the rule still holds for the tools.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agent.permissions.rules import RuleSet
from tools.guard.sandbox import DeniedPatterns
from tools.ignore import glob_to_regex

_KINDS = {"read_file": "read", "edit_file": "edit", "write_file": "edit"}
_ANY_NAME = "no-rule-names-this-0f3a"
"""A name no pattern written for real files matches; one that matches it matches anything."""


def denied_patterns(rules: RuleSet, workspace: Path, home: Path) -> DeniedPatterns:
    """The deny rules' paths in ``workspace``, as `DeniedPatterns`."""
    found: dict[str, list[str]] = {"read": [], "edit": []}
    for rule in rules.deny:
        kind = _KINDS.get(rule.tool)
        if kind is None or not rule.spec or rule.spec == "*":
            continue
        pattern = path_pattern(rule.spec, workspace, home)
        if pattern is not None and pattern not in found[kind]:
            found[kind].append(pattern)
    return DeniedPatterns(tuple(found["read"]), tuple(found["edit"]))


def command_coverage(rules: RuleSet, namespaces: bool, missing: str) -> str | None:
    """What ``/permissions`` says about commands and the path deny rules (None: there are
    none). ``namespaces``: whether commands run in their own namespaces; ``missing``: why
    not."""
    if not any(_KINDS.get(rule.tool) and rule.spec not in (None, "", "*") for rule in rules.deny):
        return None
    if namespaces:
        return (
            "Read and Edit deny rules also hold inside commands: the files are hidden (Read) "
            "or read-only (Edit) in each command's namespace."
        )
    why = f" ({missing})" if missing else ""
    return (
        f"Commands are covered by name only{why}: a command that names a denied file is "
        "checked, but a program that opens it by itself is not stopped."
    )


def path_pattern(spec: str, workspace: Path, home: Path) -> str | None:
    """A regular expression over workspace-relative paths for a Read/Edit rule's ``spec``,
    or None when it names nothing inside ``workspace``."""
    if spec.startswith(("//", "~/")):
        absolute = spec[1:] if spec.startswith("//") else f"{home}/{spec[2:]}"
        top = os.path.realpath(workspace) + "/"
        for prefix in {top, str(workspace).rstrip("/") + "/"}:
            if absolute.startswith(prefix):
                return _regex(absolute[len(prefix) :])
        return None
    anchored = spec.startswith(("/", "./")) or "/" in spec.rstrip("/")
    pattern = spec.removeprefix("./").lstrip("/")
    return _regex(pattern if anchored else "**/" + pattern)


def _regex(pattern: str) -> str | None:
    if pattern.endswith("/"):
        pattern += "**"
    regex = f"{glob_to_regex(pattern)}(?:/.*)?"
    if pattern.endswith("/**") and pattern[:-3].strip("/*"):
        regex = f"{glob_to_regex(pattern[:-3])}(?:/.*)?|{regex}"
    if re.fullmatch(regex, _ANY_NAME):
        return None  # it covers every name: masking it all would leave nothing to work on
    return regex
