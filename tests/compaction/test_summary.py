from __future__ import annotations

import pytest

from compaction import Summariser, SummaryFailed, conversation_problems
from compaction.summary import render_transcript
from providers import ErrorKind, LlmError, Message, Purpose, StopReason
from providers.testing import ScriptedProvider, text
from tests.compaction.conversations import step


def _conversation() -> list[Message]:
    return [
        Message.user("Fix the failing test in src/app.py"),
        *step(["a"], "Reading the file."),
        Message.assistant("Fixed it."),
        Message.user("Now add a changelog entry"),
    ]


def _summariser(provider: ScriptedProvider, chars: int = 100_000) -> Summariser:
    return Summariser(provider, max_summary_tokens=500, max_transcript_chars=chars)


async def test_the_summary_request_is_background_with_no_tools_and_keeps_what_matters() -> None:
    provider = ScriptedProvider([text("## Goals\nfix the test")])
    messages = _conversation()
    out = await _summariser(provider).compact(messages, 3, focus="the changelog")
    (request,) = provider.requests
    assert request.purpose is Purpose.BACKGROUND
    assert request.tools == []
    assert request.max_tokens == 500
    prompt = request.messages[0].text
    for kept in ("Goals", "Decisions", "Files touched", "Errors met", "Open tasks"):
        assert kept in prompt
    assert "focus on: the changelog" in prompt
    assert "src/app.py" in prompt
    assert 'read_file({"path": "a.py"})' in prompt
    assert "Now add a changelog entry" not in prompt  # the kept tail is not summarised
    assert out[0].text.startswith("[Context compacted")
    assert "fix the test" in out[0].text
    assert out[1:] == messages[3:]
    assert conversation_problems(out) == []


async def test_a_provider_error_is_a_clean_failure() -> None:
    provider = ScriptedProvider([LlmError(ErrorKind.OVERLOADED, "busy")])
    with pytest.raises(SummaryFailed, match="busy"):
        await _summariser(provider).compact(_conversation(), 3)


@pytest.mark.parametrize(
    "response",
    [text("   "), text("partial", stop=StopReason.INCOMPLETE), text("no", stop=StopReason.REFUSAL)],
)
async def test_an_unusable_answer_is_a_failure(response: object) -> None:
    provider = ScriptedProvider([response])  # type: ignore[list-item]
    with pytest.raises(SummaryFailed):
        await _summariser(provider).summarise(_conversation()[:3])


def test_the_transcript_is_clipped_to_fit_keeping_the_newest() -> None:
    messages = [Message.user("old " * 500), Message.assistant("middle"), Message.user("newest")]
    transcript = render_transcript(messages, max_chars=200)
    assert len(transcript) < 300
    assert "newest" in transcript
    assert "older messages omitted" in transcript
    assert "old old" not in transcript


def test_huge_blocks_are_clipped_head_and_tail() -> None:
    transcript = render_transcript([Message.user("A" * 10_000 + "END")], max_chars=100_000)
    assert "characters clipped" in transcript
    assert transcript.endswith("END")
