"""Confinement of paths to the workspace: no ``..``, absolute paths or symlinks that escape."""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path


class PathOutsideWorkspace(ValueError):
    """A path resolves (possibly through a symlink) to somewhere outside the workspace."""


def resolved_root(workspace: Path) -> Path:
    """``workspace`` with its symbolic links resolved, once per workspace.

    Every path a tool call names is checked against it, several times per call; resolving
    walks each component of the path with a system call. What the root resolved to when the
    session began is the workspace for the whole session. (A relative path depends on the
    current directory, so it is resolved each time.)
    """
    return _resolved(workspace) if workspace.is_absolute() else workspace.resolve()


@functools.lru_cache(maxsize=16)
def _resolved(workspace: Path) -> Path:
    return workspace.resolve()


def resolve_in_workspace(workspace: Path, raw: str) -> Path:
    """Resolve ``raw`` against ``workspace`` and make sure it stays inside.

    Relative paths are taken from the workspace root; absolute paths are accepted only if they
    point inside it. Symlinks are followed (also for paths that do not exist yet: their
    existing parent is resolved), so a link to ``/etc`` cannot be used to escape.

    Raises:
        PathOutsideWorkspace: with a message that names the path and the workspace.
    """
    root = resolved_root(workspace)
    if "\x00" in raw:
        raise PathOutsideWorkspace(f"path {raw!r} contains a NUL byte")
    expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
    # On strings: `Path.resolve` and `Path.parents` cost a tool call ~100 µs, checked twice.
    # realpath makes the path absolute, normal (no "..", no "//") and free of links.
    top = str(root)
    resolved = _below(top, expanded) or os.path.realpath(os.path.join(top, expanded))
    if resolved != top and not resolved.startswith(top.rstrip(os.sep) + os.sep):
        raise PathOutsideWorkspace(
            f"path {raw!r} is outside the workspace {root}; "
            "only files inside the workspace can be used (give a path relative to it)"
        )
    return Path(resolved)


def file_in_workspace(workspace: Path, raw: str) -> Path | None:
    """`resolve_in_workspace`, with None for a path outside: the file a tool call touched,
    as the session records it."""
    try:
        return resolve_in_workspace(workspace, raw)
    except PathOutsideWorkspace:
        return None


def _below(top: str, raw: str) -> str | None:
    """What `os.path.realpath` makes of ``raw`` under the resolved ``top``, found with one
    ``lstat`` per component of ``raw`` (realpath walks every component of ``top`` as well,
    in Python: five times the cost); None when this shortcut cannot tell: ``raw`` is absolute
    or holds ``..``, a component is a link, or a system call fails."""
    if raw.startswith(os.sep):
        return None
    parts = [part for part in raw.split(os.sep) if part and part != "."]
    if ".." in parts:
        return None
    path = top.rstrip(os.sep)
    for index, part in enumerate(parts):
        path = f"{path}{os.sep}{part}"
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return None
        except FileNotFoundError:  # nothing below a missing directory can be a link
            return os.sep.join([path, *parts[index + 1 :]])
        except (OSError, ValueError):
            return None
    return path or os.sep


def relative_name(workspace: Path, path: Path) -> str:
    """``path`` relative to the workspace root, for output the model reads."""
    top, text = str(resolved_root(workspace)), str(path)
    if text == top:
        return "."
    prefix = top.rstrip(os.sep) + os.sep  # on strings: a search names every file it reads
    return text[len(prefix) :] if text.startswith(prefix) else text
