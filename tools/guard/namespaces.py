"""The kernel-level layer of the sandbox: one user, mount and PID namespace per command.

The launcher (`tools/guard/landlock.py`) loads this file by path and, where the kernel lets an
unprivileged process create user namespaces, calls `enter` before it forks the command:

- in the new mount namespace everything is read-only (one ``mount_setattr`` over the whole
  tree), then the writable directories are bound back read-write and the protected paths
  inside them (git's configuration and hooks, the agent's own configuration) are bound
  read-only again. A read-only mount also refuses ``chmod``, ``utime`` and ``rename``, which
  Landlock has no right for; a hard link from a protected file to a name beside it crosses a
  mount and fails with ``EXDEV``; a protected path is a mount point, so it cannot be renamed
  over or removed (``EBUSY``);
- every path a deny rule keeps from being read (``--deny-read``, a regular expression over
  workspace-relative paths, matched against what is there at the start) is masked: an
  empty read-only directory (a tmpfs) or ``/dev/null`` is mounted over it, so no program,
  whatever it is written in, can read it; a path an Edit or Write deny rule covers
  (``--deny-edit``) is bound read-only. A mask is a mount point: it cannot be linked,
  renamed or removed either;
- the command's first process is PID 1 of a new PID namespace (`run_init`): when it ends, the
  kernel kills every process left in the namespace, whatever they did to their session or to
  the launcher, and none of them can name a process outside it to signal it;
- with the network off, a new network namespace: only a loopback that is down, so no TCP,
  UDP or raw socket reaches anything, and abstract Unix sockets outside are out of reach;
- the user namespace maps only the caller's own uid and gid, and the command starts with an
  empty capability bounding set, so it cannot undo the mounts even when the agent runs as root.

The same code runs for a normal user and for root: the namespaces are always created from a
new user namespace, never with root's own privileges. Standard library only (the launcher
runs with ``-I -S``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from collections.abc import Callable, Sequence

_CLONE_NEWNS = 0x00020000
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_SYS_MOUNT_SETATTR = 442  # The same number on every architecture Linux supports.
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24


class _MountAttr(ctypes.Structure):
    _fields_ = (
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    )


class NamespaceError(OSError):
    """The namespaces could not be set up; ``strerror`` says which step failed and why."""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _check(result: int, what: str) -> None:
    if result < 0:
        code = ctypes.get_errno()
        raise NamespaceError(code, f"{what}: {os.strerror(code)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _set_readonly(libc: ctypes.CDLL, path: str, readonly: bool) -> None:
    """Set or clear read-only on the mount at ``path`` and every mount below it.

    A mount below that the parent namespace made read-only stays so (the kernel locks it):
    then only the top mount is changed.
    """
    attr = _MountAttr()
    if readonly:
        attr.attr_set = _MOUNT_ATTR_RDONLY
    else:
        attr.attr_clr = _MOUNT_ATTR_RDONLY
    number = _SYS_MOUNT_SETATTR
    size = ctypes.c_size_t(ctypes.sizeof(attr))
    target = path.encode()
    if libc.syscall(number, _AT_FDCWD, target, _AT_RECURSIVE, ctypes.byref(attr), size) == 0:
        return
    _check(libc.syscall(number, _AT_FDCWD, target, 0, ctypes.byref(attr), size), f"{path}")


def _bind(libc: ctypes.CDLL, path: str, readonly: bool) -> None:
    _check(libc.mount(path.encode(), path.encode(), None, _MS_BIND | _MS_REC, None), path)
    _set_readonly(libc, path, readonly)


def enter(
    writable: list[str],
    protected: list[str],
    deny_root: str | None = None,
    deny_read: Sequence[str] = (),
    deny_edit: Sequence[str] = (),
    *,
    network: bool = True,
) -> None:
    """Move this process into new user, mount and PID namespaces (and network namespace when
    ``network`` is False) set up as described above.

    ``writable`` are directories (or files) that stay writable; ``protected`` are paths inside
    them that become read-only; below ``deny_root``, what the ``deny_read`` patterns match is
    masked and what the ``deny_edit`` ones match is read-only (`denied_paths`, looked for
    before anything changes). Paths that do not exist are skipped. The PID namespace takes
    effect for the next child forked (`run_init`). Raises `NamespaceError`.
    """
    hidden: list[str] = []
    if deny_root is not None and (deny_read or deny_edit):
        hidden, locked = denied_paths(deny_root, list(deny_read), list(deny_edit))
        protected = [*protected, *locked]
    libc = _libc()
    uid, gid = os.geteuid(), os.getegid()
    flags = _CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID | (0 if network else _CLONE_NEWNET)
    _check(libc.unshare(flags), "unshare")
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        raise NamespaceError(exc.errno or 0, f"uid map: {exc.strerror}") from None
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "private /")
    _set_readonly(libc, "/", True)
    places = {os.path.realpath(p) for p in writable if os.path.exists(p)}
    # Parents first, so a writable directory inside another is bound on top of it.
    for place in sorted(places, key=lambda p: (p.count(os.sep), p)):
        _bind(libc, place, readonly=False)
    for path in protected:
        # A link to a directory is the put-back's business: binding its target could make
        # any directory read-only.
        if os.path.isfile(path) or (os.path.isdir(path) and not os.path.islink(path)):
            _bind(libc, os.path.realpath(path), readonly=True)
    for path in hidden:
        _hide(libc, path)
    # The working directory was looked up before the binds, on the read-only mount below.
    with contextlib.suppress(OSError):
        os.chdir(os.getcwd())


def _hide(libc: ctypes.CDLL, path: str) -> None:
    """Mount an empty read-only directory, or ``/dev/null``, over ``path``."""
    if os.path.isdir(path):
        flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        _check(libc.mount(b"none", path.encode(), b"tmpfs", flags, b"mode=0555"), path)
    elif os.path.exists(path):
        _check(libc.mount(b"/dev/null", path.encode(), None, _MS_BIND, None), path)
        _set_readonly(libc, path, True)


def denied_paths(
    root: str, read: list[str], edit: list[str], budget: int = 20_000
) -> tuple[list[str], list[str]]:
    """The paths below ``root`` to mask and to make read-only: those whose ``/``-separated
    relative path fully matches one of the ``read`` or ``edit`` regular expressions.

    Breadth-first, at most ``budget`` entries; a directory that matches is taken whole, a
    symlink stands for its target only when that is inside ``root``, and no ``.git``
    directory is looked into.
    """
    import re  # only when there are rules: the launcher starts without it otherwise

    hide = re.compile("|".join(f"(?:{p})" for p in read)) if read else None
    lock = re.compile("|".join(f"(?:{p})" for p in edit)) if edit else None
    root = os.path.realpath(root)
    found: tuple[list[str], list[str]] = ([], [])
    queue, seen = [""], 0
    while queue and seen < budget:
        rel = queue.pop(0)
        try:
            listing = os.scandir(os.path.join(root, rel) if rel else root)
        except OSError:
            continue
        with listing:
            entries = [entry for _, entry in zip(range(budget - seen), listing, strict=False)]
        for entry in entries:
            seen += 1
            child = f"{rel}/{entry.name}" if rel else entry.name
            for index, pattern in enumerate((hide, lock)):
                if pattern is not None and pattern.fullmatch(child):
                    real = os.path.realpath(entry.path)
                    if real.startswith(root + os.sep):
                        found[index].append(real)
                    break
            else:
                if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                    queue.append(child)
    return found


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    """Empty the bounding set: whatever the command executes gets no capability, root or not."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)


def run_init(start: Callable[[], object]) -> int:
    """In the first child after `enter`, which is PID 1 of the new PID namespace: mount a
    ``/proc`` that shows only this namespace, fork the command (``start()`` execs it in the
    grandchild and never returns), reap every orphan, and return the command's exit status.

    When this process ends the kernel kills every other process in the namespace. It also
    ends, with the whole namespace, when the launcher dies (``PR_SET_PDEATHSIG``).
    """
    # Not the launcher's handlers: they would sweep /proc as if this were the launcher. With
    # the default action, PID 1 ignores these; the launcher ends it with SIGKILL.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    libc = _libc()
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    with contextlib.suppress(OSError):  # a container may hide parts of /proc: keep the old one
        _check(libc.mount(b"proc", b"/proc", b"proc", flags, None), "/proc")
    _drop_capabilities(libc)
    pid = os.fork()
    if pid == 0:
        start()
        os._exit(127)
    while True:
        try:
            child, status = os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0
        if child == pid:
            if os.WIFEXITED(status):
                return os.WEXITSTATUS(status)
            return 128 + os.WTERMSIG(status)


def probe() -> str | None:
    """Why `enter` would fail here, or None when it works (run in a process of its own)."""
    try:
        enter([os.getcwd()], [], network=False)
    except NamespaceError as exc:
        return exc.strerror or str(exc)
    return None
