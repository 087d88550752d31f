"""What `agent.app.build_agent` wired together for one session: the parts of an `Agent`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent.engine.loop import AgentLoop
from agent.engine.turn import TurnRecoveryPolicy
from agent.hooks import Hooks
from agent.permissions import PermissionCheck
from agent.setup.child_models import ChildModels
from agent.setup.config import Config
from agent.setup.mcp_link import McpLink
from agent.setup.profiles import Profiles
from agent.subagents import AgentCatalog, ChildEdits
from providers import Event, EventBus, Notice
from providers.chaos import ChaosPlan
from recovery import RecoveringProvider
from recovery.fleet import Fleet
from sessions import LoadedSession, Redactor, SessionStore, SessionWriter
from tools import ToolExecutor
from tools.background import BackgroundShells
from tools.guard.sandbox import Sandbox


@dataclass(frozen=True)
class Parts:
    """What `agent.app.build_agent` wired together for one session."""

    config: Config
    profiles: Profiles
    environ: Mapping[str, str]
    workspace: Path
    home: Path
    redactor: Redactor
    events: EventBus
    recorded: list[Event]
    store: SessionStore
    loaded: LoadedSession | None
    session: SessionWriter
    fleet: Fleet
    provider: RecoveringProvider
    sandbox: Sandbox
    mcp: McpLink
    tools: ToolExecutor
    shells: BackgroundShells
    turn_recovery: TurnRecoveryPolicy
    loop: AgentLoop
    hooks: Hooks | None
    notices: list[Notice]
    permissions: PermissionCheck | None = None
    chaos: ChaosPlan | None = None
    subagents: AgentCatalog | None = None
    child_edits: ChildEdits | None = None
    child_models: ChildModels | None = None
