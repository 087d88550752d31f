"""The summarising stage: older turns become one summary written by the model.

The older turns are sent as a plain-text transcript, not as native messages: the request then
needs no tool specs, cannot itself break the call/result pairing rules, and can be clipped to
fit the window that just overflowed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from compaction.conversation import COMPACTION_MARK, cut
from providers import (
    ChatRequest,
    ImageBlock,
    LlmError,
    Message,
    Provider,
    Purpose,
    RequestKind,
    StopReason,
    TextBlock,
    ToolUseBlock,
)

SUMMARY_SYSTEM = (
    "You write the working memory of a coding agent. The conversation below is being "
    "compacted to fit the model's context window; your summary replaces it, so anything you "
    "leave out is gone for the agent. Be specific and terse: exact file paths, function "
    "names, commands and error messages. Write no preamble."
)

SUMMARY_INSTRUCTIONS = """\
Summarise the transcript above under these headings:

## Goals
What the person asked for, in their words where it matters, and any constraints they set.
## Decisions
Choices made and why, including approaches that were rejected.
## Files touched
Every file read, created or changed, with what was done to it.
## Errors met
Errors and failed attempts, and whether each was resolved.
## Open tasks
What remains to be done, in order, and the very next step."""

BLOCK_CHARS = 4_000
"""A single text block or tool result is clipped to this many characters in the transcript."""


class SummaryFailed(Exception):
    """The summariser could not produce a summary; the message says why."""


class Summariser:
    """Writes a summary of older turns through a `Provider` (the recovering one).

    Args:
        provider: Where the summary request goes; it is sent with purpose ``background``.
        max_summary_tokens: Output tokens allowed for the summary.
        max_transcript_chars: The transcript is clipped (oldest part first) to this size, so
            the request fits the model's window.
    """

    def __init__(
        self, provider: Provider, *, max_summary_tokens: int, max_transcript_chars: int
    ) -> None:
        self.provider = provider
        self.max_summary_tokens = max_summary_tokens
        self.max_transcript_chars = max_transcript_chars

    def request(self, head: Sequence[Message], focus: str | None = None) -> ChatRequest:
        """The request that asks for a summary of ``head``."""
        instructions = SUMMARY_INSTRUCTIONS
        if focus:
            instructions += f"\n\nThe person asked the summary to focus on: {focus}"
        transcript = render_transcript(head, self.max_transcript_chars)
        text = f"<transcript>\n{transcript}\n</transcript>\n\n{instructions}"
        return ChatRequest(
            system=SUMMARY_SYSTEM,
            messages=[Message.user(text)],
            max_tokens=self.max_summary_tokens,
            purpose=Purpose.BACKGROUND,
            kind=RequestKind.COMPACTION,
        )

    async def summarise(self, head: Sequence[Message], focus: str | None = None) -> str:
        """The summary of ``head``.

        Raises:
            SummaryFailed: the provider failed (`LlmError`) or gave no usable summary.
        """
        try:
            response = await self.provider.chat(self.request(head, focus))
        except LlmError as error:
            raise SummaryFailed(f"the summary request failed: {error}") from error
        summary = response.message.text.strip()
        if response.stop_reason in (StopReason.REFUSAL, StopReason.INCOMPLETE):
            raise SummaryFailed(f"the summary request ended with {response.stop_reason.value}")
        if not summary:
            raise SummaryFailed("the model returned an empty summary")
        return summary

    async def compact(
        self, messages: Sequence[Message], k: int, focus: str | None = None
    ) -> list[Message]:
        """Replace ``messages[:k]`` (``k`` a safe cut point) by their summary.

        Raises:
            SummaryFailed: as `summarise`.
        """
        summary = await self.summarise(messages[:k], focus)
        return cut(messages, k, summary_note(summary))


def summary_note(summary: str) -> str:
    """The text that stands in for the summarised turns."""
    return (
        f"{COMPACTION_MARK}: the earlier conversation was replaced by this summary. "
        f"It covers everything before this point.]\n\n{summary}"
    )


def render_transcript(messages: Sequence[Message], max_chars: int) -> str:
    """``messages`` as readable text, each block clipped, oldest entries dropped to fit."""
    entries = [_render(message) for message in messages]
    kept: list[str] = []
    size = 0
    for entry in reversed(entries):
        if kept and size + len(entry) > max_chars:
            kept.append(f"[{len(entries) - len(kept)} older messages omitted]")
            break
        kept.append(entry[-max_chars:] if not kept else entry)
        size += len(entry) + 2
    return "\n\n".join(reversed(kept))


def _render(message: Message) -> str:
    lines = [f"### {message.role}"]
    for block in message.content:
        if isinstance(block, TextBlock):
            lines.append(_clip(block.text))
        elif isinstance(block, ToolUseBlock):
            lines.append(f"→ {block.name}({_clip(json.dumps(block.input), 1_000)})")
        elif isinstance(block, ImageBlock):
            lines.append(f"[image {block.name}]")
        else:
            status = "error" if block.is_error else "result"
            images = "".join(f" [image {image.name}]" for image in block.images)
            lines.append(f"← {status}: {_clip(block.content)}{images}")
    return "\n".join(lines)


def _clip(text: str, limit: int = BLOCK_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit:,} characters clipped …]\n{text[-half:]}"
