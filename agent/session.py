"""One running agent: the session a face talks to — turns, model switches, undo, close.

`agent.app.build_agent` builds its parts and hands them in; this class only uses them. Faces
(the REPL, ``-p``, the scripting faces) read and ask through its public methods, never
through its parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import structlog

from agent.engine.outcome import TurnResult, TurnStatus
from agent.hooks.turns import run_hooked_turn
from agent.setup.doctor import Finding, diagnose
from agent.setup.model_chain import create_provider
from agent.setup.parts import Parts
from agent.setup.session_words import resume_notices, save_failure
from agent.setup.startup import SetupError
from agent.subagents import ChildEdits
from agent.subagents.undo import preview, undo_last_turn
from providers import Event, ImageBlock, Message, Notice, Usage
from providers.lazy import LazyProvider
from providers.models import ModelRef
from providers.profiles import ModelProfile, cost_of
from recovery import FallbackActivated, ModelTarget, RecoveryStats
from recovery.usage import merged_usage
from sessions import (
    SessionError,
    SessionSummary,
    is_shell_run,
)
from tools import UndoPreview, UndoReport

log = structlog.get_logger("agent.session")


class Agent:
    """One running agent: a session, its model chain, tools and loop."""

    def __init__(self, parts: Parts) -> None:
        self.config = parts.config
        self.profiles = parts.profiles
        """Each model's limits, tiny-model settings and price, read when they are needed."""
        self.environ = parts.environ
        self.workspace = parts.workspace
        self.home = parts.home
        self.redactor = parts.redactor
        self.events = parts.events
        self.recorded = parts.recorded
        self.store = parts.store
        self.loaded = parts.loaded
        self.session = parts.session
        self.fleet = parts.fleet
        self.provider = parts.provider
        self.sandbox = parts.sandbox
        self.mcp = parts.mcp
        self.tools = parts.tools
        self.shells = parts.shells
        self.turn_recovery = parts.turn_recovery
        self.loop = parts.loop
        self.hooks = parts.hooks
        self.permissions = parts.permissions
        """The permission rules in force; the REPL's approval prompt adds to them."""
        self.notices = parts.notices
        """What the person should know about this start; the faces show them once."""
        self.chaos = parts.chaos
        self.subagents = parts.subagents
        self.child_edits = parts.child_edits or ChildEdits()
        self.child_models = parts.child_models
        self.turns_started = 0
        self.model_notice: str | None = None
        self.attached: list[ImageBlock] = []
        """Images to send with the next prompt (`attach_images`)."""
        self.changed_files_note = self.loaded.changed_files_note if self.loaded else None
        if self.loaded is not None:
            self._restore_model(self.loaded.model_state.current)
        if tiny_notice := self.profiles.notice(self.provider.current):
            self.notices.append(Notice(text=tiny_notice, level="info"))
        self.events.subscribe(self._notice_on_fallback)

    def _notice_on_fallback(self, event: Event) -> None:
        """Say so when the chain falls back to a tiny model: from the next request on it gets
        the tiny-model tools (the request that failed over was built already)."""
        if isinstance(event, FallbackActivated) and (notice := self.tiny_notice()):
            self.events(Notice(text=notice, level="info"))

    def _restore_model(self, current: str) -> None:
        """Continue on the model the session last used, or say why it cannot be used here.

        A session started where ``agent.yaml`` defines a provider may be resumed elsewhere:
        the session goes on with this directory's model, and the person is told what to add.
        """
        try:
            self._switch_to(ModelRef.parse(current))
        except (ValueError, SetupError) as error:
            log.info("resumed_model_unavailable", model=current, reason=str(error))
            started = self.loaded.header.cwd if self.loaded is not None else None
            where = f" (started in {started})" if started else ""
            self.model_notice = (
                f"This session used {current}{where}, which cannot be used here. {error} "
                f"Continuing with {self.provider.current}; /model picks another."
            )

    def use_model(self, ref: ModelRef) -> str | None:
        """Switch to ``ref`` for the rest of the session, building it if it is not in the chain;
        a notice when it is a tiny model (see `tiny_notice`).

        Raises:
            SetupError: ``ref`` cannot be used (no key for its provider, say).
            SessionError: the switch cannot be recorded.
        """
        self._switch_to(ref)
        self.session.append_model_switch(str(ref), sticky=True, reason="/model")
        return self.tiny_notice()

    def _switch_to(self, ref: ModelRef) -> None:
        if all(target.ref != ref for target in self.provider.chain):
            adapter = create_provider(self.config, ref, self.environ, emit=self.events)
            self.provider.switch_to(
                ModelTarget(ref=ref, provider=adapter, limits=self.profiles.of(ref).limits)
            )
        else:
            self.provider.switch_to(ref)

    def profile(self) -> ModelProfile:
        """The current model's profile; the loop, tools and compaction read it per request."""
        return self.profiles.of(self.provider.current)

    def tiny_notice(self) -> str | None:
        """What applies to the current model if tiny: few tools, short turns (`setup.profiles`)."""
        return self.profiles.notice(self.provider.current)

    def warm_up(self) -> None:
        """Start building the current model's adapter (its SDK import) in the background."""
        for target in self.provider.chain:
            if target.ref == self.provider.current and isinstance(target.provider, LazyProvider):
                target.provider.warm_up()

    @property
    def session_id(self) -> str:
        return self.session.id

    # What the faces read and ask for. They never reach into the engine's objects.

    @property
    def model(self) -> str:
        """The model requests go to now (a fallback, after a switch)."""
        return str(self.provider.current)

    def models(self) -> list[str]:
        """The model chain, in order."""
        return [str(target.ref) for target in self.provider.chain]

    @property
    def usage(self) -> Usage:
        """Tokens used in this run, by every request: the turns', compaction's."""
        return self.provider.usage.total

    @property
    def api_seconds(self) -> float:
        """Time this run spent waiting for models."""
        return self.loop.api_seconds

    def cost_usd(self) -> float | None:
        """What this run's tokens cost at list prices; None if any model's price is unknown."""
        return cost_of(self.provider.usage.by_model)

    def usage_by_model(self) -> dict[str, Usage]:
        """Tokens per model over the whole session: the saved part and this run."""
        saved = self.loaded.usage_by_model if self.loaded is not None else {}
        return merged_usage(saved, self.provider.usage.by_model)

    def usage_by_purpose(self) -> dict[str, Usage]:
        """Tokens per purpose of the request (turn, compaction, ...) in this run."""
        return dict(self.provider.usage.by_kind)

    async def doctor(self) -> list[Finding]:
        """``/doctor``: keys, each model probed, sandbox layers, MCP servers, offline model."""
        chain, sandbox = list(self.provider.chain), self.sandbox.describe()
        held = self.permissions.warnings if self.permissions is not None else []
        servers, env = self.mcp.statuses, self.sandbox.env  # read after the models' probes
        found = await diagnose(self.config, self.environ, chain, sandbox, servers, held, env)
        return found + (self.subagents.findings() if self.subagents is not None else [])

    def recovery_stats(self) -> RecoveryStats:
        stats = self.provider.stats()
        return self.child_models.counted(stats) if self.child_models is not None else stats

    def redact(self, text: str) -> str:
        """``text`` with every known secret hidden, as sessions and logs have it."""
        return self.redactor.text(text)

    def undo_last_turn(self) -> UndoReport:
        """Put back what the latest turn changed, its sub-agents' edits included."""
        return undo_last_turn(self.tools, self.child_edits)

    def undo_preview(self) -> UndoPreview | None:
        return preview(self.tools, self.child_edits)

    def add_context(self, message: Message) -> None:
        """Keep what the person did between turns (a ``!`` run); it goes with the next prompt."""
        self.loop.add_context(message)

    def saved_sessions(self) -> list[SessionSummary]:
        return self.store.list()

    def describe_start(self) -> dict[str, Any]:
        """What this run starts with, for a script: models, tools, servers, modes."""
        return {
            "session_id": self.session_id,
            "cwd": str(self.workspace),
            "model": self.model,
            "fallback_models": self.models()[1:],
            "tools": [spec.name for spec in self.tools.specs()],
            "mcp_servers": [
                {"name": status.name, "status": status.state.value}
                for status in self.mcp.statuses()
            ],
            "approval": self.config.approval,
            "sandbox": self.config.sandbox.mode,
        }

    @property
    def stopped_mid_turn(self) -> bool:
        """Whether the conversation ends on a user message the model has not answered yet.

        A session resumed after Ctrl-C, a crash or ``kill -9`` mid-turn does; the next turn
        continues it, with the person's new prompt (if any). ``!command`` runs alone wait.
        """
        last = self.loop.messages[-1] if self.loop.messages else None
        return last is not None and last.role == "user" and not is_shell_run(last)

    def attach_images(self, images: Sequence[ImageBlock]) -> str | None:
        """Send ``images`` with the next prompt; or why not (nothing is attached then): the
        current model cannot see (`agent.setup.profiles.sees_images`)."""
        if images and not self.profile().vision:
            return (
                f"{self.model} cannot see images (a local model, or vision: false in its "
                "models: settings); nothing was sent. Pick a model that can (/model, --model)."
            )
        self.attached = [*self.attached, *images]
        return None

    async def run_turn(self, prompt: str | None) -> TurnResult:
        """Run one turn; the session records how it ended.

        A record that cannot be saved (disk full, say) ends the turn as failed, with the
        storage error as its one-sentence ``error``. Hooks (`agent.hooks`) run around it:
        SessionStart before the first, UserPromptSubmit before the prompt is sent (a block
        ends the turn unsent), and Stop once the model answered (a block makes it go on).
        """
        turn = partial(self._turn, images=self.attached)  # the attached images go with it
        self.attached = []
        if self.hooks is None:
            return await turn(prompt)
        return await run_hooked_turn(
            self.hooks,
            turn,
            prompt,
            start=None if self.turns_started else ("resume" if self.loaded else "startup"),
            model=self.model,
            note=self._add_note,
        )

    async def end(self, reason: str = "other") -> None:
        """The session ends (SessionEnd hooks); call before `close`."""
        if self.hooks is not None:
            await self.hooks.session_end(reason)
            await self.hooks.drain()

    def _add_note(self, note: str) -> None:
        """Tell the model ``note`` with the next prompt."""
        previous = self.changed_files_note
        self.changed_files_note = f"{previous}\n\n{note}" if previous else note

    async def _turn(self, prompt: str | None, images: Sequence[ImageBlock] = ()) -> TurnResult:
        self.turns_started += 1
        note, self.changed_files_note = self.changed_files_note, None
        if note and prompt is not None:
            # Tell the model before it relies on what it read earlier.
            prompt = f"{note}\n\n{prompt}"
        elif note:
            self.loop.annotate_last_user_message(note)
        result = TurnResult(status=TurnStatus.FAILED)
        try:
            result = await self.loop.run_turn(prompt, images)
            with self.session.group_commit():  # synced with the turn's last records
                self.session.append_turn_end(result.status.value, result.error)
        except SessionError as error:
            self._end_turn(TurnStatus.FAILED, str(error))
            return replace(
                result, status=TurnStatus.FAILED, error=str(error), usage=self.loop.usage
            )
        return result

    async def compact(self, focus: str | None = None) -> None:
        """``/compact [focus]``: summarise the conversation now."""
        if self.hooks is not None:
            await self.hooks.pre_compact("manual", focus or "")
        view = await self.turn_recovery.compact(
            self.loop.messages, focus=focus, system=self.loop.system, tools=self.tools.specs()
        )
        self.loop.replace_history(view)

    def record_crash(self, message: str) -> None:
        """Record a turn that ended in an unexpected exception (never raises)."""
        self._end_turn(TurnStatus.FAILED, message)

    def interrupted(self) -> None:
        """Record an interrupted turn (the loop has already closed dangling tool calls)."""
        self._end_turn(TurnStatus.INTERRUPTED, "interrupted")

    def _end_turn(self, status: TurnStatus, error: str) -> None:
        # Called while handling another failure, which must stay the one reported.
        try:
            self.session.append_turn_end(status.value, error)
        except SessionError as problem:
            log.warning("turn_end_not_saved", status=status.value, reason=str(problem))

    def close(self) -> None:
        """Stop the MCP servers and release the session (its lock); safe to call twice.

        A new session in which nothing was said is deleted rather than saved.
        """
        self.shells.close()  # while the session is open: it records their ends
        self.mcp.close()
        try:
            self.fleet.flush()  # the last request's release, held back for a next one
        except Exception:  # the shared state's lease frees the slot in the end
            log.warning("fleet_flush_failed", exc_info=True)
        if self.session.closed:
            return
        if self.is_empty:
            self.session.discard()
        else:
            self.session.close()

    @property
    def is_empty(self) -> bool:
        """Whether this is a new session in which nothing ran: no turn, no ``!command``."""
        return self.loaded is None and self.turns_started == 0 and not self.loop.messages

    def resume_notices(self) -> list[str]:
        """What the person should know about a resumed session: repairs and changed files."""
        return resume_notices(self.loaded, self.model_notice)

    @property
    def save_failure(self) -> str | None:
        """What of this session is not safely on disk, and how to recover; None when all is."""
        return save_failure(self.session)

    def resume_hint(self) -> str | None:
        """How to continue this session; None for an empty one, which is not kept. Says
        "Session saved" only when every record was written and synced (`save_failure`)."""
        if self.is_empty:
            return None
        return self.save_failure or f"Session saved. Resume with: agent --resume {self.session_id}"
