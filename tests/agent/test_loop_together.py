"""Calls that may run together (sub-agents' `task` calls) run at once; every other call runs
alone, in the order the model made it; results go back in call order."""

from __future__ import annotations

import asyncio
from contextlib import suppress

from agent.engine.loop import AgentLoop
from agent.engine.outcome import TurnStatus
from providers import ChatResponse, Message, StopReason, ToolResultBlock, ToolSpec, ToolUseBlock
from providers.conversation import conversation_problems, is_interrupted_result
from providers.testing import ScriptedProvider, text


class Tools:
    """A tool runner whose `task` calls wait until every `task` call of the answer started."""

    def __init__(self, tasks: int, release: bool = True) -> None:
        self.log: list[str] = []
        self.tasks = tasks
        self.all_started = asyncio.Event()
        self.release = release
        self.running = 0

    def specs(self) -> list[ToolSpec]:
        return []

    async def execute(self, call: ToolUseBlock) -> ToolResultBlock:
        self.log.append(f"start {call.id}")
        if call.name == "task":
            self.running += 1
            if sum(entry.startswith("start t") for entry in self.log) == self.tasks:
                self.all_started.set()
            try:
                await self.all_started.wait()
                if not self.release and call.id == "t2":
                    await asyncio.Event().wait()  # never finishes on its own
            finally:
                self.running -= 1
        self.log.append(f"end {call.id}")
        return ToolResultBlock(tool_use_id=call.id, content=f"result of {call.id}")

    def begin_turn(self) -> None:
        pass

    @property
    def repeated_call_stop(self) -> str | None:
        return None


def calls(*named: tuple[str, str]) -> ChatResponse:
    blocks = [ToolUseBlock(id=i, name=name, input={}) for i, name in named]
    return ChatResponse(
        message=Message(role="assistant", content=list(blocks)),
        stop_reason=StopReason.TOOL_USE,
        model="scripted",
    )


ANSWER = calls(("a", "read_file"), ("t1", "task"), ("t2", "task"), ("b", "read_file"))


def loop_of(provider: ScriptedProvider, tools: Tools) -> AgentLoop:
    return AgentLoop(
        provider=provider,
        tools=tools,
        system="sys",
        together=lambda call: call.name == "task",
    )


async def test_task_calls_run_at_once_and_the_others_in_order() -> None:
    provider = ScriptedProvider([ANSWER, text("done")])
    tools = Tools(tasks=2)

    result = await loop_of(provider, tools).run_turn("go")

    assert result.status is TurnStatus.DONE
    assert tools.log[0:2] == ["start a", "end a"]
    assert tools.log[2:4] == ["start t1", "start t2"]  # neither ended before both started
    assert tools.log[-2:] == ["start b", "end b"]
    results = provider.requests[1].messages[-1].tool_results
    assert [r.tool_use_id for r in results] == ["a", "t1", "t2", "b"]


async def test_a_stopped_turn_cancels_every_running_task_and_keeps_what_finished() -> None:
    provider = ScriptedProvider([ANSWER])
    tools = Tools(tasks=2, release=False)
    loop = loop_of(provider, tools)

    turn = asyncio.ensure_future(loop.run_turn("go"))
    while "end t1" not in tools.log:
        await asyncio.sleep(0)
    turn.cancel()
    with suppress(asyncio.CancelledError):
        await turn

    assert tools.running == 0  # nothing left running
    results = {r.tool_use_id: r for r in loop.messages[-1].tool_results}
    assert results["t1"].content == "result of t1"
    assert is_interrupted_result(results["t2"])
    assert is_interrupted_result(results["b"])
    assert conversation_problems(loop.messages) == []
