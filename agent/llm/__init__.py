"""The floor of the stack: messages, the `Provider` protocol, errors, events and adapters.

Provider adapters (`agent.llm.anthropic`, `agent.llm.openai`) are the only modules that import a
vendor SDK; import them lazily (see `agent.llm.registry`).
"""

from agent.llm.errors import ErrorKind, LlmError
from agent.llm.events import Event, EventBus, EventSink
from agent.llm.messages import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from agent.llm.provider import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    Provider,
    Purpose,
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
    "LlmError",
    "Message",
    "Provider",
    "Purpose",
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
