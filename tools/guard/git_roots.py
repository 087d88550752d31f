"""The git directories of a workspace and what their configuration makes git run or read.

`find_git` starts from the ``.git`` entries a walk found, follows a ``.git`` file to the
directory it names, and adds each git directory's submodules (``modules/``, however deeply
nested) and linked worktrees (``worktrees/``). For each it reads the configuration git would
read there (system, global, the repository's, the worktree's, and what they include) and
collects what it names, resolved as git resolves it: a relative ``core.hooksPath`` from the
working tree, an include from the file that includes it.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from tools.guard import git_config as gc

GIT_CONFIG = ("config", "config.worktree", "commondir", "hooks", "modules", "worktrees", "info")
GIT = "git configuration and hooks run code on the person's next git command"
_MAX_GIT_DIRS = 200
_MAX_MODULE_DEPTH = 4
_COMMAND_KEYS = (
    "core.fsmonitor",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "sequence.editor",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "credential.helper",
    "credential.*.helper",
    "gpg.program",
    "gpg.*.program",
    "alias.*",
    "pager.*",
    "uploadpack.packobjectshook",
    "interactive.difffilter",
    "web.browser",
    "browser.*.cmd",
    "browser.*.path",
    "mergetool.*.cmd",
    "mergetool.*.path",
    "difftool.*.cmd",
    "difftool.*.path",
    "sendemail.sendmailcmd",
    "sendemail.*.sendmailcmd",
    "remote.*.receivepack",
    "remote.*.uploadpack",
    "man.*.cmd",
    "man.*.path",
    "submodule.*.update",
    "hook.*.command",
)
"""Keys whose value is a command git runs (its words may name a file in the workspace)."""
_PATH_KEYS = {
    "core.hookspath": "git runs the hooks in it (core.hooksPath)",
    "core.attributesfile": "it selects the filter drivers git runs (core.attributesFile)",
}


@dataclass
class GitFinds:
    """What `find_git` found: paths to protect, commands whose files to protect, git dirs."""

    roots: list[tuple[Path, str, bool]] = field(default_factory=list)
    """(path, why, whole): a git directory itself is not protected whole."""
    commands: list[tuple[str, Path, str]] = field(default_factory=list)
    """(command, the directory it runs in, why)."""
    git_dirs: list[Path] = field(default_factory=list)


def find_git(workspace: Path, dot_gits: list[str], home: Path | None) -> GitFinds:
    """Everything git reads or runs for the repositories at ``dot_gits`` (``.git`` entries,
    workspace-relative or absolute)."""
    finds = GitFinds()
    todo: list[tuple[Path, Path]] = []  # (git directory, the working tree git runs in)
    for rel in dot_gits:
        path = workspace / rel
        if os.path.islink(path):
            finds.roots.append((path, GIT, True))  # the link itself, and its target if inside
            real = os.path.realpath(path)
            if real.startswith(os.path.realpath(workspace) + os.sep) and os.path.isdir(real):
                todo.append((Path(real), path.parent))
        elif os.path.isdir(path):
            finds.roots.append((path, GIT, False))
            todo.append((path, path.parent))
        elif os.path.isfile(path):
            finds.roots.append((path, GIT, True))
            target = _pointer(path)
            if target is not None:
                todo.append((target, path.parent))
    shared = _global_entries(home)
    seen: set[str] = set()
    while todo and len(seen) < _MAX_GIT_DIRS:
        gitdir, tree = todo.pop(0)
        real = os.path.realpath(gitdir)
        if real in seen or not os.path.isdir(gitdir):
            continue
        seen.add(real)
        finds.git_dirs.append(gitdir)
        finds.roots.append((gitdir, GIT, False))  # whether it is there: see ProtectedSnapshot
        finds.roots += [(gitdir / name, GIT, True) for name in GIT_CONFIG]
        entries = [*shared, *_local_entries(gitdir, home, finds)]
        _named(entries, tree, home, finds)
        todo += _modules(gitdir, finds) + _worktrees(gitdir, finds)
    return finds


def _pointer(dot_git: Path) -> Path | None:
    """The directory a ``.git`` file names (``gitdir: path``), relative to the file."""
    text = gc.read_text(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text.splitlines()[0].removeprefix("gitdir:").strip())
    return target if target.is_absolute() else dot_git.parent / target


def _global_entries(home: Path | None) -> list[gc.Entry]:
    """The system's and the person's git configuration."""
    env = os.environ
    files = [Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")]
    if env.get("GIT_CONFIG_GLOBAL"):
        files.append(Path(env["GIT_CONFIG_GLOBAL"]))
    elif home is not None:
        xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        files += [xdg / "git" / "config", home / ".gitconfig"]
    return [entry for path in files for entry in gc.read_config(path, home)]


def _local_entries(gitdir: Path, home: Path | None, finds: GitFinds) -> list[gc.Entry]:
    """The repository's configuration (from its common directory too) and the worktree's."""
    files = [gitdir / "config", gitdir / "config.worktree"]
    common = gc.read_text(gitdir / "commondir")
    if common and common.strip():
        shared = Path(common.strip())
        shared = shared if shared.is_absolute() else gitdir / shared
        files.insert(0, shared / "config")
        finds.roots += [(shared / name, GIT, True) for name in ("config", "hooks", "info")]
    return [entry for path in files for entry in gc.read_config(path, home)]


def _named(entries: list[gc.Entry], tree: Path, home: Path | None, finds: GitFinds) -> None:
    for entry in entries:
        key, value = entry.key, entry.value
        if not value:
            continue
        if gc.is_include(key):
            target = gc.include_target(value, entry.file, home)
            if target is not None:
                finds.roots.append((target, "git reads it as configuration (include)", True))
        elif key in _PATH_KEYS:
            path = _from_tree(value, tree, home)
            if path is not None:
                # husky 9 points git at .husky/_, whose hooks run the scripts in .husky/.
                husky = key == "core.hookspath" and path.name == "_"
                finds.roots.append((path.parent if husky else path, _PATH_KEYS[key], True))
        elif any(fnmatch.fnmatchcase(key, pattern) for pattern in _COMMAND_KEYS):
            if key.startswith(("submodule.", "alias.")) and not value.startswith("!"):
                continue  # a git subcommand, not a shell command
            finds.commands.append((value, tree, f"git runs it ({key})"))


def _from_tree(value: str, tree: Path, home: Path | None) -> Path | None:
    if value.startswith("~/"):
        return None if home is None else home / value[2:]
    path = Path(value)
    return path if path.is_absolute() else tree / path


def _modules(gitdir: Path, finds: GitFinds) -> list[tuple[Path, Path]]:
    """Submodules' git directories (``modules/<name>``, names may hold ``/``), each with its
    working tree (``core.worktree``)."""
    found: list[tuple[Path, Path]] = []
    frontier = [(gitdir / "modules", 0)]
    while frontier:
        directory, depth = frontier.pop()
        try:
            children = sorted(p for p in directory.iterdir() if not p.is_symlink() and p.is_dir())
        except OSError:
            continue
        for child in children:
            if (child / "HEAD").is_file():
                tree = child
                for entry in gc.read_config(child / "config", None):
                    if entry.key == "core.worktree" and entry.value:
                        tree = Path(os.path.normpath(child / entry.value))
                if tree != child:
                    finds.roots.append((tree / ".git", GIT, True))
                found.append((child, tree))
            elif depth < _MAX_MODULE_DEPTH:
                frontier.append((child, depth + 1))
    return found


def _worktrees(gitdir: Path, finds: GitFinds) -> list[tuple[Path, Path]]:
    """Linked worktrees' git directories, each with the working tree its ``gitdir`` names."""
    found: list[tuple[Path, Path]] = []
    try:
        children = sorted((gitdir / "worktrees").iterdir())
    except OSError:
        return found
    for child in children:
        pointer = gc.read_text(child / "gitdir")
        if child.is_symlink() or pointer is None or not pointer.strip():
            continue
        dot_git = Path(pointer.strip())
        dot_git = dot_git if dot_git.is_absolute() else child / dot_git
        finds.roots.append((dot_git, GIT, True))
        found.append((child, dot_git.parent))
    return found
