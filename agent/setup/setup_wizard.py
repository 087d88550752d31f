"""``agent setup``: what this machine can use, one cheap test of the choice, the config text.

The questions and the printing are the terminal's (`agent.terminal.setup_view`); this
module finds the choices (API keys in the environment, local servers and their models),
checks one with a single small request through the same adapter a session would use, and
words the user configuration file it would write.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent.setup.config import Config
from agent.setup.local_servers import KNOWN_SERVERS, FoundServer, ServerKind, find_servers
from agent.setup.model_chain import create_provider
from agent.setup.startup import SetupError
from providers import LlmError
from providers.messages import Message
from providers.models import ModelRef
from providers.provider import ChatRequest

__all__ = ["Choice", "check_choice", "config_text", "find_choices", "write_config"]

_KEYED = (
    ("ANTHROPIC_API_KEY", "Anthropic", "anthropic:claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "OpenAI", "openai:gpt-4.1"),
)
CHECK_TIMEOUT = 60.0
"""Seconds the test request may take: a local server may load the model first."""


@dataclass(frozen=True)
class Choice:
    """One model agent could use here, and where it was found."""

    ref: str
    source: str
    """Where it comes from: "ANTHROPIC_API_KEY is set", "Ollama on 127.0.0.1:11434"."""
    calls_tools: bool
    server: ServerKind | None = None

    def describe(self) -> str:
        mark = "tools ✓" if self.calls_tools else "no tool calling known"
        return f"{self.ref}  ({self.source}; {mark})"


def find_choices(
    environ: Mapping[str, str], kinds: tuple[ServerKind, ...] = KNOWN_SERVERS
) -> tuple[list[Choice], list[FoundServer]]:
    """The models this machine can use now: keyed vendors first, then each server's models
    (those known to call tools first); and the servers that answered."""
    choices = [
        Choice(ref, f"{variable} is set", calls_tools=True)
        for variable, _, ref in _KEYED
        if environ.get(variable)
    ]
    servers = find_servers(kinds)
    for server in servers:
        where = f"{server.kind.label} on {server.kind.host}:{server.kind.port}"
        ranked = sorted(server.models, key=lambda model: model not in server.tool_models)
        choices += [
            Choice(server.ref(model), where, model in server.tool_models, server.kind)
            for model in ranked
        ]
    return choices, servers


def _provider_block(choice: Choice) -> dict[str, dict[str, str]]:
    if choice.server is None:
        return {}
    return {choice.server.provider: {"type": "openai", "base_url": choice.server.base_url}}


def check_choice(choice: Choice, environ: Mapping[str, str]) -> str | None:
    """Send ``choice`` one small request; None if it answered, else what went wrong."""
    config = Config.model_validate({"model": choice.ref, "providers": _provider_block(choice)})
    ref = ModelRef.parse(choice.ref)
    try:
        provider = create_provider(config, ref, environ)
    except SetupError as error:
        return str(error)
    request = ChatRequest(
        model=ref.name,
        messages=[Message.user("Reply with the word OK.")],
        max_tokens=8,
        timeout=CHECK_TIMEOUT,
    )
    try:
        asyncio.run(asyncio.wait_for(provider.chat(request), CHECK_TIMEOUT))
    except LlmError as error:
        return error.message
    except TimeoutError:
        return f"no answer within {CHECK_TIMEOUT:g} s"
    return None


def config_text(choice: Choice) -> str:
    """The user configuration file for ``choice``, as a person would write it."""
    lines = [f"# Written by `agent setup` ({choice.source}).", f"model: {choice.ref}"]
    for name, entry in _provider_block(choice).items():
        base_url = entry["base_url"]
        lines += ["providers:", f"  {name}:", "    type: openai", f"    base_url: {base_url}"]
    return "\n".join(lines) + "\n"


def write_config(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (directories made as needed), replacing it in one step.

    The file is private (0600: the config is where a person may add an ``api_key``), and the
    temporary file is created new, never opened through a link someone left in its place.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(partial, flags, 0o600)  # fails on anything already there, a link included
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)  # ours: created above
        raise
