"""The OS sandbox for run_command: what a command may write, and how it is launched.

``workspace-write`` (the default) lets a command and all its children write only inside the
workspace, the system temp directory, the agent's scratch directory and any configured
``writable_paths``; ``read-only`` allows no writes at all; ``off`` runs commands unconfined.
On Linux the rule is enforced by Landlock (no root, no daemon) in a small launcher,
`tools/guard/landlock.py`; where Landlock is missing the agent says so and the command policy
(`tools/guard/policy.py`) remains the only guard. The launcher runs in every mode, so background
children are always killed when a command ends.

Package managers and build tools keep caches in the home directory (``~/.npm``,
``~/.cache``), which ``workspace-write`` does not let them write: ``npm install`` failed
outright. A confined program (a command or an MCP server) is therefore pointed at a cache of
its own in the scratch directory (`landlock.CACHE_VARIABLES`), unless its setting already
names a writable place.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.guard import landlock
from tools.guard.protected import REUSE_SECONDS
from tools.guard.protected_scan import scan_cached
from tools.shell_env import ShellEnv


class SandboxMode(StrEnum):
    """What a confined command may write; the config file and ``--sandbox`` take these values."""

    WORKSPACE_WRITE = "workspace-write"
    READ_ONLY = "read-only"
    OFF = "off"


_MODE_HELP = {
    SandboxMode.WORKSPACE_WRITE: "commands write only inside the workspace and temp directories",
    SandboxMode.READ_ONLY: "no writes",
    SandboxMode.OFF: "no sandbox",
}

_LAUNCHER = Path(landlock.__file__).resolve()
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom")
"""Device files every command may write to (``> /dev/null`` is not a change to the machine)."""
_SHARED_MEMORY = "/dev/shm"
LAYERS_VARIABLE = "AGENT_SANDBOX_LAYERS"
"""Set to ``landlock`` to leave out the namespace layer (tests use it to try the Landlock-only
path on a machine that has both)."""


class SandboxSettings(BaseModel):
    """The ``sandbox:`` section of the configuration."""

    model_config = ConfigDict(extra="forbid")

    mode: SandboxMode = Field(
        default=SandboxMode.WORKSPACE_WRITE,
        description="; ".join(f"{mode}: {help}" for mode, help in _MODE_HELP.items()) + ".",
    )
    network: bool = Field(
        default=True,
        description="false: commands and MCP servers get no network: no TCP, UDP or Unix "
        "sockets (a network namespace and a seccomp filter; Landlock alone: TCP, Linux 6.7+).",
    )
    writable_paths: list[str] = Field(
        default_factory=list,
        description="More directories commands may write to (~ is expanded), e.g. ~/.cache/pip.",
    )
    allow_protected_writes: bool = Field(
        default=False,
        description="true: file tools may change .git/config, .git/hooks/, the agent's "
        "config and files hooks run without asking (also under -p).",
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _unquoted_off(cls, value: object) -> object:
        """YAML reads an unquoted ``off`` as false; it means "off" here."""
        return SandboxMode.OFF if value is False else value


@dataclass(frozen=True)
class DeniedPatterns:
    """Paths deny rules cover, as regular expressions over workspace-relative ``/`` paths:
    ``read`` (Read rules) are masked in a command's namespace, ``edit`` (Edit and Write
    rules) are read-only there. Without namespaces, commands are checked by name only."""

    read: tuple[str, ...] = ()
    edit: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sandbox:
    """How run_command launches a command: the mode in force and the backend enforcing it."""

    mode: SandboxMode
    network: bool = True
    writable: tuple[Path, ...] = ()
    """Directories writable besides the workspace (``workspace-write`` only)."""
    abi: int = 0
    """The kernel's Landlock ABI version; 0 when it is unavailable."""
    allow_protected_writes: bool = False
    """Whether file tools may change protected paths without the person's approval."""
    cache: Path | None = None
    """The confined commands' own cache directory (inside a writable one)."""
    namespaces: bool = False
    """Whether each command runs in its own user, mount and PID namespace."""
    namespaces_missing: str = ""
    """Why there are no namespaces, when `namespaces` is False."""
    env: ShellEnv = field(default_factory=ShellEnv, compare=False)
    """Which of the agent's environment variables a command or MCP server gets."""
    hook_commands: tuple[str, ...] = ()
    """The agent's configured hook and MCP server commands: the workspace files they run
    are protected."""
    denied: Callable[[], DeniedPatterns] | None = field(default=None, compare=False)
    """The deny rules' paths now, masked (Read) or read-only (Edit) in a command's namespace."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", SandboxMode(self.mode))  # "off" given as text, too

    @classmethod
    def create(
        cls,
        settings: SandboxSettings,
        *,
        scratch: Path | None = None,
        hook_commands: tuple[str, ...] = (),
        env: ShellEnv | None = None,
    ) -> Sandbox:
        """The sandbox for ``settings`` on this machine (probes the kernel once);
        ``hook_commands`` are the agent's hook and MCP server commands, and programs get the
        environment ``env`` builds (by default, without secrets)."""
        writable = [Path(tempfile.gettempdir())]
        cache = None
        if scratch is not None:
            writable.append(scratch)
            cache = scratch / "cache"
            try:
                cache.mkdir(mode=0o700, exist_ok=True)
            except OSError:
                cache = None
        writable += [Path(os.path.expanduser(p)) for p in settings.writable_paths]
        abi = landlock.abi_version() if settings.mode != SandboxMode.OFF else 0
        missing = namespaces_missing() if settings.mode != SandboxMode.OFF else "sandbox is off"
        return cls(
            settings.mode,
            settings.network,
            tuple(writable),
            abi,
            settings.allow_protected_writes,
            cache,
            namespaces=not missing,
            namespaces_missing=missing,
            env=env or ShellEnv(),
            hook_commands=hook_commands,
        )

    @property
    def enforced(self) -> bool:
        """Whether the kernel enforces the mode (False for ``off`` or without Landlock)."""
        return self.mode != SandboxMode.OFF and self.abi >= 1

    @property
    def blocks_network(self) -> bool:
        """Whether commands are offline: a network namespace of their own, or at least
        Landlock's TCP rules (a seccomp filter on sockets adds to either)."""
        if self.network or self.mode is SandboxMode.OFF:
            return False
        return self.namespaces or (self.enforced and self.abi >= 4)

    def environment(self) -> dict[str, str]:
        """The environment a command or MCP server starts with: the agent's own, filtered
        by the ``shell_env`` policy (read now, so a variable set since start counts)."""
        return self.env.build(os.environ)

    def argv(self, command: str, workspace: Path) -> list[str]:
        """The argv that runs ``bash -c command`` under this sandbox."""
        return self.wrap(["bash", "-c", command], workspace)

    def wrap(self, program: list[str], workspace: Path) -> list[str]:
        """The argv that runs ``program`` (an argv) under this sandbox, e.g. an MCP server.

        The launcher ends every process the program left behind when the program exits.
        """
        argv = [sys.executable, "-I", "-S", str(_LAUNCHER), "--parent", str(os.getpid())]
        if self.namespaces and self.mode is not SandboxMode.OFF:
            argv.append("--namespaces")
            argv += [arg for path in self.protected(workspace) for arg in ("--protect", path)]
            argv += self._denied_args(workspace)
            if not self.enforced:  # the mounts need to know what stays writable
                argv += [arg for d in self._writable(workspace) for arg in ("--write", str(d))]
                argv.append("--no-landlock")
        if self.enforced:
            for directory in self._writable(workspace):
                argv += ["--write", str(directory)]
            for device in _DEVICES:
                argv += ["--write-file", device]
            if self.mode is SandboxMode.WORKSPACE_WRITE and self.cache is not None:
                argv += ["--cache", str(self.cache)]
        elif not self.namespaces or self.mode is SandboxMode.OFF:
            argv.append("--unrestricted")
        if not self.network and self.mode is not SandboxMode.OFF:
            argv.append("--no-network")
        return [*argv, "--", *program]

    def protected(self, workspace: Path) -> list[str]:
        """The protected paths that exist, to mount read-only (a git directory itself stays
        writable: commits write its objects and refs)."""
        found = scan_cached(workspace, self.hook_commands, max_age=REUSE_SECONDS)
        # What is inside a directory already mounted read-only needs no mount of its own.
        paths = sorted(root.rel for root in found.outermost() if root.whole)
        return [str(workspace / rel) for rel in paths if os.path.lexists(workspace / rel)]

    def _denied_args(self, workspace: Path) -> list[str]:
        patterns = self.denied() if self.denied is not None else DeniedPatterns()
        if not (patterns.read or patterns.edit):
            return []
        args = ["--deny-root", str(workspace)]
        args += [arg for pattern in patterns.read for arg in ("--deny-read", pattern)]
        return args + [arg for pattern in patterns.edit for arg in ("--deny-edit", pattern)]

    def _writable(self, workspace: Path) -> list[Path]:
        if self.mode is not SandboxMode.WORKSPACE_WRITE:
            return []  # read-only: no writes at all, shared memory included
        dirs = [workspace, *self.writable]
        if os.path.isdir(_SHARED_MEMORY):
            dirs.append(Path(_SHARED_MEMORY))
        return dirs

    def layers(self) -> list[str]:
        """The layers that confine a command, outermost first."""
        if self.mode is SandboxMode.OFF:
            return []
        found = ["namespaces"] if self.namespaces else []
        return found + (["Landlock"] if self.enforced else [])

    def describe(self) -> str:
        """The mode and the layers in force (and why one is missing), for ``/stats``."""
        if self.mode is SandboxMode.OFF:
            return "off (commands run unconfined)"
        layers = self.layers()
        if not layers:
            return f"{self.mode} not enforced (Landlock unavailable; the command policy applies)"
        network = ", no network" if self.blocks_network else ""
        missing = []
        if not self.namespaces and self.namespaces_missing:
            missing.append(f"no namespaces: {self.namespaces_missing}")
        if not self.enforced:
            missing.append("no Landlock: the kernel has none")
        why = f"; {'; '.join(missing)}" if missing else ""
        return f"{self.mode} ({' + '.join(layers)}{network}{why})"

    def notice(self) -> str | None:
        """What to tell the person once at start, or None when the sandbox works as asked."""
        if self.mode is SandboxMode.OFF:
            return (
                "Sandbox is off: commands the model runs can change any file you can. "
                "Remove 'sandbox: {mode: off}' or the --sandbox flag to turn it back on."
            )
        if not self.enforced:
            where = "this system" if sys.platform.startswith("linux") else sys.platform
            return (
                f"No OS sandbox on {where} (it needs Linux 5.13+ with Landlock enabled): "
                "commands run unconfined, and only dangerous patterns are refused. "
                "Approve commands yourself, or run the agent in a container or VM."
            )
        if not self.network and not self.blocks_network:
            return (
                "sandbox.network is false, but this kernel can turn the network off neither "
                "with namespaces nor with Landlock (Linux 6.7+): commands stay online."
            )
        if not self.namespaces and self.namespaces_missing:
            return (
                f"Sandbox: Landlock only ({self.namespaces_missing}). Without namespaces, files "
                "outside the workspace can still have their permissions and times changed."
            )
        return None

    def denied_hint(self) -> str:
        """Appended to a failed command's result when the sandbox may have refused a write."""
        if self.mode is SandboxMode.READ_ONLY:
            return (
                "[sandbox: read-only — commands may not write files. Describe the change or "
                "make it with edit_file/write_file if allowed.]"
            )
        places = ", ".join(str(p) for p in self.writable)
        return (
            "[sandbox: commands may write only inside the workspace and "
            f"{places}; writes elsewhere fail with 'Permission denied'. Keep changes inside "
            "the workspace; the person can add a directory to sandbox.writable_paths.]"
        )


def namespaces_missing() -> str:
    """Why commands cannot run in their own namespaces here ("" when they can).

    Runs the launcher's probe in a process of its own (a threaded process cannot enter a user
    namespace); about 20 ms, once per session.
    """
    if os.environ.get(LAYERS_VARIABLE, "").strip().lower() == "landlock":
        return f"turned off by {LAYERS_VARIABLE}=landlock"
    return _probe()


@functools.cache
def _probe() -> str:
    if not sys.platform.startswith("linux"):
        return f"not available on {sys.platform}"
    try:
        probe = subprocess.run(
            [sys.executable, "-I", "-S", str(_LAUNCHER), "--probe-namespaces"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the probe failed: {exc}"
    if probe.returncode == 0:
        return ""
    return f"the kernel refused unprivileged user namespaces ({probe.stderr.strip()[:200]})"
