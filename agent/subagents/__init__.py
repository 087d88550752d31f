"""Sub-agents: the `task` tool hands a self-contained job to a child agent.

A child is an engine built by `agent.engine.build.build_engine`, the parent's builder, from
its parent's parts with a few replaced (`ChildParts`): the same recovering provider (one
recovery state for the whole tree), permission checks, hooks, sandbox, redactor and event
bus, with its own conversation, tools, system prompt, limits and face. Its
failures come back as the `task` call's result; they never end the parent's turn.
"""

from agent.subagents.catalog import AgentCatalog
from agent.subagents.child import ChildOutcome, ChildParts, run_child
from agent.subagents.definitions import Definitions, agent_dirs, load_definitions
from agent.subagents.kinds import BUILTIN_TYPES, SubagentType
from agent.subagents.results import ChildResults, settle_unfinished
from agent.subagents.task import TASK_NAMES, TaskTool
from agent.subagents.undo import ChildEdits

__all__ = [
    "BUILTIN_TYPES",
    "TASK_NAMES",
    "AgentCatalog",
    "ChildEdits",
    "ChildOutcome",
    "ChildParts",
    "ChildResults",
    "Definitions",
    "SubagentType",
    "TaskTool",
    "agent_dirs",
    "load_definitions",
    "run_child",
    "settle_unfinished",
]
