"""The loop against a scripted provider and the real tool executor."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import pytest

from agent.engine.loop import AgentLoop
from agent.engine.outcome import TurnStatus
from providers import (
    ChatResponse,
    ErrorKind,
    LlmError,
    Message,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from providers.conversation import is_interrupted_result
from providers.testing import ScriptedProvider, text, tool_call
from tests.fakes.clock import VirtualClock
from tools import ToolExecutor, ToolSettings


def _loop(provider: ScriptedProvider, workspace: Path, **options: object) -> AgentLoop:
    tools = ToolExecutor(
        workspace=workspace, settings=ToolSettings(), approval="full-auto", approver=None
    )
    return AgentLoop(provider=provider, tools=tools, system="sys", **options)  # type: ignore[arg-type]


async def test_tool_results_go_back_to_the_model(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    provider = ScriptedProvider([tool_call("read_file", path="a.txt"), text("It says alpha.")])
    loop = _loop(provider, workspace)

    result = await loop.run_turn("what is in a.txt?")

    assert result.status is TurnStatus.DONE
    assert result.answer == "It says alpha."
    sent = provider.requests[1].messages[-1].tool_results[0]
    assert "alpha" in sent.content
    assert not sent.is_error


async def test_news_about_the_tools_goes_with_the_request_that_offers_them(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    provider = ScriptedProvider([tool_call("read_file", path="a.txt"), text("Done.")])
    offered: list[list[str]] = []

    def news(specs: Sequence[ToolSpec]) -> str | None:
        offered.append([spec.name for spec in specs])
        return "[MCP server 'db' is ready]" if len(offered) == 2 else None

    loop = _loop(provider, workspace, tool_news=news)

    await loop.run_turn("read a.txt")

    first, second = provider.requests
    assert first.messages[-1].text == "read a.txt"
    # After the step's tool results, in the same user message: valid for both vendors.
    results, note = second.messages[-1].content
    assert isinstance(results, ToolResultBlock)
    assert note == TextBlock(text="[MCP server 'db' is ready]")
    assert offered[1] == [spec.name for spec in second.tools]


async def test_the_step_budget_is_asked_for_at_the_start_of_each_turn(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    read = tool_call("read_file", path="a.txt")
    provider = ScriptedProvider([read, text("Done."), read, read])
    budget = [5]  # the current model's, as the agent passes it
    loop = _loop(provider, workspace, max_steps=lambda: budget[0])

    assert (await loop.run_turn("first")).status is TurnStatus.DONE
    budget[0] = 1  # a fallback to a model with a shorter turn
    result = await loop.run_turn("second")

    assert result.status is TurnStatus.MAX_STEPS
    assert result.error is not None
    assert "Stopped after 1 steps" in result.error
    assert loop.max_steps == 1


async def test_provider_failure_ends_the_turn_with_an_actionable_message(workspace: Path) -> None:
    error = LlmError(ErrorKind.AUTH, "invalid x-api-key", status=401, provider="anthropic")
    loop = _loop(ScriptedProvider([error]), workspace)

    result = await loop.run_turn("hi")

    assert result.status is TurnStatus.FAILED
    assert result.error_kind is ErrorKind.AUTH
    assert result.error is not None
    assert "API key" in result.error


async def test_refusal_is_reported_not_treated_as_done(workspace: Path) -> None:
    loop = _loop(ScriptedProvider([text("", stop=StopReason.REFUSAL)]), workspace)
    result = await loop.run_turn("hi")
    assert result.status is TurnStatus.FAILED
    assert result.error_kind is ErrorKind.REFUSAL


async def test_turn_timeout_stops_between_steps(workspace: Path) -> None:
    clock = VirtualClock()

    def slow(request: object) -> object:
        clock.advance(30)
        return tool_call("list_files", pattern="*")

    provider = ScriptedProvider([slow, slow, slow])  # type: ignore[list-item]
    loop = _loop(provider, workspace, turn_timeout=45.0, clock=clock.now)

    result = await loop.run_turn("go")

    assert result.status is TurnStatus.FAILED
    assert result.error is not None
    assert "turn_timeout" in result.error
    assert len(provider.requests) == 2


async def test_cancellation_mid_tool_leaves_every_call_answered(workspace: Path) -> None:
    import asyncio

    provider = ScriptedProvider([tool_call("run_command", command="sleep 30")])
    loop = _loop(provider, workspace)
    task = asyncio.create_task(loop.run_turn("wait"))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    last = loop.messages[-1]
    assert last.role == "user"
    assert is_interrupted_result(last.tool_results[0])
    assert last.tool_results[0].is_error


async def test_resumed_history_ending_on_a_user_message_is_answered(workspace: Path) -> None:
    provider = ScriptedProvider([text("Answer.")])
    loop = _loop(provider, workspace, history=[Message.user("pending question")])

    result = await loop.run_turn(None)

    assert result.answer == "Answer."
    assert provider.requests[0].messages == [Message.user("pending question")]


async def test_an_empty_answer_is_kept_as_a_placeholder(workspace: Path) -> None:
    from agent.engine.loop import EMPTY_ANSWER

    provider = ScriptedProvider([text("   "), text("Second.")])
    loop = _loop(provider, workspace)

    first = await loop.run_turn("first")
    await loop.run_turn("second")

    assert first.status is TurnStatus.DONE
    assert loop.messages[1] == Message.assistant(EMPTY_ANSWER)
    assert [m.role for m in provider.requests[1].messages] == ["user", "assistant", "user"]


def _two_calls_with_one_id(*calls: tuple[str, dict[str, str]]) -> ChatResponse:
    blocks = [ToolUseBlock(id="dup", name=name, input=args) for name, args in calls]
    return ChatResponse(
        message=Message(role="assistant", content=list(blocks)),
        stop_reason=StopReason.TOOL_USE,
        model="scripted",
    )


async def test_repeated_tool_call_ids_are_renamed_before_anything_records_them(
    workspace: Path,
) -> None:
    write = "write_file"
    provider = ScriptedProvider(
        [
            _two_calls_with_one_id(
                (write, {"path": "a.txt", "content": "1"}),
                (write, {"path": "b.txt", "content": "2"}),
            ),
            text("Both written."),
            _two_calls_with_one_id((write, {"path": "c.txt", "content": "3"})),
            text("Again."),
        ]
    )
    saved: list[Message] = []

    class Transcript:
        def append_message(self, message: Message) -> None:
            saved.append(message)

        def group_commit(self) -> AbstractContextManager[None]:
            return nullcontext()

    loop = _loop(provider, workspace, transcript=Transcript())
    await loop.run_turn("write two files")
    await loop.run_turn("one more")

    calls = [use.id for message in saved for use in message.tool_uses]
    results = [result.tool_use_id for message in saved for result in message.tool_results]
    assert calls == ["dup", "dup_2", "dup_3"]
    assert results == calls
    assert provider.requests[1].messages[-2].tool_uses[1].id == "dup_2"
    assert (workspace / "a.txt").read_text() == "1"
    assert (workspace / "b.txt").read_text() == "2"


async def test_ids_used_before_a_resume_are_not_reused(workspace: Path) -> None:
    history = [
        Message.user("earlier"),
        Message(role="assistant", content=[ToolUseBlock(id="dup", name="list_files", input={})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="dup", content="(empty)")]),
        Message.assistant("Nothing there."),
    ]
    provider = ScriptedProvider(
        [_two_calls_with_one_id(("list_files", {})), text("Still nothing.")]
    )
    loop = _loop(provider, workspace, history=history)
    await loop.run_turn("look again")
    assert loop.messages[-3].tool_uses[0].id == "dup_2"
    assert loop.messages[-2].tool_results[0].tool_use_id == "dup_2"


async def test_each_step_saves_its_records_in_one_group_commit(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    provider = ScriptedProvider([tool_call("read_file", path="a.txt"), text("It says alpha.")])
    log: list[str] = []

    class Transcript:
        def append_message(self, message: Message) -> None:
            log.append(f"{message.role} message")

        @contextmanager
        def group_commit(self) -> Iterator[None]:
            log.append("begin")
            yield
            log.append("commit")

    await _loop(provider, workspace, transcript=Transcript()).run_turn("what is in a.txt?")

    assert log == [
        *("begin", "user message", "commit"),  # the prompt: saved before the first request
        # Each answer's usage is saved by the provider's ledger, inside the same commit.
        *("begin", "assistant message", "user message", "commit"),  # call + result
        *("begin", "assistant message", "commit"),  # the answer
        *("begin", "commit"),  # the turn's end (its event, where a session saves events)
    ]
