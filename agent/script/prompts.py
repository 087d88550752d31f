"""The prompts a ``-p`` run answers: its argument's, or each message on stdin (stream-json).

Each is taken as the REPL takes a typed message: ``/name args`` runs a custom command (or
``/init``, ``/plan``), ``@path`` mentions are read in (an image attached), and plan mode's
note is added. A message that cannot run becomes a sentence saying why, not a prompt.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

from agent.permissions.plan import planned
from agent.script.input import BadInputLine, prompt_from_line
from agent.script.stream_json import StreamJsonFace
from agent.session import Agent
from agent.setup.startup import Started
from agent.terminal.command_runner import CustomCommands, print_mode_prompts
from agent.terminal.mentions import Refused, expand_now, mentioned
from providers import ImageBlock

Prompts = AsyncIterator[str | None]
"""The prompts of one message, each one turn (None: go on with a turn stopped midway)."""


def argument_prompts(prompt: str | None, started: Started, agent: Agent) -> Prompts | str:
    """``-p``'s argument as prompts, or why it cannot run.

    ``prompt`` None continues the turn the resumed session stopped in, as it was.
    """
    custom = _custom_command(prompt, started, agent)
    if custom is not None:
        return custom
    if prompt is not None and mentioned(prompt):
        expanded = expand_now(prompt, started.options.workspace, _refused_read(agent))
        refusal = "; ".join(expanded.problems) or agent.attach_images(expanded.images)
        if refusal:
            return refusal
        prompt = expanded.prompt
    return _one(_planned(prompt, agent) if prompt is not None else None)


async def stdin_prompts(started: Started, agent: Agent, stream: StreamJsonFace | None) -> Prompts:
    """Each user message on stdin, as ``-p`` takes a prompt (``/init``, ``/plan``, a custom
    command, ``@path``); a malformed line, or a message that cannot run, is reported on
    ``stream`` and skipped. EOF ends it."""
    running = asyncio.get_running_loop()
    number = 0
    while line := await running.run_in_executor(None, sys.stdin.readline):
        number += 1
        if not line.strip():
            continue
        try:
            prompts = _message_prompts(*prompt_from_line(line), started, agent)
        except BadInputLine as error:
            prompts = str(error)
        if isinstance(prompts, str):
            if stream is not None:
                stream.system("input_error", line=number, error=prompts)
            continue
        async for prompt in prompts:
            yield prompt


def _message_prompts(
    text: str, images: list[ImageBlock], started: Started, agent: Agent
) -> Prompts | str:
    """One streamed message's prompts, or why it cannot run (`_custom_command`, mentions, an
    image the model cannot see)."""
    custom = _custom_command(text, started, agent)
    if isinstance(custom, str):
        return custom
    if custom is not None:
        if images and (problem := agent.attach_images(images)):
            return problem
        return _in_plan_mode_for_one_message(custom, agent, started.config.plan_mode)
    if mentioned(text):
        expanded = expand_now(text, agent.workspace, _refused_read(agent))
        if expanded.problems:
            return "; ".join(expanded.problems)
        images, text = [*images, *expanded.images], expanded.prompt
    if images and (problem := agent.attach_images(images)):
        return problem
    return _one(_planned(text, agent))


def _custom_command(prompt: str | None, started: Started, agent: Agent) -> Prompts | str | None:
    """``/name args``: the command's prompts, or why it cannot run, or None (a prompt)."""
    if prompt is None or not prompt.startswith("/"):
        return None
    commands = CustomCommands(agent.workspace, started.environ, started.home, set())
    commands.refresh()
    return print_mode_prompts(prompt, commands, agent)


def _refused_read(agent: Agent) -> Refused | None:
    return agent.permissions.refuses_read if agent.permissions is not None else None


async def _one(prompt: str | None) -> Prompts:
    yield prompt


def _planned(prompt: str, agent: Agent) -> str:
    return planned(prompt, agent.permissions is not None and agent.permissions.modes.plan_mode)


async def _in_plan_mode_for_one_message(
    prompts: Prompts, agent: Agent, configured: bool
) -> Prompts:
    """A command's prompts; ``/plan`` holds only for its own message, then the mode is the
    configured one again."""
    try:
        async for prompt in prompts:
            yield prompt
    finally:
        if agent.permissions is not None:
            agent.permissions.modes.plan(configured)
