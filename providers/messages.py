"""The conversation model: typed message blocks that map losslessly to both wire formats.

This module imports nothing from the rest of the project. Identity and storage (session ids,
record sequence numbers) are storage concerns and live in `sessions`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_INPUT_DEPTH = 32
"""Levels of nesting kept in tool-call arguments; deeper values become `TOO_DEEP`."""
TOO_DEEP = "[nested too deep]"


class TextBlock(BaseModel):
    """Plain text written by the user or the model."""

    model_config = ConfigDict(frozen=True)

    type: Literal["text"] = "text"
    text: str


class ToolUseBlock(BaseModel):
    """A tool call requested by the model."""

    model_config = ConfigDict(frozen=True)

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)

    @field_validator("input", mode="after")
    @classmethod
    def _bound_depth(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Model output is untrusted: arguments nested hundreds deep cannot be serialised
        # (session records, the next request), so the levels past the limit are cut here.
        if _fits(value, MAX_INPUT_DEPTH):  # the usual case: no copy (sessions load many)
            return value
        return _cut_deep(value, MAX_INPUT_DEPTH)  # type: ignore[no-any-return]


def _fits(value: Any, room: int) -> bool:
    """Whether ``value`` has no more than ``room`` levels of containers."""
    if isinstance(value, dict):
        return room > 0 and all(_fits(item, room - 1) for item in value.values())
    if isinstance(value, list):
        return room > 0 and all(_fits(item, room - 1) for item in value)
    return True


def _cut_deep(value: Any, room: int) -> Any:
    """``value`` with containers more than ``room`` levels down replaced by `TOO_DEEP`."""
    if not isinstance(value, dict | list):
        return value
    if room <= 0:
        return TOO_DEEP
    if isinstance(value, dict):
        return {key: _cut_deep(item, room - 1) for key, item in value.items()}
    return [_cut_deep(item, room - 1) for item in value]


def input_depth(value: Any) -> int:
    """Levels of dicts and lists in ``value`` (an argument cut by `MAX_INPUT_DEPTH` counts
    as one level deeper than the limit)."""
    if value == TOO_DEEP:
        return 1
    if isinstance(value, dict):
        return 1 + max((input_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((input_depth(item) for item in value), default=0)
    return 0


ImageType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
"""The image formats both vendors take."""
IMAGE_CHARS_PER_PIXEL = 4 / 750
"""Anthropic counts an image as about width × height / 750 tokens; at 4 characters a token,
this is what an image weighs in `Message.chars`."""


class ImageBlock(BaseModel):
    """A picture the model is shown, from the person's prompt or a tool's result.

    ``data`` (the base64 of the encoded image) is never serialised: a session keeps the
    image as a content-addressed file named by ``sha256`` (`sessions.images`), so its
    lines stay small, and puts ``data`` back when it is resumed.
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["image"] = "image"
    media_type: ImageType
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The digest of the encoded image (the bytes ``data`` holds)."""
    name: str = Field(default="image", max_length=4096)
    """Where it came from (a file name, "clipboard"), for the person and for notes."""
    width: int = Field(default=0, ge=0, le=100_000)
    height: int = Field(default=0, ge=0, le=100_000)
    data: str = Field(default="", exclude=True, repr=False)

    @property
    def chars(self) -> int:
        """What the image weighs in a token estimate, as characters."""
        return max(1, int(self.width * self.height * IMAGE_CHARS_PER_PIXEL))


class ToolResultBlock(BaseModel):
    """The outcome of a tool call, sent back to the model in a user message.

    ``images``: pictures the result hands over (``read_file`` of an image); left out of the
    JSON when there are none.
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool = False
    images: tuple[ImageBlock, ...] = Field(default=(), exclude_if=lambda images: not images)


Block = Annotated[
    TextBlock | ToolUseBlock | ToolResultBlock | ImageBlock, Field(discriminator="type")
]
Role = Literal["user", "assistant"]


class CachingModel(BaseModel):
    """A frozen model with `functools.cached_property` values derived from its fields.

    ``model_copy(update=...)`` copies the instance's ``__dict__``, cached values included, so
    it forgets them here: a copy with other content must not report the original's figures.
    """

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copy = super().model_copy(update=update, deep=deep)
        if update:
            fields = type(self).model_fields
            for name in [key for key in copy.__dict__ if key not in fields]:
                del copy.__dict__[name]
        return copy


class Message(CachingModel):
    """One turn of the conversation: who spoke and the blocks they produced."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: list[Block]

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message holding one text block."""
        return cls(role="user", content=[TextBlock(text=text)])

    @classmethod
    def assistant(cls, text: str) -> Message:
        """An assistant message holding one text block."""
        return cls(role="assistant", content=[TextBlock(text=text)])

    @cached_property
    def text(self) -> str:
        """All text blocks joined, without tool calls or results (joined once: every request
        looks for the latest prompt among the messages after it)."""
        return "".join(block.text for block in self.content if isinstance(block, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls in this message, in order."""
        return [block for block in self.content if isinstance(block, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        """The tool results in this message, in order."""
        return [block for block in self.content if isinstance(block, ToolResultBlock)]

    @cached_property
    def images(self) -> list[ImageBlock]:
        """The images in this message, its tool results' included, in order (found once:
        resuming a session asks every message)."""
        found: list[ImageBlock] = []
        for block in self.content:
            if isinstance(block, ImageBlock):
                found.append(block)
            elif isinstance(block, ToolResultBlock):
                found.extend(block.images)
        return found

    @cached_property
    def chars(self) -> int:
        """Characters of the text, tool calls (id, name, JSON input) and results.

        What token estimates are made from; counted once (messages are frozen), so summing
        it over a whole request on every step stays cheap.
        """
        total = 0
        for block in self.content:
            if isinstance(block, TextBlock):
                total += len(block.text)
            elif isinstance(block, ToolUseBlock):
                total += len(block.id) + len(block.name) + len(json.dumps(block.input))
            elif isinstance(block, ImageBlock):
                total += block.chars
            else:
                total += len(block.tool_use_id) + len(block.content)
                total += sum(image.chars for image in block.images)
        return total


class Usage(BaseModel):
    """Token counts reported by the provider for one response (or a running total)."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Input (including cached) plus output tokens."""
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.output_tokens
        )
