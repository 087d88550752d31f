"""Which child a request is sent for, and recovery's events about it told as the child's.

Children send through the parent's recovering provider (or one of a model of their own, which
the children on that model share), several at once, each in a task of its own. While a child
runs, its task names it (`asking_for`, set by `agent.subagents.child.run_child` around the
child's turn): its requests, its tools' side requests, and the failures recovery tells of.
A provider's event sink wrapped by `told_for_children` then publishes what recovery did for
a child's request as the child's `SubagentRecovery`: a child's retry is not the parent's turn
waiting, and a child that gives up has not failed the parent's turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import get_args

from agent.engine.outcome import ChildId, ChildsRequestEvent, SubagentRecovery, subagent_switch
from providers import Event, EventSink
from recovery import FallbackActivated, ModelRestored

__all__ = ["asking", "asking_for", "told_for_children"]

_ASKING: ContextVar[ChildId | None] = ContextVar("child_asking", default=None)
_ABOUT_A_REQUEST = get_args(ChildsRequestEvent)


def asking() -> ChildId | None:
    """The child this task runs for; None in the parent's own work."""
    return _ASKING.get()


@contextmanager
def asking_for(child: ChildId) -> Iterator[None]:
    """Name ``child`` for everything the current task does inside (tasks it starts too)."""
    token = _ASKING.set(child)
    try:
        yield
    finally:
        _ASKING.reset(token)


def told_for_children(events: EventSink, own: ChildId | None = None) -> EventSink:
    """``events``, for a recovering provider's sink: an event about a child's request reaches
    it as the child's `SubagentRecovery`.

    ``own``: the provider is a model of the children's own (`agent.setup.child_models`); its
    switches are the children's too (`SubagentSwitch`), and an event no child is named for
    is ``own``'s, the child it was built for. Without it the provider is the session's, and a
    switch a child's request caused is the session's, as it is: every later request, the
    parent's too, goes to the model it moved to.
    """

    def tell(event: Event) -> None:
        child = _ASKING.get() or own
        if child is None:
            events(event)
        elif isinstance(event, _ABOUT_A_REQUEST):
            who = {"agent_id": child.agent_id, "agent_type": child.agent_type}
            events(SubagentRecovery(**who, tool_use_id=child.tool_use_id, recovery=event))
        elif own is not None and isinstance(event, FallbackActivated | ModelRestored):
            events(subagent_switch(child, event))
        else:
            events(event)

    return tell
