"""One editor session: an `agent.session.Agent` built for the client's workspace, its face,
its approver, and the turn it is running — plus what the client sends, in our terms.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    Cost,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    McpServerStdio,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    UsageUpdate,
)

from agent.acp.approval import EditorApprover
from agent.acp.face import EditorFace, Outbox, Update
from agent.app import build_agent
from agent.session import Agent
from agent.setup.config import Config
from agent.setup.session_start import WorkspaceMoved
from agent.setup.startup import Options, SetupError, boot
from providers import ImageBlock, Usage
from tools.images import ImageError, image_from_bytes
from tools.mcp.settings import McpServerSettings

SETUP_FAILED = -32013
"""The session cannot start here (configuration, keys, no such session); the message says
what to change."""


@dataclass
class EditorSession:
    """An agent the editor talks to, and what belongs to it here."""

    agent: Agent
    face: EditorFace
    approver: EditorApprover
    turn: asyncio.Task[Any] | None = None
    """The turn (or the plan question) running now: at most one (a second prompt is refused)."""
    cancelled: bool = False
    """``session/cancel`` arrived for the running turn."""
    start_notices: list[str] = field(default_factory=list)
    """What the person should know about this start (shown before the first answer)."""
    closed: bool = field(default=False, repr=False)

    def show_start_notices(self) -> None:
        for text in self.start_notices:
            self.face.notice(text)
        self.start_notices = []

    @property
    def outbox(self) -> Outbox:
        return self.face.outbox

    async def close(self) -> None:
        """Stop a running turn (recorded as interrupted), end and save the session."""
        if self.closed:
            return
        self.closed = True
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()
            await asyncio.gather(self.turn, return_exceptions=True)
        try:
            await self.agent.end("other")
        finally:
            self.outbox.close()
            self.agent.close()


class ContextMeter:
    """``usage_update`` values: the tokens the last request carried, against the window."""

    def __init__(self) -> None:
        self._seen = Usage()
        self.agent: Agent | None = None

    def __call__(self) -> Update | None:
        agent = self.agent
        if agent is None:
            return None
        now = agent.usage
        last = Usage(
            input_tokens=now.input_tokens - self._seen.input_tokens,
            output_tokens=now.output_tokens - self._seen.output_tokens,
            cache_read_tokens=now.cache_read_tokens - self._seen.cache_read_tokens,
            cache_write_tokens=now.cache_write_tokens - self._seen.cache_write_tokens,
        )
        self._seen = now
        if last.total_tokens <= 0:
            return None
        cost = agent.cost_usd()
        return UsageUpdate(
            session_update="usage_update",
            used=last.total_tokens,
            size=agent.profile().limits.context_window,
            cost=Cost(amount=cost, currency="USD") if cost is not None else None,
        )


def open_session(
    client: Client,
    template: Options,
    environ: dict[str, str],
    cwd: str,
    servers: Sequence[Any] | None,
    resume: str | None = None,
) -> EditorSession:
    """Build the agent for ``cwd`` (resuming ``resume``), as ``agent`` itself starts one.

    Raises:
        RequestError: ``cwd`` is not an absolute directory, or the session cannot start.
    """
    workspace = Path(cwd)
    if not workspace.is_absolute() or not workspace.is_dir():
        raise RequestError.invalid_params({"cwd": f"{cwd!r} is not an absolute directory path"})
    options = replace(template, workspace=workspace, resume=resume, continue_latest=False)
    try:
        started = boot(options, environ)
    except SetupError as error:
        raise RequestError(SETUP_FAILED, str(error), {"cwd": cwd}) from None
    config, skipped = with_client_servers(started.config, servers or ())
    ids: list[str] = []

    async def send(update: Update) -> None:
        await client.session_update(session_id=ids[0], update=update)

    async def ask(tool_call: Any, options: Any) -> Any:
        return await client.request_permission(
            session_id=ids[0], tool_call=tool_call, options=options
        )

    meter = ContextMeter()
    face = EditorFace(Outbox(send), workspace, meter)
    approver = EditorApprover(ask, face)
    try:
        agent = build_agent(
            config,
            options,
            face=face,
            approver=approver,
            environ=started.environ,
            redactor=started.redactor,
        )
    except SetupError as error:
        raise RequestError(SETUP_FAILED, str(error), {"cwd": cwd}) from None
    ids.append(agent.session_id)
    if agent.permissions is not None:
        approver.remember = agent.permissions.remember
    meter.agent = agent
    notices = [notice.text for notice in agent.notices]
    notices += [event.describe() for event in agent.recorded if isinstance(event, WorkspaceMoved)]
    notices += [*agent.resume_notices(), *skipped]
    if (held := started.trust.held) is not None:
        notices.append(f"{held.describe()}. Not applied: run `agent trust` in {cwd} to allow it.")
    return EditorSession(agent=agent, face=face, approver=approver, start_notices=notices)


def with_client_servers(config: Config, servers: Sequence[Any]) -> tuple[Config, list[str]]:
    """``config`` with the client's MCP servers added to ours (same supervision, same
    sandbox); the notices for those that cannot be added."""
    added: dict[str, McpServerSettings] = {}
    skipped: list[str] = []
    for server in servers:
        name = server.name if server.name not in config.mcp_servers else f"editor-{server.name}"
        try:
            if isinstance(server, McpServerStdio):
                env = {variable.name: variable.value for variable in server.env}
                added[name] = McpServerSettings(command=server.command, args=server.args, env=env)
            elif isinstance(server, HttpMcpServer):
                headers = {header.name: header.value for header in server.headers}
                added[name] = McpServerSettings(url=server.url, headers=headers)
            else:
                kind = getattr(server, "type", "unknown")
                skipped.append(f"MCP server {server.name}: {kind} servers are not supported.")
        except ValueError as error:
            skipped.append(f"MCP server {server.name} left out: {error}")
    if not added:
        return config, skipped
    return config.model_copy(update={"mcp_servers": {**config.mcp_servers, **added}}), skipped


def prompt_parts(blocks: Sequence[Any]) -> tuple[str, list[ImageBlock]]:
    """The person's prompt as the engine takes it: text, with embedded files as context, and
    the images it carries (checked and scaled as ``@shot.png`` would be; decoding takes a
    moment, so call it off the event loop).

    Raises:
        RequestError: a block this agent did not advertise (audio), an image that is not valid
            base64 or not a PNG, JPEG, GIF or WebP, or nothing at all to send.
    """
    parts: list[str] = []
    images: list[ImageBlock] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{block.uri}")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'<context uri="{resource.uri}">\n{resource.text}\n</context>')
            else:
                parts.append(f"@{resource.uri} (binary, not included)")
        elif isinstance(block, ImageContentBlock):
            images.append(_image(block, len(images) + 1))
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise RequestError.invalid_params(
                {"prompt": f"{kind} content is not supported (promptCapabilities says so)"}
            )
    text = "\n\n".join(part for part in parts if part)
    if not text.strip() and not images:
        raise RequestError.invalid_params({"prompt": "the prompt is empty"})
    if not text.strip():  # images alone: the vendors refuse a message with empty text
        text = " ".join(f"[{image.name}]" for image in images)
    return text, images


def _image(block: ImageContentBlock, number: int) -> ImageBlock:
    name = (block.uri or f"image {number}")[:200]
    try:
        data = base64.b64decode(block.data, validate=True)
    except binascii.Error:
        raise RequestError.invalid_params({"prompt": f"{name}: not valid base64"}) from None
    try:
        return image_from_bytes(data, name)
    except ImageError as error:
        raise RequestError.invalid_params({"prompt": error.message}) from None
