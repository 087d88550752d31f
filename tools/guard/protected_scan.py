"""What in a workspace git or the agent will run or read as configuration, found from the files.

`scan` looks, within a bounded amount of work, for:

- every git directory: ``.git`` at any depth (nested repositories; a ``.git`` file of a
  submodule or a linked worktree, and the directory it points to), each one's submodules
  (``modules/``) and linked worktrees (``worktrees/``). Their configuration and hooks are
  protected (`GIT_CONFIG`), their objects and refs are not;
- what that configuration (and the person's own ``~/.gitconfig``) names, as git resolves
  it: the ``core.hooksPath`` folder, files pulled in by ``include.path`` and
  ``includeIf.*.path``, ``core.attributesFile``, and every workspace file a command in it
  names (filter drivers, ``core.fsmonitor``, ``diff.*.textconv``, aliases, ...);
- every ``.gitattributes`` (it selects the filter drivers git runs);
- the agent's configuration (``agent.yaml``, ``.agent/``, ``.mcp.json``), Claude Code's
  (``.claude/settings*.json``, ``hooks/``, ``agents/``, ``commands/``, ``skills/``) and every
  workspace file a hook command, a Claude Code helper command or an ``.mcp.json`` server
  names (``bash hooks/check.sh``, ``$CLAUDE_PROJECT_DIR/.claude/hooks/x.py``).

The walk is breadth-first, never follows a symlink or goes into another mount, and
looks at most at `WALK_BUDGET` entries, leaving ``node_modules``, virtual environments and
build output for last; `ProtectedPaths.complete` says whether it saw everything. A path whose
real location is outside the workspace is never protected (outside, nothing is writable).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import structlog

from tools.guard import git_config as gc
from tools.guard.git_roots import GIT, GIT_CONFIG, GitFinds, find_git
from tools.guard.mounts import read_mounts

__all__ = [
    "GIT",
    "GIT_CONFIG",
    "WALK_BUDGET",
    "ProtectedPaths",
    "Root",
    "scan",
    "scan_cached",
    "walk",
]

WALK_BUDGET = 20_000
"""Directory entries looked at per scan (about 40 ms on a shared 2-core machine), once per
command and at most every few seconds for the file tools."""
_DEFERRED = frozenset(
    {"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", "target", "dist", "build"}
    | {".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", "vendor", ".gradle"}
)
"""Directories looked into last: large, and rarely holding a repository of their own."""
AGENT = "it is the agent's own configuration"
CLAUDE = "it is Claude Code's configuration, which runs hooks and sets permissions"
ATTRIBUTES = "it selects the filter and diff drivers git runs"
AGENT_ROOTS = ("agent.yaml", ".agent", ".mcp.json")
CLAUDE_ROOTS = tuple(
    f".claude/{name}"
    for name in ("settings.json", "settings.local.json", "hooks", "agents", "commands", "skills")
)
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_CLAUDE_HELPERS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper")


@dataclass(frozen=True)
class Root:
    """A protected path, workspace-relative (``/``-separated), and why it is protected."""

    rel: str
    reason: str
    whole: bool = True
    """False for a git directory itself: only whether it is there, and as what, is kept
    (commits write its objects and refs)."""


@dataclass(frozen=True)
class ProtectedPaths:
    """What `scan` found."""

    roots: tuple[Root, ...]
    git_dirs: tuple[str, ...]
    """The git directories inside the workspace (relative), the top one included."""
    complete: bool = True

    def outermost(self) -> list[Root]:
        """The roots not inside another root protected whole (that one covers them)."""
        whole = {root.rel for root in self.roots if root.whole}
        return [
            root
            for root in self.roots
            if not any(
                "/".join(root.rel.split("/")[:end]) in whole
                for end in range(1, root.rel.count("/") + 1)
            )
        ]

    def reason(self, rel: str) -> str | None:
        """Why ``rel`` (workspace-relative) is protected by what was found, or None."""
        folded = rel.casefold()
        for root in self.roots:
            top = root.rel.casefold()
            if folded == top or (root.whole and folded.startswith(top + "/")):
                return root.reason
        return None


def walk(top: Path, visit: Callable[[str, os.DirEntry[str]], bool], budget: int) -> bool:
    """Call ``visit(rel, entry)`` for the entries below ``top``, breadth-first, and go into
    a directory (never a link, never another mount) where it returns True. Returns whether
    every entry was seen."""
    base = os.path.realpath(top)
    mounts = {point for point, _ in read_mounts() or () if point.startswith(base + os.sep)}
    queues: tuple[deque[str], deque[str]] = (deque([""]), deque())
    seen = 0
    while queues[0] or queues[1]:
        rel = (queues[0] or queues[1]).popleft()
        try:
            with os.scandir(os.path.join(base, rel) if rel else base) as found:
                for entry in found:  # read lazily: a directory may hold a million files
                    seen += 1
                    if seen > budget:
                        return False
                    child = f"{rel}/{entry.name}" if rel else entry.name
                    if visit(child, entry) and _descend(entry, mounts):
                        queues[entry.name in _DEFERRED].append(child)
        except OSError:
            continue
    return True


def _descend(entry: os.DirEntry[str], mounts: set[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False) and entry.path not in mounts
    except OSError:
        return False


class _Finder:
    """Collects roots for one scan (the workspace's real path is ``real``)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.real = os.path.realpath(workspace)
        self.roots: dict[str, Root] = {}
        home = os.environ.get("HOME")
        self.home = Path(home) if home else None

    def inside(self, path: Path | str) -> str | None:
        """``path``'s real location relative to the workspace, or None when outside it."""
        real = os.path.realpath(path)
        if real == self.real:
            return None
        rel = os.path.relpath(real, self.real)
        return None if _outside(rel) else rel.replace(os.sep, "/")

    def add(self, path: Path | str, reason: str, *, whole: bool = True) -> None:
        """Protect ``path`` (and a link naming it, when the link is in the workspace)."""
        rel = self.inside(path)
        if rel is not None and rel not in self.roots:
            self.roots[rel] = Root(rel, reason, whole)
        lexical = os.path.relpath(os.path.normpath(path), self.real)
        if (
            not _outside(lexical)
            and os.path.islink(path)
            and os.path.realpath(os.path.dirname(path)) == os.path.dirname(os.path.normpath(path))
        ):
            self.roots.setdefault(lexical, Root(lexical, reason, whole))

    def named_files(self, command: str, base: Path, reason: str, depth: int = 0) -> None:
        """Protect each workspace file a word of ``command`` names (``bash hooks/x.sh``)."""
        for word in gc.command_words(command):
            if " " in word.strip() and depth < 2:  # bash -c 'inner command'
                self.named_files(word, base, reason, depth + 1)
                continue
            for piece in {word, word.partition("=")[2]} - {""}:
                expanded = self._expand(piece)
                if expanded is None:
                    continue
                path = Path(expanded) if os.path.isabs(expanded) else base / expanded
                if os.path.isfile(path):
                    self.add(path, reason)

    def _expand(self, word: str) -> str | None:
        word = word.removeprefix("!")
        values = {"CLAUDE_PROJECT_DIR": str(self.workspace), "PWD": str(self.workspace)}
        if self.home is not None:
            values["HOME"] = str(self.home)
        word = _VARIABLE.sub(lambda found: values.get(found[1] or found[2], found[0]), word)
        if word.startswith("~/"):
            return None if self.home is None else str(self.home / word[2:])
        return None if "$" in word or not word or word.startswith("-") else word


def scan(
    workspace: Path, commands: Iterable[str] = (), *, budget: int = WALK_BUDGET
) -> ProtectedPaths:
    """The protected paths of ``workspace``; ``commands`` are the agent's hook commands."""
    finder = _Finder(workspace)
    for rel in AGENT_ROOTS:
        finder.add(workspace / rel, AGENT)
    for rel in CLAUDE_ROOTS:
        finder.add(workspace / rel, CLAUDE)
    dot_gits: list[str] = []

    def visit(rel: str, entry: os.DirEntry[str]) -> bool:
        name = entry.name.casefold()
        if name == ".git":
            dot_gits.append(rel)
            return False
        if name == ".gitattributes":
            finder.add(workspace / rel, ATTRIBUTES)
        return True

    complete = walk(workspace, visit, budget)
    if ".git" not in dot_gits:  # the workspace is a folder of a repository: git reads its config
        dot_gits += _enclosing(finder.real)
    found: GitFinds = find_git(workspace, dot_gits, finder.home)
    for path, reason, whole in found.roots:
        finder.add(path, reason, whole=whole)
    for command, base, reason in found.commands:
        finder.named_files(command, base, reason)
    for command in [*commands, *_claude_commands(workspace, finder.home)]:
        finder.named_files(command, workspace, "a configured hook runs it")
    for command in _mcp_commands(workspace):
        finder.named_files(command, workspace, "the agent starts it as an MCP server (.mcp.json)")
    git_dirs = tuple(rel for rel in map(finder.inside, found.git_dirs) if rel is not None)
    return ProtectedPaths(tuple(finder.roots.values()), git_dirs, complete)


def _outside(rel: str) -> bool:
    return rel == ".." or rel.startswith(".." + os.sep)


def _enclosing(real: str) -> list[str]:
    """The ``.git`` of the repository the workspace is a folder of (absolute), if any."""
    for parent in Path(real).parents:
        if os.path.lexists(parent / ".git"):
            return [str(parent / ".git")]
    return []


def _json(path: Path) -> object:
    text = gc.read_text(path)
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None


def _claude_commands(workspace: Path, home: Path | None) -> list[str]:
    """The commands Claude Code's settings run: hooks, the status line and helpers."""
    files = [workspace / ".claude" / "settings.json", workspace / ".claude" / "settings.local.json"]
    if home is not None:
        files.append(home / ".claude" / "settings.json")
    found: list[str] = []
    for path in files:
        data = _json(path)
        if not isinstance(data, dict):
            continue
        hooks = data.get("hooks")
        for matchers in hooks.values() if isinstance(hooks, dict) else ():
            for matcher in matchers if isinstance(matchers, list) else ():
                inner = matcher.get("hooks") if isinstance(matcher, dict) else None
                for hook in inner if isinstance(inner, list) else ():
                    if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                        found.append(hook["command"])
        status = data.get("statusLine")
        if isinstance(status, dict) and isinstance(status.get("command"), str):
            found.append(status["command"])
        found += [data[key] for key in _CLAUDE_HELPERS if isinstance(data.get(key), str)]
    return found


def _mcp_commands(workspace: Path) -> list[str]:
    """Each ``.mcp.json`` server's program and arguments, as one command line."""
    data = _json(workspace / ".mcp.json")
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    found: list[str] = []
    for server in servers.values() if isinstance(servers, dict) else ():
        if isinstance(server, dict) and isinstance(server.get("command"), str):
            args = server.get("args")
            words = [server["command"], *(a for a in args or () if isinstance(a, str))]
            found.append(" ".join(gc.quote(word) for word in words))
    return found


log = structlog.get_logger("tools.guard")
_cache_lock = threading.Lock()
_cache: dict[tuple[str, tuple[str, ...]], tuple[float, ProtectedPaths]] = {}


def scan_cached(workspace: Path, commands: Iterable[str] = (), *, max_age: float) -> ProtectedPaths:
    """`scan`, or its result from less than ``max_age`` seconds ago: a command's launch reuses
    what the snapshot taken just before it found."""
    key = (os.path.realpath(workspace), tuple(commands))
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and 0 <= now - hit[0] < max_age:
        return hit[1]
    found = scan(workspace, key[1])
    if not found.complete:
        log.info("protected_scan_budget_reached", workspace=key[0], budget=WALK_BUDGET)
    with _cache_lock:
        if len(_cache) > 16:
            _cache.clear()
        _cache[key] = (time.monotonic(), found)
    return found
