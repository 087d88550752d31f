"""A fake LLM server's script for a parent that delegates to sub-agents.

Children are told apart from the parent by their system prompt, and from each other by their
job's text. `delegating` writes the usual script: the parent starts its children, then answers
once their results are in.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.cli import MODELS, AgentRun, Protocol, run_agent
from tests.fakes.llm_script import Fault, Reply, Step, ToolCallPart
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest, Responder

CHILD_MARK = "You are a sub-agent"


def task_calls(*jobs: tuple[str, str]) -> Reply:
    """One answer that starts a child per ``(job, subagent_type)``."""
    parts = tuple(
        ToolCallPart(
            "task",
            json.dumps({"description": f"do {job}", "prompt": job, "subagent_type": kind}),
        )
        for job, kind in jobs
    )
    return Reply(parts=parts, stop="tool_use")


def run_parent(
    fake: FakeLlmServer, workspace: Path, home: Path, protocol: Protocol, *extra: str
) -> AgentRun:
    """``agent -p "split the work" --yes`` on ``protocol``'s model, with ``extra`` arguments."""
    return run_agent(
        "-p",
        "split the work",
        "--yes",
        "--model",
        MODELS[protocol],
        *extra,
        server=fake,
        workspace=workspace,
        home=home,
    )


def delegating(child: Responder, *jobs: tuple[str, str], then: str = "parent answer") -> Responder:
    """The parent starts a child per ``(job, subagent_type)`` and, once the results are in,
    answers ``then``; every child's request is answered by ``child``."""

    def respond(request: RecordedRequest) -> Step:
        if is_child(request):
            return child(request)
        if answered(request):
            return Reply.text(then)
        return task_calls(*jobs)

    return respond


def always(step: Step) -> Responder:
    """A model that answers every request with ``step``."""
    return lambda _: step


def calls_then(call: Step, then: Step) -> Responder:
    """A model that makes ``call`` and, once its results are in, answers ``then``."""
    return lambda request: then if answered(request) else call


def text_of(request: RecordedRequest) -> str:
    return json.dumps(request.body)


def is_child(request: RecordedRequest) -> bool:
    return CHILD_MARK in text_of(request)


def job_of(request: RecordedRequest) -> str:
    """The job a child's request is for (its first user message)."""
    messages = [m for m in request.body["messages"] if m["role"] != "system"]
    return json.dumps(messages[0]["content"])


def answered(request: RecordedRequest) -> bool:
    """Whether the request carries tool results (the answer's calls ran)."""
    last = json.dumps(request.body["messages"][-1])
    return '"tool_result"' in last or '"role": "tool"' in last


def tool_names(request: RecordedRequest) -> set[str]:
    names = set()
    for tool in request.body.get("tools", []):
        names.add(tool.get("name") or tool["function"]["name"])
    return names


def task_call_id(fake: FakeLlmServer) -> str:
    """The id of the parent's one `task` call (Anthropic's shape), as its next request has it."""
    [call_id] = {
        block["id"]
        for request in fake.requests
        if not is_child(request)
        for message in request.body["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_use" and block["name"] == "task"
    }
    return str(call_id)


def define(directory: Path, name: str, frontmatter: str) -> Path:
    """A sub-agent definition file ``name`` in ``directory``, with ``frontmatter`` lines."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(f"---\nname: {name}\ndescription: The {name} kind.\n{frontmatter}---\nGo.\n")
    return path


def _gone_child(request: RecordedRequest) -> Step:
    if request.body["model"] == "claude-gone":
        return Fault.status(404, "not_found_error", message="model: claude-gone")
    return Reply.text("answered on the fallback")


gone_then_fallback = delegating(_gone_child, ("job", "gone"))
"""The parent delegates to ``gone``, whose model (``claude-gone``) is unknown; the parent's
model answers for it."""
