"""The one wiring point: builds providers, recovery, tools, the session and the loop.

Everything else receives its collaborators as arguments; only this module constructs them.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import structlog

from agent.engine.build import EngineParts, build_engine, seen_by
from agent.engine.child_requests import told_for_children
from agent.engine.face import Face, Faces
from agent.engine.instructions import NearestInstructions
from agent.engine.plan_note import PlanNote
from agent.engine.system_prompt import build_system_prompt
from agent.engine.tool_ids import ToolCallIds
from agent.engine.turn import TurnRecoveryPolicy
from agent.hooks import Hooks
from agent.permissions import PermissionCheck, ProjectRules
from agent.permissions.masks import denied_patterns
from agent.permissions.modes import Modes
from agent.permissions.plan import PlanAwareSandbox, plan_guard_note
from agent.session import Agent
from agent.setup.child_models import ChildModels
from agent.setup.command_env import command_env
from agent.setup.config import Config, agent_home
from agent.setup.home import prune_undo_copies, scratch_dir
from agent.setup.logs import keeps
from agent.setup.mcp_link import McpLink
from agent.setup.model_chain import EMBEDDED_NOTICE, build_chain, embedded_default
from agent.setup.parts import Parts
from agent.setup.profiles import CurrentModel, Profiles
from agent.setup.session_start import moved_workspace, naming_the_resumed_model, open_session
from agent.setup.skill_link import SkillLink
from agent.setup.startup import Options, SetupError
from agent.setup.web_link import web_search_tool
from agent.subagents import (
    AgentCatalog,
    ChildEdits,
    ChildParts,
    ChildResults,
    TaskTool,
    settle_unfinished,
)
from agent.telemetry import start_recorder, telemetry_wanted
from compaction import Compactor
from providers import Event, EventBus, EventSink, Notice, RequestKind, Usage
from providers.chaos import ChaosPlan, ChaosSpec, chaos_start_notice
from recovery import FallbackActivated, ModelRestored, RecoveringProvider
from recovery.fleet import Fleet, open_store
from recovery.usage import UsageListener
from sessions import Redactor, SessionStore, SessionWriter
from tools import Approver, CheckpointRecorded, ToolStarted, file_in_workspace
from tools.attempts import run_tool
from tools.background import BackgroundShells, lost_commands
from tools.base import Tool
from tools.builtin import builtin_tools
from tools.chaos import ToolChaos
from tools.guard.sandbox import Sandbox
from tools.hooks import BeforeToolHook
from tools.saved_output import prune_saved_outputs
from tools.todos import last_todos
from tools.web import WebFetch

__all__ = ["Agent", "build_agent"]

log = structlog.get_logger("agent.app")


def build_agent(
    config: Config,
    options: Options,
    *,
    face: Face,
    approver: Approver | None,
    environ: Mapping[str, str],
    redactor: Redactor,
    previous: Agent | None = None,
) -> Agent:
    """Wire one agent for ``options``: its session, model chain, recovery, tools and loop.

    ``face`` hears everything the agent does (`agent.engine.face.Face`). ``redactor``: the
    one that hides this configuration's secrets (`agent.setup.startup.Started.redactor`),
    used by everything the agent keeps or shows. ``previous``: the
    agent this one replaces in the same REPL (``/clear``, ``/resume``); its running MCP
    servers are shared, not started again (`McpLink`).

    Raises:
        SetupError: something the person must change first; the message says what.
    """
    notices: list[Notice] = []
    embedded = embedded_default(config, environ)
    if embedded is not None:
        config = embedded
        notices.append(Notice(text=EMBEDDED_NOTICE, level="note"))
    profiles = Profiles(config)
    workspace = options.workspace
    home = agent_home(environ)
    events = EventBus()
    recorded: list[Event] = []
    events.subscribe(recorded.append)
    events.subscribe(face.on_event)
    events.subscribe(_log_event)
    store = SessionStore(
        home,
        redactor=redactor,
        fsync=config.sessions.fsync,
        hash_limit=config.sessions.hash_limit_bytes,
        resolve_path=partial(file_in_workspace, workspace),
    )
    chaos = ChaosPlan(ChaosSpec.parse(config.recovery.chaos)) if config.recovery.chaos else None
    if chaos is not None:
        notices.append(Notice(text=chaos_start_notice(chaos.spec), level="warning"))
    try:
        chain = build_chain(config, environ, chaos, events)
    except SetupError as error:
        raise SetupError(naming_the_resumed_model(str(error), store, options)) from None
    loaded, session = open_session(store, options, config.model_chain())
    # As configured; a REPL's new agent (/clear, /resume) keeps the modes the person left.
    was = previous.permissions if previous is not None else None
    modes = (
        was.modes.carried_on(events)
        if was is not None
        else Modes(config.approval, config.plan_mode, emit=events)
    )
    hooks: Hooks | None = None
    if config.hooks:
        hooks = Hooks(
            config.hooks,
            workspace=workspace,
            session_id=session.id,
            transcript_path=session.path,
            modes=modes,
            events=events,
            environ=environ,
        )
        events.subscribe(hooks.on_event)
        face = Faces([face, hooks])
    events.subscribe(persisting(session, workspace))
    if (moved := moved_workspace(loaded, workspace)) is not None:
        events(moved)  # every face says it, before anything else happens here
    shared = open_store(
        config.recovery.shared, home / "recovery", lambda text: events(Notice(text=text))
    )
    fleet = Fleet(shared, config.recovery)
    childs = told_for_children(events)  # a child's request's retries are the child's
    provider = RecoveringProvider(chain, settings=config.recovery, events=childs, fleet=fleet)
    provider.usage.subscribe(saving_usage(session))
    now = CurrentModel(profiles, provider)
    if telemetry_wanted(config.telemetry.enabled, environ) and (
        recorder := start_recorder(
            environ,
            session_id=session.id,
            model=now.name,
            redact=redactor.text,
            notify=lambda text: notices.append(Notice(text=text)),
        )
    ):
        events.subscribe(recorder.on_event)
        provider.failures.subscribe(recorder.on_failure)
        provider.usage.subscribe_answers(recorder.on_answer)
        face = Faces([face, recorder])
    models = ChildModels(config, environ, session=provider, events=events, fleet=fleet, chaos=chaos)
    side, side_notice = models.side()
    notices += [Notice(text=side_notice)] if side_notice else []
    search, search_notice = web_search_tool(config, environ, side)
    notices += [Notice(text=search_notice)] if search_notice else []
    web: list[Tool[Any]] = [WebFetch(side), *([search] if search else [])]
    # The workspace files these run are protected (tools.guard.protected).
    runs = [hook.command for entries in config.hooks.values() for m in entries for hook in m.hooks]
    runs += [
        shlex.join([server.command, *server.args])
        for server in config.mcp_servers.values()
        if server.command
    ]
    person_home = Path(environ.get("HOME", "~")).expanduser()
    permissions = PermissionCheck(
        config.permissions,
        ProjectRules(home, workspace),
        workspace=workspace,
        home=person_home,
        modes=modes,
        granted=was.granted if was is not None else (),
    )
    sandbox = replace(
        Sandbox.create(
            config.sandbox,
            scratch=scratch_dir(home),
            hook_commands=tuple(runs),
            env=command_env(config),
        ),
        # Commands and MCP servers alike: deny rules' paths are masked in their namespaces.
        denied=lambda: denied_patterns(permissions.rules, workspace, person_home),
    )
    if notice := sandbox.notice():
        notices.append(Notice(text=notice))
    mcp = McpLink(
        workspace=workspace,
        home=home,
        environ=environ,
        sandbox=sandbox,
        redact=redactor.text,
        show=lambda text: events(Notice(text=text)),
        emit=events,
    )
    mcp.start(config.mcp_servers, previous.mcp if previous is not None else None)
    checkpoints = home / "checkpoints"
    notices += [Notice(text=warning) for warning in permissions.warnings]
    if permissions.mode_note is not None and previous is None:
        notices.append(Notice(text=permissions.mode_note))
    if config.plan_mode and previous is None and (note := plan_guard_note(sandbox)):
        notices.append(Notice(text=note))
    skills = SkillLink(workspace, person_home, home, permissions, events)
    events.subscribe(skills.on_event)
    notices += skills.notices()
    shells = BackgroundShells(events, lost_commands(loaded.events) if loaded else None)
    if lost := shells.lost:
        notices.append(Notice(text=f"Background commands stopped with the last run: {lost}"))
    # After the other hooks, so the rules also see an input a hook rewrote.
    before_tool: list[BeforeToolHook] = [permissions]
    if hooks is not None:
        before_tool.insert(0, hooks.before_tool)
    guarded = PlanAwareSandbox.around(sandbox, lambda: modes.plan_mode)
    system = build_system_prompt(workspace)
    # What this agent's engine and its children's are built from (`build_engine`).
    base = EngineParts(
        workspace=workspace,
        home=person_home,
        provider=provider,
        system=system,
        tools=builtin_tools(guarded, shells),
        more_tools=lambda: [*web, *mcp.tools()],
        settings=now.tool_settings,
        approval=lambda: modes.approval,
        approver=approver,
        hooks=before_tool,
        sandbox=guarded,
        redact=redactor.text,
        read_denied=lambda path: permissions.refuses_read(path) is not None,
        checkpoints=checkpoints / session.id,
        outputs=home / "outputs" / session.id,
        events=events,
        face=face,
        max_steps=now.max_steps,
        max_tokens=config.max_tokens,
    )
    catalog = AgentCatalog(workspace, home, person_home)
    notices += [Notice(text=text) for text in catalog.notices()]
    children = ChildParts(
        parent=base,
        tools=partial(builtin_tools, guarded, shells),
        more_tools=base.more_tools,
        system=system,
        after_tool=hooks.on_tool_result if hooks is not None else None,
        store=store,
        parent_id=session.id,
        model_chain=[str(ref) for ref in config.model_chain()],
        checkpoints=checkpoints / session.id / "subagents",
        max_turns=config.subagents.max_turns,
        model_for=models.provider,
        approval_for=catalog.approval,
        edits=(child_edits := ChildEdits()),  # /undo puts back the children's edits too
    )
    task = TaskTool(children, config.subagents.max_concurrent, catalog.kinds)
    finished = ChildResults()  # a stopped child's call is answered with what it did
    events.subscribe(finished.on_event)
    turn_recovery = TurnRecoveryPolicy(
        compactor=Compactor(provider, now.limits, config.compaction, events=events),
        log=session,
        events=events,
        max_continuations=config.compaction.max_output_recovery_limit,
        model=now.name,
    )
    history = settle_unfinished(store, loaded) if loaded else []
    plan = PlanNote(last_todos(loaded.events), history) if loaded else PlanNote()
    events.subscribe(plan.on_event)  # the model hears its plan again after a compaction
    skilled = skills.prompt_section(now.tool_settings().enabled)
    own = replace(
        base,
        system=system + skilled,
        tools=[*base.tools, task],
        more_tools=lambda: [*web, *mcp.tools(), *skills.tools()],
        turn_timeout=config.turn_timeout,
        runner=ToolChaos(chaos) if chaos and chaos.injects_tool_faults else run_tool,
    )
    try:
        prune_undo_copies(home, store.directory, session.id, config.tools)
        max_age = config.tools.checkpoint_max_age_days * 86_400
        prune_saved_outputs(home / "outputs", keep=session.id, max_age=max_age)
        engine = build_engine(
            own,
            transcript=session,
            history=history,
            recovery=turn_recovery,
            instructions=NearestInstructions(workspace),
            tool_ids=ToolCallIds.of(loaded.messages if loaded else ()),
            tool_news=plan.with_news(
                lambda specs: joined_news(mcp.tool_news(specs), shells.news())
            ),
            together=TaskTool.runs_together,
            settled=finished.result_for,
            turns_before=len(loaded.turn_ends) if loaded is not None else 0,
            files_seen=seen_by(session),
        )
    except OSError as error:
        mcp.close()
        session.close() if loaded is not None else session.discard()
        raise SetupError(
            f"Cannot keep undo checkpoints in {checkpoints}: {error.strerror or error}. "
            "Check that AGENT_HOME is a writable directory."
        ) from None
    tools, loop = engine.executor, engine.loop
    parts = Parts(
        config=config,
        profiles=profiles,
        environ=environ,
        workspace=workspace,
        home=home,
        redactor=redactor,
        events=events,
        recorded=recorded,
        store=store,
        loaded=loaded,
        session=session,
        fleet=fleet,
        provider=provider,
        sandbox=sandbox,
        mcp=mcp,
        tools=tools,
        shells=shells,
        turn_recovery=turn_recovery,
        loop=loop,
        hooks=hooks,
        notices=notices,
        permissions=permissions,
        chaos=chaos,
        subagents=catalog,
        child_edits=child_edits,
        child_models=models,
    )
    return Agent(parts)


def joined_news(*notes: str | None) -> str | None:
    """What the model hears with a request (MCP tools that changed, commands that ended)."""
    return "\n".join(note for note in notes if note) or None


def persisting(session: SessionWriter, workspace: Path) -> EventSink:
    """The event subscriber that keeps every event, model switch and checkpoint in the
    session log."""

    def persist(event: Event) -> None:
        if session.closed or (isinstance(event, ToolStarted) and event.kind == "read"):
            return  # a read's start changes nothing a resume must know of: one line less
        session.append_event(event)
        if isinstance(event, FallbackActivated):
            sticky = event.stays_because is not None
            session.append_model_switch(event.to_model, sticky=sticky, reason=event.reason)
        elif isinstance(event, ModelRestored):
            session.append_model_switch(event.model, sticky=False, reason="primary restored")
        elif isinstance(event, CheckpointRecorded):
            path = workspace / event.path
            session.append_checkpoint(
                path, existed_before=event.existed_before, content_hash=None, turn=event.turn
            )

    return persist


def saving_usage(session: SessionWriter) -> UsageListener:
    """Keeps each answer's usage in the session log, with what its request was for."""

    def save(kind: RequestKind, model: str, usage: Usage) -> None:
        if not session.closed:
            session.append_usage(usage, model, kind.value)

    return save


def _log_event(event: Event) -> None:
    if keeps(event.log_level):  # a line the log would drop is not built either
        log.log(event.log_level, "event", **event.model_dump(mode="json"))
