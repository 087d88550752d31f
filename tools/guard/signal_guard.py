"""Seccomp filters: one keeps a command's signals off its launcher where nothing else does,
one keeps an offline command from opening sockets.

Without a PID namespace, and before Landlock could scope signals (ABI 6, Linux 6.12), a
command could ``kill -9 $PPID`` or ``kill -STOP $PPID``: the launcher then never swept what the
command left running, and ``setsid`` children wrote ``.git/hooks`` after the put-back. The
launcher installs this filter in the command's process (inherited by everything it starts):
``kill`` of the launcher, of its process group or of every process (``-1``), and ``tkill``,
``tgkill`` or ``pidfd_open`` of its pid, fail with EPERM. The command runs in a process group
of its own, so ``kill 0`` (a common cleanup idiom) still reaches only the command's processes.

With the network off (`install_offline`), ``socket()`` fails with EACCES for every family but
netlink (which reaches only the kernel): a new network namespace leaves a command only a down
loopback, but a Unix socket named by a path still reaches a server outside, and without
namespaces Landlock stops only TCP. ``io_uring_setup``, which can open sockets past the filter,
fails too, and a system call of another architecture (i386's ``socketcall``) kills the process.

Standard library only, loaded by path by `tools/guard/landlock.py`.
"""

from __future__ import annotations

import ctypes
import errno
import os

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_DENY = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO
_REFUSE = 0x00050000 | errno.EACCES
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_AF_NETLINK = 16
_IO_URING_SETUP = 425
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg0's low word, little-endian)
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_PIDFD_OPEN = 434
# architecture: (AUDIT_ARCH, kill, tkill, tgkill, socket)
_ARCHES = {
    "x86_64": (0xC000003E, 62, 200, 234, 41),
    "aarch64": (0xC00000B7, 129, 130, 131, 198),
}
_X32 = 0x40000000
"""x86_64's x32 system calls carry this bit: another way to call kill, so refused outright."""


class _Filter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _Program(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter)))


def program(
    launcher: int, group: int, machine: str
) -> list[tuple[int | str, str, str, int]] | None:
    """The filter as (code, jump-if-true label, jump-if-false label, k); None on an
    architecture this does not know."""
    if machine not in _ARCHES:
        return None
    arch, kill, tkill, tgkill, _ = _ARCHES[machine]
    word = launcher & 0xFFFFFFFF
    own_group = -launcher & 0xFFFFFFFF
    group = -group & 0xFFFFFFFF
    every = 0xFFFFFFFF  # -1
    x32 = [(_JGE, "deny", "", _X32)] if machine == "x86_64" else []
    return [
        (_LD_ABS, "", "", _ARCH),
        (_JEQ, "", "allow", arch),
        (_LD_ABS, "", "", _NR),
        *x32,
        (_JEQ, "kill", "", kill),
        (_JEQ, "pid", "", tkill),
        (_JEQ, "pid", "", tgkill),
        (_JEQ, "pid", "allow", _PIDFD_OPEN),
        ("kill", "", "", _ARG0),
        (_JEQ, "deny", "", word),
        (_JEQ, "deny", "", own_group),
        (_JEQ, "deny", "", group),
        (_JEQ, "deny", "allow", every),
        ("pid", "", "", _ARG0),
        (_JEQ, "deny", "allow", word),
        ("allow", "", "", _ALLOW),
        ("deny", "", "", _DENY),
    ]


def offline_program(machine: str) -> list[tuple[int | str, str, str, int]] | None:
    """The offline filter, in `program`'s form; None on an architecture this does not know."""
    if machine not in _ARCHES:
        return None
    arch, _, _, _, socket = _ARCHES[machine]
    x32 = [(_JGE, "kill", "", _X32)] if machine == "x86_64" else []
    return [
        (_LD_ABS, "", "", _ARCH),
        (_JEQ, "", "kill", arch),
        (_LD_ABS, "", "", _NR),
        *x32,
        (_JEQ, "refuse", "", _IO_URING_SETUP),
        (_JEQ, "", "allow", socket),
        (_LD_ABS, "", "", _ARG0),
        (_JEQ, "allow", "refuse", _AF_NETLINK),
        ("allow", "", "", _ALLOW),
        ("refuse", "", "", _REFUSE),
        ("kill", "", "", _KILL),
    ]


_LABELS = {"kill": _LD_ABS, "pid": _LD_ABS, "allow": _RET, "deny": _RET}


def _assemble(
    source: list[tuple[int | str, str, str, int]], codes: dict[str, int] | None = None
) -> list[tuple[int, int, int, int]]:
    """Resolve labels: an entry whose code is a label name starts that label (in `program`, a
    load of the first argument for "kill" and "pid", a return for "allow" and "deny"; every
    label of `offline_program` is a return)."""
    codes = codes or _LABELS
    where = {code: i for i, (code, _, _, _) in enumerate(source) if isinstance(code, str)}
    out = []
    for i, (code, true, false, k) in enumerate(source):
        jt = where[true] - i - 1 if true else 0
        jf = where[false] - i - 1 if false else 0
        out.append((codes[code] if isinstance(code, str) else code, jt, jf, k))
    return out


def install(launcher: int, group: int) -> bool:
    """Install the filter in this process (``PR_SET_NO_NEW_PRIVS`` must be set already):
    signals to the process ``launcher`` and to its process ``group`` are refused.

    Returns False where it cannot be (another architecture, no seccomp): the command then runs
    without it.
    """
    source = program(launcher, group, os.uname().machine)
    return source is not None and _load(_assemble(source))


def install_offline() -> bool:
    """Install the offline filter in this process (``PR_SET_NO_NEW_PRIVS`` must be set
    already); False where it cannot be (another architecture, no seccomp)."""
    source = offline_program(os.uname().machine)
    returns = {"allow": _RET, "refuse": _RET, "kill": _RET}
    return source is not None and _load(_assemble(source, returns))


def _load(code: list[tuple[int, int, int, int]]) -> bool:
    filters = (_Filter * len(code))(*[_Filter(*entry) for entry in code])
    prog = _Program(len(code), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0)
