"""Models that cannot see: images become a note before a request leaves.

A model without vision (the in-process local models, or one with ``vision: false`` in its
``models:`` settings) answers an image with a 400 on every later request, since the history
is sent again each time. `BlindProvider` wraps such a model's adapter: each image in the
request becomes `IMAGE_OMITTED` text, so the conversation goes on after a fallback or
``/model`` switch to it. The person is told before an image is attached (`agent.session`).
"""

from __future__ import annotations

from collections.abc import Sequence

from providers.lazy import Readies
from providers.messages import Block, ImageBlock, Message, TextBlock, ToolResultBlock
from providers.provider import ChatRequest, ChatResponse, DeltaHandler, Provider

IMAGE_OMITTED = "[image {name} left out: {model} cannot see images]"


def without_images(messages: Sequence[Message], model: str) -> list[Message]:
    """``messages`` with each image replaced by a note that names it (the same objects when
    there is none)."""
    return [_blind(message, model) if message.images else message for message in messages]


def _blind(message: Message, model: str) -> Message:
    content: list[Block] = []
    for block in message.content:
        if isinstance(block, ImageBlock):
            content.append(TextBlock(text=IMAGE_OMITTED.format(name=block.name, model=model)))
        elif isinstance(block, ToolResultBlock) and block.images:
            notes = [IMAGE_OMITTED.format(name=i.name, model=model) for i in block.images]
            text = "\n".join([block.content, *notes]).strip()
            content.append(block.model_copy(update={"content": text, "images": ()}))
        else:
            content.append(block)
    return Message(role=message.role, content=content)


class BlindProvider:
    """A `Provider` around one that cannot see: images in a request become notes.

    Args:
        inner: The model's adapter.
        model: Its name, for the note.
    """

    def __init__(self, inner: Provider, model: str) -> None:
        self.inner = inner
        self.model = model

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        if any(message.images for message in request.messages):
            messages = without_images(request.messages, self.model)
            request = request.model_copy(update={"messages": messages})
        return await self.inner.chat(request, on_delta)

    async def ready(self) -> None:
        """Let the wrapped provider get ready (`providers.lazy.Readies`), if it has to."""
        if isinstance(self.inner, Readies):
            await self.inner.ready()
