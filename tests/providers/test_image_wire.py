"""Images on both wire formats: Anthropic's base64 image blocks, OpenAI's ``image_url`` data
URLs, a tool result's images, and models that cannot see."""

from __future__ import annotations

import asyncio

from providers import (
    ChatRequest,
    ChatResponse,
    ImageBlock,
    Message,
    StopReason,
    TextBlock,
    ToolResultBlock,
)
from providers.adapters.anthropic_mapping import from_anthropic_messages, to_anthropic_messages
from providers.adapters.openai_mapping import (
    IMAGE_ATTACHED,
    from_openai_messages,
    to_openai_messages,
)
from providers.blind import BlindProvider
from providers.messages import ToolUseBlock
from providers.testing import FunctionProvider
from tests.fakes.images import image_bytes
from tests.fakes.vendor_rules import anthropic_problems, openai_problems
from tools.images import image_from_bytes

SHOT = image_from_bytes(image_bytes((40, 30)), "shot.png")
CHART = image_from_bytes(image_bytes((30, 40), "JPEG"), "chart.jpg")
CALL = ToolUseBlock(id="call_1", name="read_file", input={"path": "chart.jpg"})
CONVERSATION = [
    Message(role="user", content=[SHOT, TextBlock(text="what is wrong here?")]),
    Message(role="assistant", content=[TextBlock(text="Let me look."), CALL]),
    Message(
        role="user",
        content=[
            ToolResultBlock(tool_use_id="call_1", content="chart.jpg: image", images=(CHART,))
        ],
    ),
]


def test_anthropic_gets_base64_image_blocks_also_inside_a_tool_result() -> None:
    wire = to_anthropic_messages(CONVERSATION)

    first = wire[0]["content"][0]
    assert first == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": SHOT.data},
    }
    result = wire[2]["content"][0]
    assert result["content"][0] == {"type": "text", "text": "chart.jpg: image"}
    assert result["content"][1]["source"]["data"] == CHART.data
    assert anthropic_problems(wire) == []
    assert from_anthropic_messages(wire) == CONVERSATION_WITHOUT_NAMES


def test_openai_gets_data_urls_and_a_result_s_image_follows_in_a_user_message() -> None:
    wire = to_openai_messages("system", CONVERSATION)

    assert wire[1]["content"][0] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{SHOT.data}"},
    }
    tool, after = wire[3], wire[4]
    assert tool["role"] == "tool"
    assert tool["content"] == "chart.jpg: image\n" + IMAGE_ATTACHED.format(names="chart.jpg")
    assert after["role"] == "user"
    assert after["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{CHART.data}"}}
    ]
    assert openai_problems(wire) == []
    _, back = from_openai_messages(wire)
    assert [image.sha256 for m in back for image in m.images] == [SHOT.sha256, CHART.sha256]


def test_a_model_that_cannot_see_gets_a_note_instead_of_each_image() -> None:
    async def answer(request: ChatRequest, on_delta: object) -> ChatResponse:
        return ChatResponse(message=Message.assistant("ok"), stop_reason=StopReason.END_TURN)

    inner = FunctionProvider(answer)
    asyncio.run(BlindProvider(inner, "local:tiny").chat(ChatRequest(messages=CONVERSATION)))

    sent = inner.requests[0].messages
    assert not any(message.images for message in sent)
    assert "[image shot.png left out: local:tiny cannot see images]" in sent[0].text
    result = sent[2].tool_results[0]
    assert result.content.endswith("[image chart.jpg left out: local:tiny cannot see images]")


def _unnamed(image: ImageBlock) -> ImageBlock:
    return image.model_copy(update={"name": "image", "width": 0, "height": 0})


# What reading the wire back gives: the wire carries no names or sizes.
CONVERSATION_WITHOUT_NAMES = [
    Message(role="user", content=[_unnamed(SHOT), TextBlock(text="what is wrong here?")]),
    CONVERSATION[1],
    Message(
        role="user",
        content=[
            ToolResultBlock(
                tool_use_id="call_1", content="chart.jpg: image", images=(_unnamed(CHART),)
            )
        ],
    ),
]
