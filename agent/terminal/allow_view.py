"""What ``/agents allow NAME`` and ``/skills allow NAME`` share: the host they need from the
REPL, the command's two forms, and the question, the answer and the remembering of a project
file the person allows."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Protocol

from rich.console import RenderableType
from rich.text import Text


class AllowHost(Protocol):
    """What a listing command with an ``allow NAME`` verb needs from the REPL."""

    workspace: Path

    @property
    def environ(self) -> Mapping[str, str]: ...

    def show(self, renderable: RenderableType) -> None: ...

    async def ask(self, question: str) -> str: ...


async def list_or_allow(
    host: AllowHost,
    command: str,
    arg: str,
    listing: Callable[[], RenderableType],
    allow: Callable[[str], Awaitable[None]],
) -> bool:
    """Run ``/command`` (show ``listing()``) or ``/command allow NAME`` (``allow(NAME)``);
    anything else gets the usage. Always True (the REPL goes on)."""
    word, _, name = arg.partition(" ")
    if not word:
        host.show(listing())
    elif word == "allow" and name.strip():
        await allow(name.strip())
    else:
        host.show(Text(f"Usage: /{command}, or /{command} allow NAME", style="yellow"))
    return True


def home_of(environ: Mapping[str, str]) -> Path:
    """The person's home directory as ``environ`` names it."""
    return Path(environ.get("HOME", "~")).expanduser()


async def ask_to_allow(
    host: AllowHost, name: str, question: str, trust: Callable[[], None], declined: str
) -> None:
    """Ask ``question`` (it ends in ``[y/N]``); on yes, ``trust()`` remembers the file as it
    is now, and the person is told; on anything else, ``declined`` says what holds instead."""
    if (await host.ask(question)).strip().lower() not in ("y", "yes"):
        host.show(Text(f"{name} not allowed; {declined}.", style="dim"))
        return
    try:
        trust()
    except OSError as error:
        host.show(Text(f"Could not remember it: {error.strerror or error}", style="red"))
        return
    host.show(Text(f"{name} allowed; a change to its file asks again.", style="green"))
