"""Builders of valid conversations: a hypothesis strategy and readable helpers for unit tests."""

from __future__ import annotations

from hypothesis import strategies as st

from providers import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock

_text = st.text(alphabet="abcdefghij klmnop\n", min_size=1, max_size=400)


def step(call_ids: list[str], text: str = "", result_size: int = 100) -> list[Message]:
    """An assistant message calling tools ``call_ids`` and the user message with their results."""
    blocks: list[Block] = [TextBlock(text=text)] if text else []
    blocks += [ToolUseBlock(id=i, name="read_file", input={"path": f"{i}.py"}) for i in call_ids]
    results: list[Block] = [
        ToolResultBlock(tool_use_id=i, content=f"{i}:" + "x" * result_size) for i in call_ids
    ]
    return [Message(role="assistant", content=blocks), Message(role="user", content=results)]


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """Random valid conversations: turns of a prompt, tool steps (one or several calls each)
    and usually a final answer; the last turn may stop mid-way, on a tool result."""
    ids = iter(range(1_000_000))
    messages: list[Message] = []
    turns = draw(st.integers(min_value=1, max_value=6))
    for turn in range(turns):
        last = turn == turns - 1
        messages.append(Message.user(f"prompt {turn}: " + draw(_text)))
        for _ in range(draw(st.integers(min_value=0, max_value=4))):
            n = draw(st.integers(min_value=1, max_value=3))
            call_ids = [f"call_{next(ids)}" for _ in range(n)]
            preface = draw(st.one_of(st.just(""), _text))
            size = draw(st.integers(min_value=0, max_value=3_000))
            messages += step(call_ids, preface, size)
        if not last or draw(st.booleans()):
            messages.append(Message.assistant("answer: " + draw(_text)))
    return messages


def unique_call_ids(messages: list[Message]) -> list[Message]:
    """``messages`` with each tool call kept at the first use of its id only: providers never
    reuse a call id in one conversation (its results are left as they are)."""
    seen: set[str] = set()
    result = []
    for message in messages:
        blocks: list[Block] = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                if block.id in seen:
                    continue
                seen.add(block.id)
            blocks.append(block)
        result.append(Message(role=message.role, content=blocks))
    return result
