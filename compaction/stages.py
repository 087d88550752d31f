"""The pure compaction stages: drop old images, snip old tool results, drop the oldest turns.

Each stage is a function from messages to a new list of messages; the input is never mutated.
The summarising stage (`compaction.summary`) shares `choose_cut` with them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from enum import StrEnum

from compaction.conversation import COMPACTION_MARK, cut, cut_points, latest_prompt_index
from providers import Block, ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock

Estimate = Callable[[Sequence[Message]], int]
"""Tokens of some messages, e.g. `TokenCounter.estimate`."""

SNIP_MARK = "[snipped"
TRIM_FLOOR = 2_000
"""Characters of an unread tool result that trimming always keeps (its head and tail)."""
DROP_NOTE = (
    f"{COMPACTION_MARK}: earlier messages were dropped to fit the context window. "
    "Ask the person if you need something from them.]"
)


class Stage(StrEnum):
    """The compaction stages, cheapest and least lossy first."""

    IMAGES = "images"
    """Images before the latest prompt weigh a thousand tokens or more each: dropped first."""
    SNIP = "snip"
    SUMMARISE = "summarise"
    DROP = "drop"
    TRIM = "trim"
    """Shorten results the model has not read yet: only after an overflow, and last."""


IMAGE_DROPPED = "[image {name} dropped to save room; read_file or @{name} shows it again]"


def drop_old_images(messages: Sequence[Message]) -> list[Message]:
    """Replace each image before the latest prompt by a note naming it (a result's images
    by a line of its text); the latest prompt's images and what came after stay."""
    latest = latest_prompt_index(messages)
    end = len(messages) if latest is None else latest
    out = list(messages)
    for i, message in enumerate(messages[:end]):
        if not message.images:
            continue
        blocks: list[Block] = []
        for block in message.content:
            if isinstance(block, ImageBlock):
                blocks.append(TextBlock(text=IMAGE_DROPPED.format(name=block.name)))
            elif isinstance(block, ToolResultBlock) and block.images:
                notes = [IMAGE_DROPPED.format(name=image.name) for image in block.images]
                text = "\n".join([block.content, *notes])
                blocks.append(block.model_copy(update={"content": text, "images": ()}))
            else:
                blocks.append(block)
        out[i] = Message(role=message.role, content=blocks)
    return out


def snip_tool_results(messages: Sequence[Message], keep_last: int) -> list[Message]:
    """Replace the content of old tool results by a marker saying how to get it back.

    The last ``keep_last`` results stay whole, and so do the results in the final message:
    the model has not read those yet. A result shorter than its marker is left alone.
    """
    calls = {c.id: c for m in messages for c in m.tool_uses}
    earlier = [
        (i, j)
        for i, m in enumerate(messages[:-1])
        for j, block in enumerate(m.content)
        if isinstance(block, ToolResultBlock)
    ]
    # Results in the final message are unread: always kept, and they count towards keep_last.
    unread = len(messages[-1].tool_results) if messages else 0
    keep_earlier = max(0, keep_last - unread)
    old = set(earlier[: max(0, len(earlier) - keep_earlier)])
    out: list[Message] = []
    for i, message in enumerate(messages):
        blocks = list(message.content)
        for j, block in enumerate(blocks):
            if (i, j) in old and isinstance(block, ToolResultBlock):
                blocks[j] = _snipped(block, calls.get(block.tool_use_id))
        changed = any(a is not b for a, b in zip(blocks, message.content, strict=True))
        out.append(Message(role=message.role, content=blocks) if changed else message)
    return out


def _snipped(result: ToolResultBlock, call: ToolUseBlock | None) -> ToolResultBlock:
    if result.content.startswith(SNIP_MARK):
        return result
    if call is None:
        how = "run the tool again if you need it"
    else:
        how = f"call {_describe_call(call)} again if you need it"
    marker = f"{SNIP_MARK}: {len(result.content):,} characters of old output; {how}]"
    if len(marker) >= len(result.content):
        return result
    return result.model_copy(update={"content": marker})


def _describe_call(call: ToolUseBlock, limit: int = 160) -> str:
    args = ", ".join(f"{key}={json.dumps(value)}" for key, value in call.input.items())
    text = f"{call.name}({args})"
    return text if len(text) <= limit else text[: limit - 4] + "…)"


def choose_cut(messages: Sequence[Message], tail_budget: int, estimate: Estimate) -> int | None:
    """The smallest safe cut whose tail fits ``tail_budget`` tokens, else the largest cut.

    Returns None when there is no safe cut at all (a one-message conversation, say).
    """
    points = useful_cuts(messages)
    if not points:
        return None
    tails = _tail_sizes(messages, estimate)
    return next((k for k in points if tails[k] <= tail_budget), points[-1])


def drop_oldest_turns(
    messages: Sequence[Message], target_tokens: int, estimate: Estimate
) -> list[Message]:
    """Drop the oldest messages until the rest fits ``target_tokens`` (or nothing more can go).

    What is left starts with a note saying that messages were dropped, followed by the
    latest prompt and the turns after the cut, calls and results whole.
    """
    points = useful_cuts(messages)
    if not points or estimate(messages) <= target_tokens:
        return list(messages)
    tails = _tail_sizes(messages, estimate)
    for k in points:
        candidate = cut(messages, k, DROP_NOTE)
        # The first message of a candidate is new; the rest is a tail whose size is known.
        rest = len(candidate) - 1
        if estimate(candidate[:1]) + tails[len(messages) - rest] <= target_tokens:
            return candidate
    return cut(messages, points[-1], DROP_NOTE)


def useful_cuts(messages: Sequence[Message]) -> list[int]:
    """The cut points whose head holds more than the latest prompt.

    A cut carries the latest prompt over whole, so a head that is nothing but that prompt
    would be replaced by a note *and* the prompt: summarising or dropping it only adds.
    """
    points = cut_points(messages)
    if points[:1] == [1] and latest_prompt_index(messages) == 0:
        return points[1:]
    return points


def trim_unread_results(
    messages: Sequence[Message], target_tokens: int, estimate: Estimate, chars_per_token: float
) -> list[Message]:
    """Cut the middle out of the results in the final message until the whole fits
    ``target_tokens``, largest result first, each keeping `TRIM_FLOOR` characters.

    The last resort after an overflow: one huge result (a log, a generated file) can make a
    conversation too big for the model with nothing older to snip, summarise or drop.
    """
    if not messages or not messages[-1].tool_results:
        return list(messages)
    excess = int((estimate(messages) - target_tokens) * chars_per_token)
    last = messages[-1]
    blocks = list(last.content)
    by_size = sorted(
        (i for i, b in enumerate(blocks) if isinstance(b, ToolResultBlock)),
        key=lambda i: -_length(blocks[i]),
    )
    for i in by_size:
        block = blocks[i]
        if excess <= 0 or not isinstance(block, ToolResultBlock):
            break
        removed = min(excess + _NOTE_ROOM, len(block.content) - TRIM_FLOOR)
        if removed <= 2 * _NOTE_ROOM:  # the note would take most of what the cut saves
            continue
        blocks[i] = block.model_copy(update={"content": _cut_middle(block.content, removed)})
        excess -= removed
    if all(a is b for a, b in zip(blocks, last.content, strict=True)):
        return list(messages)
    return [*messages[:-1], Message(role=last.role, content=blocks)]


_NOTE_ROOM = 200
"""Characters the note of a cut takes, and a little more."""


def _length(block: object) -> int:
    return len(block.content) if isinstance(block, ToolResultBlock) else 0


def _cut_middle(text: str, removed: int) -> str:
    """``text`` without ``removed`` characters from its middle, and a note saying so."""
    keep = len(text) - removed
    head = keep // 2
    note = (
        f"\n[... {removed:,} characters cut to fit the context window; ask for a smaller "
        "part (offset and limit, a narrower pattern) if you need them ...]\n"
    )
    return text[:head] + note + text[len(text) - (keep - head) :]


def _tail_sizes(messages: Sequence[Message], estimate: Estimate) -> list[int]:
    """``sizes[k]`` is the estimate of ``messages[k:]``."""
    sizes = [0] * (len(messages) + 1)
    for k in range(len(messages) - 1, -1, -1):
        sizes[k] = sizes[k + 1] + estimate(messages[k : k + 1])
    return sizes
