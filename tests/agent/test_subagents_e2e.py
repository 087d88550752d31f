"""Sub-agents end to end: ``agent -p`` against the fake LLM server, with several `task` calls in
one answer. Children are told apart by their system prompt and their job's text."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from sessions import SessionStore
from tests.fakes.cli import MODELS, Protocol, agent_command, agent_env, run_agent
from tests.fakes.hook_log import hook_payloads, person_hooks, recording_hook
from tests.fakes.llm_capacity import DELIVERY
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.subagents import (
    always,
    answered,
    calls_then,
    delegating,
    is_child,
    job_of,
    run_parent,
    task_calls,
    text_of,
    tool_names,
)
from tests.fakes.terminal import Spawn, clean
from tests.fakes.vendor_rules import request_problems


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_children_run_at_once_and_the_parent_gets_their_answers(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, protocol: Protocol
) -> None:
    both_asked = threading.Barrier(2, timeout=30)
    overlapped: list[bool] = []

    def child(request: RecordedRequest) -> Step:
        job = "alpha" if "alpha" in job_of(request) else "beta"
        try:  # each child's first request waits for the other's: only at once can both
            both_asked.wait()
            overlapped.append(True)
        except threading.BrokenBarrierError:
            overlapped.append(False)
        return Reply.text(f"{job} found 42", input_tokens=100, output_tokens=10)

    jobs = (("alpha", "general-purpose"), ("beta", "explore"))
    fake_llm.respond_with(delegating(child, *jobs, then="Both done."))
    result = run_parent(fake_llm, workspace, decoy_home, protocol, "--output-format", "json")

    assert result.code == 0, result.stderr
    assert overlapped == [True, True]
    data = result.json()
    assert data["result"] == "Both done."
    assert data["usage_by_purpose"]["subagent"]["input_tokens"] == 200
    final = text_of(fake_llm.requests[-1])
    assert "alpha found 42" in final
    assert "beta found 42" in final
    assert "[sub-agent: 1 turn, 0 tool calls, 110 tokens, transcript " in final
    children = [r for r in fake_llm.requests if is_child(r)]
    assert all("task" not in tool_names(r) for r in children)
    explore = next(r for r in children if "beta" in job_of(r))
    assert tool_names(explore) == {"read_file", "search", "list_files", "run_command"}
    sessions = decoy_home / ".agent" / "sessions"
    headers = [json.loads(p.read_text().splitlines()[0]) for p in sessions.glob("*.jsonl")]
    [parent] = [h for h in headers if h.get("parent") is None]
    kids = [h for h in headers if h.get("parent") == parent["id"]]
    assert len(kids) == 2
    assert all(h["parent_tool_use_id"] for h in kids)


def test_a_child_that_fails_for_good_fails_alone(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "notes.txt").write_text("the answer is 7\n")

    broken = calls_then(
        Reply.tool_call("read_file", {"path": "notes.txt"}),
        Fault.status(400, "invalid_request_error", message="bad request body"),
    )

    def child(request: RecordedRequest) -> Step:
        if "broken" in job_of(request):
            return broken(request)
        return Reply.text("healthy found 7")

    jobs = (("broken", "general-purpose"), ("healthy", "general-purpose"))
    fake_llm.respond_with(delegating(child, *jobs, then="One failed, one answered."))
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--output-format", "json")

    assert result.code == 0, result.stderr
    assert result.json()["result"] == "One failed, one answered."
    results = fake_llm.requests[-1].body["messages"][-1]["content"]
    by_text = {json.dumps(block["content"]): block for block in results}
    [failed] = [b for t, b in by_text.items() if "The sub-agent failed" in t]
    assert failed.get("is_error") is True
    failed_text = json.dumps(failed["content"])
    assert "read_file notes.txt" in failed_text  # what it did before it stopped
    assert any("healthy found 7" in t for t in by_text)


def test_children_cannot_start_children(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    child = calls_then(task_calls(("grandchild", "general-purpose")), Reply.text("did it myself"))
    fake_llm.respond_with(delegating(child, ("nest", "general-purpose"), then="ok"))
    result = run_parent(fake_llm, workspace, decoy_home, "openai", "--output-format", "json")

    assert result.code == 0, result.stderr
    children = [r for r in fake_llm.requests if is_child(r)]
    assert len(children) == 2  # the grandchild never asked anything
    assert "cannot start another sub-agent" in text_of(children[-1])
    assert "did it myself" in text_of(fake_llm.requests[-1])


def test_stream_json_tags_childrens_messages_with_the_task_call(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    # "Explore": Claude Code's spelling of the built-in
    fake_llm.respond_with(delegating(always(Reply.text("child answer")), ("only", "Explore")))
    result = run_parent(
        fake_llm, workspace, decoy_home, "anthropic", "--output-format", "stream-json"
    )

    assert result.code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    [call] = [
        block
        for line in lines
        if line["type"] == "assistant" and line["parent_tool_use_id"] is None
        for block in line["message"]["content"]
        if block["type"] == "tool_use"
    ]
    tagged = [line for line in lines if line.get("parent_tool_use_id") == call["id"]]
    assert any(
        line["type"] == "assistant" and "child answer" in json.dumps(line) for line in tagged
    )
    assert lines[-1]["type"] == "result"
    assert lines[-1]["result"] == "parent answer"


def test_four_children_share_one_rate_limit_window(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    children = 4

    child = calls_then(Reply.tool_call("list_files", {"path": "."}), Reply.text("listed"))
    jobs = [(f"job{n}", "explore") for n in range(children)]
    fake_llm.respond_with(delegating(child, *jobs, then="All four listed."))
    capacity = fake_llm.limit_capacity(rate=2.0, burst=2)
    config = "recovery: {base_backoff: 0.01, max_backoff: 0.05}\n"
    (workspace / "agent.yaml").write_text(config)
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--output-format", "json")

    assert result.code == 0, result.stderr
    assert result.json()["result"] == "All four listed."
    assert "The sub-agent failed" not in text_of(fake_llm.requests[-1])
    # Once one child was told to wait, no request went out before that wait was over.
    assert capacity.early_settled == 0
    assert capacity.throttled <= children  # the headroom they share usually spares them all
    assert capacity.received - capacity.throttled == 2 + 2 * children


def test_a_retry_after_told_to_one_child_holds_its_siblings(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    told: list[float] = []
    arrivals: list[float] = []
    lock = threading.Lock()

    def child(request: RecordedRequest) -> Step:
        steps = text_of(request).count('"tool_result"')
        with lock:
            arrivals.append(time.monotonic())
            if not told and steps == 1:
                told.append(time.monotonic())
                return Fault.status(429, "rate_limit_error", headers={"retry-after": "2"})
        if steps == 2:
            return Reply.text("listed")
        # Slow to write its call: a sibling not held back would ask again inside the wait.
        return Reply.tool_call("list_files", {"path": "."}, delta_pause=0.2)

    jobs = [(f"job{n}", "explore") for n in range(3)]
    fake_llm.respond_with(delegating(child, *jobs, then="done"))
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--output-format", "json")

    assert result.code == 0, result.stderr
    assert "The sub-agent failed" not in text_of(fake_llm.requests[-1])
    [at] = told
    # Allowing the 250 ms a 429 takes to reach the agent, nothing else went out in the window.
    assert not [t for t in arrivals if at + DELIVERY <= t < at + 2 - DELIVERY]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_a_fan_out_stopped_midway_resumes_with_a_valid_conversation(
    sig: signal.Signals, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    def respond(request: RecordedRequest) -> Step:
        if is_child(request):
            if "slow" in job_of(request):
                if answered(request):  # it wrote a file, then stalls
                    return Fault.stall(60, after_events=2, reply=Reply.text("still thinking"))
                return Reply.tool_call("write_file", {"path": "half.txt", "content": "half\n"})
            return Reply.text("quick answer")
        return task_calls(("quick", "explore"), ("slow", "general-purpose"))

    fake_llm.respond_with(respond)
    process = subprocess.Popen(
        agent_command("-p", "split the work", "--yes", "--model", MODELS["anthropic"]),
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while sum(is_child(r) for r in fake_llm.requests) < 3:
            assert time.monotonic() < deadline, "the children never asked"
            time.sleep(0.05)
        time.sleep(0.5)  # the slow child's stream has started and stalls
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL), stderr

    [summary] = SessionStore(decoy_home / ".agent").list()  # the children's are not listed
    fake_llm.reset()
    fake_llm.script(Reply.text("resumed"))
    resumed = run_agent(
        "-p",
        "go on",
        "--resume",
        summary.id,
        "--yes",
        "--model",
        MODELS["anthropic"],
        "--output-format",
        "json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["result"] == "resumed"
    [request] = fake_llm.requests
    assert request_problems("anthropic", request.body) == []
    results = request.body["messages"][-1]["content"]
    [stopped] = [r for r in results if "The sub-agent was interrupted" in json.dumps(r)]
    said = json.dumps(stopped["content"])
    assert "run it again" in said
    assert "Files it changed: half.txt" in said  # what it did before it stopped
    assert "- write_file half.txt" in said
    assert "quick answer" in json.dumps(results)  # the child that finished before the stop


def test_a_definition_file_gives_its_child_only_its_tools_and_a_broken_one_is_skipped(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reader.md").write_text(
        "---\nname: reader\ndescription: Reads files to answer a question.\n"
        "tools: Read, Grep\nmaxTurns: 3\n---\nYou answer from the files alone.\n"
    )
    (agents / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")

    fake_llm.respond_with(delegating(always(Reply.text("read it")), ("look", "reader"), then="ok"))
    result = run_parent(fake_llm, workspace, decoy_home, "openai", "--output-format", "json")

    assert result.code == 0, result.stderr
    assert f"{agents / 'broken.md'}:2" in result.stderr
    parent = fake_llm.requests[0]
    assert "- reader: Reads files to answer a question." in text_of(parent)
    [child] = [r for r in fake_llm.requests if is_child(r)]
    assert tool_names(child) == {"read_file", "search"}
    assert "You answer from the files alone." in text_of(child)
    assert "read it" in text_of(fake_llm.requests[-1])


def test_subagent_hooks_run_when_a_child_starts_and_stops(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    seen = workspace / "hooks"
    hook = recording_hook(seen)
    hooks = {
        "SubagentStart": [hook],
        "SubagentStop": [{"matcher": "explore", **hook}],
        "PreToolUse": [{"matcher": "Glob", **hook}],
        "PostToolUse": [{"matcher": "Glob", **hook}],
    }
    person_hooks(decoy_home, hooks)

    child = calls_then(Reply.tool_call("list_files", {"path": "."}), Reply.text("child answer"))
    fake_llm.respond_with(delegating(child, ("only", "explore")))
    result = run_parent(fake_llm, workspace, decoy_home, "anthropic", "--output-format", "json")

    assert result.code == 0, result.stderr
    events = {p["hook_event_name"]: p for p in hook_payloads(seen)}
    assert set(events) == {"SubagentStart", "SubagentStop", "PreToolUse", "PostToolUse"}
    assert events["PostToolUse"]["session_id"] == result.json()["session_id"]  # the parent's
    assert events["SubagentStop"]["agent_type"] == "explore"
    assert events["SubagentStart"]["agent_id"] == events["SubagentStop"]["agent_id"]
    assert events["SubagentStart"]["session_id"] == result.json()["session_id"]
    assert Path(events["SubagentStop"]["agent_transcript_path"]).is_file()


@pytest.mark.parametrize("name", ["Task", "Agent"])
def test_claude_codes_names_of_the_tool_work_in_permission_rules(
    name: str, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.respond_with(delegating(always(Reply.text("child answer")), ("only", "explore")))
    result = run_parent(
        fake_llm,
        workspace,
        decoy_home,
        "anthropic",
        "--disallowedTools",
        name,
        "--output-format",
        "json",
    )

    assert result.code == 0, result.stderr
    assert not [r for r in fake_llm.requests if is_child(r)]
    assert "Refused" in text_of(fake_llm.requests[-1])


def test_the_repl_shows_a_live_line_per_child_then_its_summary(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    child = calls_then(
        Reply.tool_call("list_files", {"path": "."}, input_tokens=1200),
        # slow to answer: its live line stays a while
        Reply.text("child answer", delta_pause=1.5, input_tokens=700),
    )
    jobs = (("left", "explore"), ("right", "explore"))
    fake_llm.respond_with(delegating(child, *jobs, then="All explored."))
    term = spawn("--yes")
    term.prompt()
    term.send_line("explore both sides")
    live = term.expect(r"explore: do (left|right) · thinking · \d+s · 1,2\d\d tokens", timeout=60)
    shown = clean(live + term.expect("All explored."))
    term.prompt()
    term.exit()

    assert "Traceback" not in shown
    assert "Sub-agent explore started" not in shown  # the live line says it
    assert shown.count("Sub-agent explore done: do") == 2
    assert sum(is_child(r) for r in fake_llm.requests) == 4


def test_a_childs_approval_question_names_it(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    child = calls_then(
        Reply.tool_call("write_file", {"path": "new.txt", "content": "hi\n"}),
        Reply.text("wrote it"),
    )
    job = ("make the file", "general-purpose")
    fake_llm.respond_with(delegating(child, job, then="Child wrote it."))
    term = spawn("--approval", "ask")
    term.prompt()
    term.send_line("delegate it")
    asked = clean(term.expect("Allow\\?"))
    term.send_line("y")
    term.expect("Child wrote it")
    term.prompt()
    term.exit()

    assert "sub-agent general-purpose: do make the file" in asked
    assert (workspace / "new.txt").read_text() == "hi\n"


def test_undo_puts_back_what_the_children_changed_in_the_last_turn(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / "kept.txt").write_text("before\n")
    turn = ["parent edits"]

    def respond(request: RecordedRequest) -> Step:
        if is_child(request):
            if answered(request):
                return Reply.text("wrote it")
            return Reply.tool_call("write_file", {"path": "child.txt", "content": "child\n"})
        if answered(request):
            return Reply.text("Done.")
        if turn[0] == "parent edits":
            return Reply.tool_call("write_file", {"path": "kept.txt", "content": "parent\n"})
        return task_calls(("write a file", "general-purpose"))

    fake_llm.respond_with(respond)
    term = spawn("--yes")
    term.prompt()
    term.command("first turn")
    turn[0] = "a child edits"
    term.command("second turn")
    assert (workspace / "child.txt").read_text() == "child\n"
    undone = clean(term.command("/undo"))
    term.exit()

    assert "Undid turn 2: 1 file put back." in undone
    assert not (workspace / "child.txt").exists()  # the child's edit, in the last turn
    assert (workspace / "kept.txt").read_text() == "parent\n"  # the turn before stays
