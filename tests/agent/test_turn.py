"""`TurnRecoveryPolicy`: the prompt-size check finds the latest prompt as the turn grows."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.engine.outcome import PromptTooLong
from agent.engine.turn import TurnRecoveryPolicy
from compaction import CompactionFailed
from compaction.compactor import Compactor
from providers import ErrorKind, Event, LlmError, Message, ToolResultBlock, ToolUseBlock
from providers.models import ModelLimits
from providers.testing import ScriptedProvider
from sessions import SessionStore

LIMITS = ModelLimits(context_window=2_000, max_output_tokens=100)


@pytest.fixture
def policy(tmp_path: Path) -> TurnRecoveryPolicy:
    log = SessionStore(tmp_path / "home", fsync=False).create(cwd=tmp_path, model_chain=["x:m"])
    return TurnRecoveryPolicy(compactor=Compactor(ScriptedProvider([]), LIMITS), log=log)


def step(n: int) -> list[Message]:
    call = ToolUseBlock(id=f"call_{n}", name="read_file", input={"path": f"f{n}.py"})
    result = ToolResultBlock(tool_use_id=call.id, content="x" * 100)
    return [Message(role="assistant", content=[call]), Message(role="user", content=[result])]


async def test_the_latest_prompt_is_checked_as_steps_and_new_prompts_come(
    policy: TurnRecoveryPolicy,
) -> None:
    messages = [Message.user("short question")]
    for n in range(5):
        assert await policy.before_request(messages, system="", tools=[]) == messages
        messages += step(n)

    messages.append(Message.user("y" * 20_000))  # a new prompt, far over the window
    with pytest.raises(PromptTooLong):
        await policy.before_request(messages, system="", tools=[])

    replaced = [Message.user("short again"), *step(9)]  # a history rebuilt from scratch
    assert await policy.before_request(replaced, system="", tools=[]) == replaced


async def test_a_prompt_too_long_is_named_without_a_compaction_failure(tmp_path: Path) -> None:
    log = SessionStore(tmp_path / "home", fsync=False).create(cwd=tmp_path, model_chain=["x:m"])
    events: list[Event] = []
    policy = TurnRecoveryPolicy(
        compactor=Compactor(ScriptedProvider([]), LIMITS), log=log, events=events.append
    )
    messages = [Message.user("y" * 3_000)]  # fits our estimate; the model said it did not
    overflow = LlmError(ErrorKind.CONTEXT_OVERFLOW, "prompt is too long")

    with pytest.raises(PromptTooLong) as caught:
        await policy.on_overflow(messages, overflow, system="", tools=[])

    assert "context window" in str(caught.value)
    assert not [e for e in events if isinstance(e, CompactionFailed)]
