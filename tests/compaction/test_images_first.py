"""Compaction drops old images first, says so, and keeps the latest prompt's images."""

from __future__ import annotations

from compaction import CompactionApplied, CompactionSettings, Compactor, Stage
from compaction.events import CompactionFailed
from providers import Event, ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock
from providers.models import ModelLimits
from providers.testing import ScriptedProvider
from tests.compaction.test_compactor import tool_heavy

# usable = 4,000 - 1,000 reserved = 3,000 tokens; threshold 2,400; target 1,500.
LIMITS = ModelLimits(context_window=4_000, max_output_tokens=1_000)


def _image(n: int, side: int = 1000) -> ImageBlock:
    # side² / 750 tokens, as Anthropic counts them: 1,333 for 1000 × 1000.
    return ImageBlock(
        media_type="image/png", sha256=f"{n:064x}", name=f"s{n}.png", width=side, height=side
    )


def _with_images() -> list[Message]:
    call = ToolUseBlock(id="call_1", name="read_file", input={"path": "s2.png"})
    result = ToolResultBlock(tool_use_id="call_1", content="s2.png: image", images=(_image(2),))
    return [
        Message(role="user", content=[_image(1), TextBlock(text="what is this?")]),
        Message.assistant("A chart."),
        Message.user("and the other one?"),
        Message(role="assistant", content=[call]),
        Message(role="user", content=[result]),
        Message.assistant("A table."),
        Message(role="user", content=[_image(3, side=300), TextBlock(text="now this")]),
    ]


async def test_old_images_go_first_and_the_latest_prompt_keeps_its_own() -> None:
    events: list[Event] = []
    compactor = Compactor(ScriptedProvider([]), LIMITS, CompactionSettings(), events=events.append)

    out = await compactor.before_request(_with_images())

    applied = [event for event in events if isinstance(event, CompactionApplied)]
    assert [event.stage for event in applied] == [Stage.IMAGES]
    assert applied[0].describe().startswith("Compacted: dropped old images")
    assert [image.name for message in out for image in message.images] == ["s3.png"]
    assert "[image s1.png dropped to save room; read_file or @s1.png shows it again]" in out[0].text
    result = out[4].tool_results[0]
    assert result.images == ()
    assert result.content.startswith("s2.png: image\n[image s2.png dropped")
    assert not [event for event in events if isinstance(event, CompactionFailed)]


async def test_without_images_the_stage_changes_nothing() -> None:
    events: list[Event] = []
    compactor = Compactor(
        ScriptedProvider([]),
        LIMITS,
        CompactionSettings(keep_last_tool_results=1),
        events=events.append,
    )

    await compactor.before_request(tool_heavy())

    stages = [event.stage for event in events if isinstance(event, CompactionApplied)]
    assert stages == [Stage.SNIP]
