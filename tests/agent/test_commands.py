"""Slash commands against a small fake host: no terminal, no agent, no store."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console, RenderableType
from rich.text import Text

from agent.terminal.commands import SlashCommands, UsageSoFar
from providers import ErrorKind, Event, LlmError, Usage
from providers.models import ModelRef
from recovery import DetourView, RecoveryStats
from sessions import SessionSummary
from tools import UndoPreview, UndoReport
from tools.background import BackgroundShells


def _summary(session_id: str, prompt: str) -> SessionSummary:
    return SessionSummary(
        id=session_id,
        path=Path(f"/nonexistent/{session_id}.jsonl"),
        cwd="/nonexistent",
        created=0.0,
        updated=0.0,
        first_prompt=prompt,
        message_count=2,
        ended="done",
    )


@dataclass
class FakeHost:
    """Implements `CommandHost`; records what the commands asked of it."""

    workspace: Path = Path("/nonexistent")
    console: Console = field(
        default_factory=lambda: Console(file=io.StringIO(), width=100, no_color=True)
    )
    answers: list[str] = field(default_factory=list)
    chain: list[str] = field(default_factory=lambda: ["anthropic:claude-test"])
    sessions: list[SessionSummary] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    detour: DetourView | None = None
    broken: Exception | None = None
    """Raised by /compact and /undo, as a host that fails unexpectedly would."""
    shells: BackgroundShells = field(default_factory=BackgroundShells)

    @property
    def session_id(self) -> str:
        return "01current"

    def show(self, renderable: RenderableType) -> None:
        self.console.print(renderable)

    @property
    def output(self) -> str:
        file = self.console.file
        assert isinstance(file, io.StringIO)
        return file.getvalue()

    async def ask(self, question: str) -> str:
        self.calls.append(f"ask {question}")
        return self.answers.pop(0) if self.answers else ""

    async def compact(self, focus: str | None) -> None:
        self.calls.append(f"compact {focus}")
        if self.broken is not None:
            raise self.broken

    def undo_last_turn(self) -> UndoReport:
        if self.broken is not None:
            raise self.broken
        return UndoReport(turn=3, restored=[Path("a.py")])

    def undo_preview(self) -> UndoPreview | None:
        return UndoPreview(turn=3, turns_ago=0, files=[("a.py", False)])

    def model_chain(self) -> list[str]:
        return list(self.chain)

    def current_model(self) -> str:
        return self.chain[0]

    def switch_model(self, ref: ModelRef) -> None:
        if ref.provider == "nokey":
            raise ValueError("No API key for nokey:model.")
        self.chain.insert(0, str(ref))

    def recovery_stats(self) -> tuple[RecoveryStats, Sequence[Event], str]:
        stats = RecoveryStats(
            current=self.chain[0],
            requests=4,
            retries=2,
            fallbacks=0,
            escalations=0,
            stream_restarts=0,
            budget_exhausted=0,
            circuits_opened=0,
            gave_up=0,
            waited=1.5,
            budget_tokens=10.0,
            open_circuits=(),
            detour=self.detour,
            time_on_models=(("anthropic:claude-test", 300.0), ("openai:gpt-test", 65.0)),
        )
        return stats, [], "workspace-write (Landlock)"

    def usage(self) -> UsageSoFar:
        return UsageSoFar(
            this_run=Usage(input_tokens=100, output_tokens=10),
            before=Usage(input_tokens=1_000, output_tokens=100),
            by_model={"anthropic:claude-test": Usage(input_tokens=1_100, output_tokens=110)},
        )

    def saved_sessions(self) -> list[SessionSummary]:
        return list(self.sessions)

    def new_session(self) -> None:
        self.calls.append("new_session")

    def resume(self, target: str) -> None:
        self.calls.append(f"resume {target}")

    def todo_list(self) -> RenderableType:
        self.calls.append("todo_list")
        return Text("the plan")

    def background_shells(self) -> BackgroundShells:
        return self.shells


async def test_help_lists_every_command() -> None:
    host = FakeHost()
    commands = SlashCommands(host)

    assert await commands.run("/help")

    for info in commands.infos():
        assert info.name in host.output


async def test_an_unknown_command_suggests_the_closest() -> None:
    host = FakeHost()

    assert await SlashCommands(host).run("/resme")

    assert "Unknown command /resme. Did you mean /resume?" in host.output


async def test_exit_ends_the_repl() -> None:
    assert not await SlashCommands(FakeHost()).run("/exit")


async def test_model_switches_or_says_why_it_cannot() -> None:
    host = FakeHost()
    commands = SlashCommands(host)

    await commands.run("/model openai:gpt-test")
    await commands.run("/model nokey:model")
    await commands.run("/model not a ref")

    assert "Model: openai:gpt-test  (chain: openai:gpt-test → anthropic:claude-test)" in host.output
    assert "No API key for nokey:model." in host.output
    assert host.chain == ["openai:gpt-test", "anthropic:claude-test"]


async def test_model_and_stats_say_when_the_session_runs_on_a_fallback() -> None:
    detour = DetourView(
        primary="anthropic:claude-test",
        fallback="openai:gpt-test",
        since_ago=60.0,
        reason="3 overloads in a row",
        next_trial_in=30.0,
        stays_because=None,
    )
    host = FakeHost(detour=detour)
    commands = SlashCommands(host)

    await commands.run("/model")
    await commands.run("/stats")

    shown = " ".join(host.output.split())
    assert "on fallback openai:gpt-test since " in shown
    assert "3 overloads in a row), next try of anthropic:claude-test at" in shown
    assert "anthropic:claude-test 5m · openai:gpt-test 1m" in host.output


async def test_resume_picks_from_the_other_saved_sessions() -> None:
    host = FakeHost(
        sessions=[_summary("01current", "this one"), _summary("01older", "fix\nthe parser")],
        answers=["1"],
    )

    await SlashCommands(host).run("/resume")

    assert "fix the parser" in host.output
    assert "this one" not in host.output
    assert host.calls[-1] == "resume 01older"


async def test_resume_with_an_id_or_nothing_to_pick() -> None:
    host = FakeHost()
    commands = SlashCommands(host)

    await commands.run("/resume 01abc")
    await commands.run("/resume")

    assert host.calls == ["resume 01abc"]
    assert "No other saved sessions." in host.output


async def test_undo_compact_clear_cost_and_stats_reach_the_host() -> None:
    host = FakeHost()
    commands = SlashCommands(host)

    for line in ("/undo", "/compact the parser", "/compact", "/clear", "/cost", "/stats"):
        assert await commands.run(line)

    assert "Undid turn 3: 1 file put back." in host.output
    assert "a.py: restored" in host.output
    assert host.calls == ["compact the parser", "compact None", "new_session"]
    assert "session                   1.1k     110" in host.output  # before + this run
    assert "time spent waiting             1.5s" in host.output
    assert "workspace-write (Landlock)" in host.output


async def test_a_failing_command_says_so_in_one_line_and_the_repl_goes_on() -> None:
    down = LlmError(ErrorKind.CONNECTION, "connection refused", provider="llamacpp", model="m")
    host = FakeHost(broken=down)
    commands = SlashCommands(host)

    assert await commands.run("/compact")
    host.broken = RuntimeError("disk on fire")
    assert await commands.run("/undo")

    lines = host.output.splitlines()
    assert lines[0] == "[connection] llamacpp:m: connection refused"
    assert lines[1].startswith("/undo failed: RuntimeError('disk on fire')")
    assert "Traceback" not in host.output


async def test_todos_shows_the_hosts_plan() -> None:
    host = FakeHost()

    assert await SlashCommands(host).run("/todos")

    assert host.calls == ["todo_list"]
    assert "the plan" in host.output


async def test_bashes_lists_the_background_commands_and_stops_one(workspace: Path) -> None:
    host = FakeHost()
    commands = SlashCommands(host)
    assert await commands.run("/bashes")
    assert "No background commands in this session." in host.output
    shells, events = host.shells, []
    # Plain argv, no sandbox: the command only sleeps, in the decoy workspace.
    shell = shells.start(
        "sleep 300.83", ["sleep", "300.83"], cwd=workspace, env={}, emit=events.append
    )
    assert await commands.run("/bashes")
    assert "bash_1  running" in host.output
    assert "sleep 300.83" in host.output
    assert await commands.run("/bashes kill bash_9")
    assert "No background command 'bash_9' (started: bash_1)." in host.output
    assert await commands.run("/bashes stop")
    assert "Usage: /bashes lists" in host.output
    assert await commands.run("/bashes kill bash_1")
    assert "bash_1 stopped by /bashes." in host.output
    assert shell.process.poll() is not None
    assert [event.type for event in events] == ["background_started", "background_ended"]
