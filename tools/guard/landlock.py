"""The launcher that runs one command inside the sandbox (Landlock itself: `ruleset.py`).

This file is both a module (`abi_version` for the agent's probe) and a script: the agent runs
``python -I -S landlock.py [options] -- bash -c COMMAND``. The launcher

1. makes itself the child subreaper, so descendants that ``setsid`` away are reparented to it;
2. with ``--namespaces``, moves into new user, mount and PID namespaces
   (`tools/guard/namespaces.py`): outside the ``--write`` places everything is read-only, the
   ``--protect`` paths too, the paths below ``--deny-root`` that a ``--deny-read`` pattern
   matches are masked and those a ``--deny-edit`` one matches are read-only, and the
   command's first process is PID 1 of its own namespace;
3. forks the command, which restricts itself with Landlock (`tools/guard/ruleset.py`) before
   it runs: writes are allowed only beneath the ``--write`` directories and to the
   ``--write-file`` files; reads and execution stay unrestricted; signals to processes
   outside the sandbox (the launcher included) are denied where the kernel can express that
   (Landlock ABI 6). ``--no-network`` turns the network off with every layer there is: a
   network namespace of its own (with ``--namespaces``), Landlock's TCP rules (ABI 4) and a
   seccomp filter that refuses sockets (`tools/guard/signal_guard.py`);
4. forwards SIGTERM/SIGINT/SIGHUP, and when the command ends (or on such a signal) kills every
   descendant that is left and exits with the command's status;
5. with ``--parent PID``, asks the kernel for SIGTERM when the agent dies (``PR_SET_PDEATHSIG``),
   so nothing it started outlives it, even after ``kill -9`` or an exit that could not wait
   for a server to stop.

``--probe-namespaces`` only says (exit status 0, or 1 and the reason) whether step 2 works.
It imports only the standard library: it runs with ``-I -S`` to start fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import MutableMapping
from types import ModuleType

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38

EXIT_SANDBOX_FAILED = 125
"""The launcher's exit status when it could not set up the sandbox (nothing ran)."""


def abi_version() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock cannot be used here."""
    version: int = _sibling("ruleset").abi_version()
    return version


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (orphans reparented to a subreaper included)."""
    found: set[int] = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.update(int(child) for child in f.read().split())
    except OSError:  # no /proc/PID/task/*/children in this kernel: scan every process
        for entry in os.listdir("/proc"):
            with (
                contextlib.suppress(OSError, ValueError, IndexError),
                open(f"/proc/{entry}/stat") as f,
            ):
                # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.add(int(entry))
    return sorted(found)


def _kill_descendants() -> None:
    """SIGKILL every process below this one and reap them, until none is left."""
    me = os.getpid()
    while True:
        for child in _children(me):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        try:
            os.wait()  # killed processes' children are reparented here; loop for them
        except ChildProcessError:
            return
        except InterruptedError:
            continue


CACHE_VARIABLES = {"XDG_CACHE_HOME": "", "npm_config_cache": "npm"}
"""Where confined programs keep caches: the variable, and its directory under ``--cache``.
``XDG_CACHE_HOME`` covers pip, uv, Go's build cache, yarn, pre-commit, node-gyp and most
others; npm (and npx) has its own."""


def point_caches(environ: MutableMapping[str, str], cache: str, writable: list[str]) -> None:
    """Point each cache of `CACHE_VARIABLES` that is not in a ``writable`` directory into
    ``cache``: the home directory's caches (``~/.npm``, ``~/.cache``) cannot be written."""
    for name, sub in CACHE_VARIABLES.items():
        value = environ.get(name, "")
        if not (value and os.path.isabs(value) and _inside(value, writable)):
            environ[name] = os.path.join(cache, sub) if sub else cache


def _inside(path: str, directories: list[str]) -> bool:
    path = os.path.normpath(path)
    for directory in directories:
        directory = os.path.normpath(directory)
        if path == directory or path.startswith(directory.rstrip(os.sep) + os.sep):
            return True
    return False


class _Launch:
    """What the command line asked for (a plain class: importing ``typing`` costs start-up)."""

    def __init__(self) -> None:
        self.dirs: list[str] | None = []  # None: unrestricted
        self.files: list[str] = []
        self.protect: list[str] = []
        self.deny_read: list[str] = []
        self.deny_edit: list[str] = []
        self.deny_root: list[str] = []  # the last one given counts
        self.network = True
        self.namespaces = False
        self.landlock = True
        self.parent: int | None = None
        self.cache: str | None = None
        self.command: list[str] = []


_VALUED = {"--write": "dirs", "--write-file": "files", "--protect": "protect"}
_VALUED |= {"--deny-root": "deny_root", "--deny-read": "deny_read", "--deny-edit": "deny_edit"}


def _parse(argv: list[str]) -> _Launch:
    launch = _Launch()
    i = 0
    while i < len(argv) and argv[i] != "--":
        option, value = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        i += 1
        if option == "--parent" and value is not None and value.isdigit():
            launch.parent = int(value)
        elif option in _VALUED and value is not None:
            places = getattr(launch, _VALUED[option])
            if places is not None:
                places.append(value)
        elif option == "--cache" and value is not None:
            launch.cache = value
        elif option in ("--no-network", "--unrestricted", "--namespaces", "--no-landlock"):
            launch.network = launch.network and option != "--no-network"
            launch.namespaces = launch.namespaces or option == "--namespaces"
            launch.landlock = launch.landlock and option != "--no-landlock"
            launch.dirs = None if option == "--unrestricted" else launch.dirs
            continue
        else:
            raise SystemExit(f"sandbox launcher: unknown option {option!r}")
        i += 1
    launch.command = argv[i + 1 :]
    if not launch.command:
        raise SystemExit("sandbox launcher: no command after --")
    return launch


_LOADED: dict[str, ModuleType] = {}


def _sibling(name: str) -> ModuleType:
    """``tools/guard/<name>.py``, loaded by path (once): ``-I`` leaves this directory off
    sys.path."""
    if name in _LOADED:
        return _LOADED[name]
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_agent_{name}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _LOADED[name] = module
    return module


def _start(launch: _Launch) -> None:
    """In the command's own process: Landlock, then exec. Never returns."""
    try:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        if launch.dirs is not None and launch.landlock:
            try:
                _sibling("ruleset").restrict(launch.dirs, launch.files, network=launch.network)
            except OSError as exc:
                sys.stderr.write(f"sandbox: could not restrict the command ({exc.strerror})\n")
                os._exit(EXIT_SANDBOX_FAILED)
            if launch.cache is not None:
                point_caches(os.environ, launch.cache, launch.dirs)
            if not launch.namespaces:  # in a PID namespace the launcher has no pid to name
                launcher = os.getppid()
                _sibling("signal_guard").install(launcher, os.getpgid(launcher))
        if not launch.network:
            # On an architecture the filter does not know, the other layers are what is left.
            _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            _sibling("signal_guard").install_offline()
        os.execvp(launch.command[0], launch.command)
    except OSError as exc:
        sys.stderr.write(f"sandbox: could not run {launch.command[0]}: {exc.strerror}\n")
    os._exit(127)


def main(argv: list[str]) -> int:
    if argv == ["--probe-namespaces"]:
        reason = _sibling("namespaces").probe()
        sys.stderr.write(reason or "")
        return 1 if reason else 0
    launch = _parse(argv)
    init = [0]  # the PID namespace's first process while it runs: killing it ends them all

    def stop(signum: int, _frame: object) -> None:
        _end(init[0])
        os._exit(128 + signum)

    # Before the fork, so a signal that comes at any point takes the command down with us.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    libc = _libc()
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if launch.parent is not None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != launch.parent:  # the agent died before the request took effect
            return 128 + signal.SIGTERM
    if launch.namespaces:
        namespaces = _sibling("namespaces")
        try:
            root = launch.deny_root[-1] if launch.deny_root else None
            namespaces.enter(
                launch.dirs or [],
                launch.protect,
                root,
                launch.deny_read,
                launch.deny_edit,
                network=launch.network,
            )
        except OSError as exc:
            sys.stderr.write(f"sandbox: could not set up namespaces ({exc.strerror})\n")
            return EXIT_SANDBOX_FAILED
    pid = os.fork()
    if pid and launch.namespaces:
        init[0] = pid
    if pid == 0:
        if launch.namespaces:
            os._exit(namespaces.run_init(lambda: _start(launch)))
        # Landlock-only: the command dies with the launcher; its own descendants are swept.
        # A group of its own, so that its `kill 0` does not reach the launcher.
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.setpgid(0, 0)
        _start(launch)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    # The command is over: whatever it left running in the background goes with it (in a
    # PID namespace the kernel has already ended them).
    init[0] = 0
    if not launch.namespaces:
        _kill_descendants()
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _end(init: int) -> None:
    """Kill what is left: the PID namespace's first process (the kernel ends the rest), or
    without one every descendant found through /proc (which, in the launcher's mount
    namespace, shows the command's PID namespace once it runs: not read then)."""
    if init > 0:
        with contextlib.suppress(ProcessLookupError):
            os.kill(init, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while True:
                with contextlib.suppress(InterruptedError):
                    os.wait()
        return
    _kill_descendants()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
