"""Context compaction: token accounting and the stages that shrink a conversation.

Compaction is a function from messages to messages: the loop decides when (`Compactor`'s
``before_request``, ``on_overflow`` and ``compact``), this package decides how.
"""

from compaction.compactor import STAGES, CompactionResult, Compactor
from compaction.conversation import conversation_problems, cut, cut_points, latest_prompt_index
from compaction.events import (
    CompactionApplied,
    CompactionDisabled,
    CompactionFailed,
    CompactionStarted,
    Reason,
)
from compaction.settings import CompactionSettings
from compaction.stages import Stage, choose_cut, drop_oldest_turns, snip_tool_results
from compaction.summary import Summariser, SummaryFailed
from compaction.tokens import ContextBudget, TokenCounter

__all__ = [
    "STAGES",
    "CompactionApplied",
    "CompactionDisabled",
    "CompactionFailed",
    "CompactionResult",
    "CompactionSettings",
    "CompactionStarted",
    "Compactor",
    "ContextBudget",
    "Reason",
    "Stage",
    "Summariser",
    "SummaryFailed",
    "TokenCounter",
    "choose_cut",
    "conversation_problems",
    "cut",
    "cut_points",
    "drop_oldest_turns",
    "latest_prompt_index",
    "snip_tool_results",
]
