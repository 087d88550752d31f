"""An editor for the tests: the ACP SDK's own client side, driving ``agent acp`` over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.fakes.cli import MODELS, agent_command, agent_env
from tests.fakes.llm_server import FakeLlmServer


@dataclass
class Editor:
    """What an editor hears (every update, every permission question) and how it answers."""

    answers: list[str] = field(default_factory=list)
    """Option ids to answer permission questions with, in order (none left: cancelled)."""
    hold: asyncio.Event | None = None
    """With no answers left, wait for this before answering "cancelled" (as after a cancel)."""
    updates: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update.model_dump(by_alias=True, exclude_none=True)))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.questions.append(
            {
                "sessionId": session_id,
                "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True),
                "options": [option.kind for option in options],
            }
        )
        if not self.answers:
            if self.hold is not None:
                await self.hold.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        choice = self.answers.pop(0)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def first(self, kind: str, timeout: float = 30) -> dict[str, Any]:
        """The first update of ``kind``, once it has come."""
        async with asyncio.timeout(timeout):
            while not (found := self.of_kind(kind)):
                await asyncio.sleep(0.05)
        return found[0]

    def kinds(self) -> list[str]:
        return [update["sessionUpdate"] for _, update in self.updates]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [update for _, update in self.updates if update["sessionUpdate"] == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(update["content"].get("text", "") for update in self.of_kind(kind))


@dataclass
class Running:
    """``agent acp`` as a subprocess, with the editor's connection to it."""

    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    editor: Editor
    workspace: Path

    async def start(self) -> str:
        """initialize and session/new; the new session's id."""
        await self.conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await self.conn.new_session(cwd=str(self.workspace), mcp_servers=[])
        return session.session_id

    async def ask(self, session_id: str, text: str) -> PromptResponse:
        return await asyncio.wait_for(
            self.conn.prompt(session_id=session_id, prompt=[text_block(text)]), 60
        )


@contextlib.asynccontextmanager
async def editor_session(
    server: FakeLlmServer,
    workspace: Path,
    home: Path,
    *flags: str,
    editor: Editor | None = None,
) -> AsyncIterator[Running]:
    """Start ``agent --model anthropic:claude-test FLAGS acp`` in ``workspace``; its stderr
    goes to ``home/acp-stderr.log``."""
    editor = editor or Editor()
    command = agent_command("--model", MODELS["anthropic"], *flags, "acp")
    with (home / "acp-stderr.log").open("ab") as stderr:
        async with (
            spawn_agent_process(
                cast(Client, editor),  # answers what the tests need; the SDK answers the rest
                command[0],
                *command[1:],
                env=agent_env(server, home),
                cwd=workspace,
                transport_kwargs={"stderr": stderr.fileno()},
            ) as (conn, process)
        ):
            yield Running(conn, process, editor, workspace)


def raw_agent(
    server: FakeLlmServer, workspace: Path, home: Path, *flags: str
) -> subprocess.Popen[str]:
    """``agent --model anthropic:claude-test FLAGS acp`` with plain pipes, for messages no SDK
    would send."""
    return subprocess.Popen(
        agent_command("--model", MODELS["anthropic"], *flags, "acp"),
        cwd=workspace,
        env=agent_env(server, home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
