"""The floor of the stack: messages, the `Provider` protocol, errors, events and adapters.

The adapters (`providers.adapters`) are the only modules that import a vendor SDK; they are
imported lazily, on the first request. `providers.testing` holds fake models (a scripted one and
one built from a function) for tests, benchmarks and users; nothing here imports it.
"""

from providers.errors import ErrorKind, LlmError
from providers.events import Event, EventBus, EventSink, Notice
from providers.messages import (
    Block,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from providers.provider import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    Provider,
    Purpose,
    RequestKind,
    StopReason,
    StreamDelta,
    StreamReset,
    TextDelta,
    ToolSpec,
    ToolUseDelta,
)

__all__ = [
    "Block",
    "ChatRequest",
    "ChatResponse",
    "DeltaHandler",
    "ErrorKind",
    "Event",
    "EventBus",
    "EventSink",
    "ImageBlock",
    "LlmError",
    "Message",
    "Notice",
    "Provider",
    "Purpose",
    "RequestKind",
    "StopReason",
    "StreamDelta",
    "StreamReset",
    "TextBlock",
    "TextDelta",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "ToolUseDelta",
    "Usage",
]
