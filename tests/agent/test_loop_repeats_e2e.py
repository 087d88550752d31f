"""End to end: ``agent -p`` stops a model that repeats a successful call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.cli import MODELS, PrintRun, Protocol, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_model_repeating_a_successful_call_is_stopped_with_a_clear_status(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, print_run: PrintRun
) -> None:
    for name in ("README.md", "main.py", "test_main.py"):
        (workspace / name).write_text("x\n")
    fake_llm.script(*[Reply.tool_call("list_files", {}) for _ in range(20)])

    run = print_run("list the files here", "--output-format", "json", model=MODELS[protocol])

    assert run.code == 1, run.stderr
    data = run.json()
    assert data["status"] == "repeated_call"
    assert "called list_files 4 times" in data["error"]
    assert len(fake_llm.requests) == 4
    assert "you already have it" in str(fake_llm.requests[-1].body)
    assert "Traceback" not in run.stderr


def test_the_limit_comes_from_the_config(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, print_run: PrintRun
) -> None:
    (workspace / "agent.yaml").write_text("tools:\n  repeated_call_limit: 6\n")
    fake_llm.script(*[Reply.tool_call("list_files", {}) for _ in range(20)])

    run = print_run("list the files here", model=MODELS["openai"])

    assert run.code == 1
    assert "called list_files 6 times" in run.stderr
    assert "tools.repeated_call_limit" in run.stderr
    assert len(fake_llm.requests) == 6
    sessions = run_agent("sessions", server=fake_llm, workspace=workspace, home=decoy_home)
    assert "repeated_call" in sessions.stdout


def test_a_tiny_model_is_offered_few_tools_and_stopped_early(
    fake_llm: FakeLlmServer, workspace: Path, print_run: PrintRun
) -> None:
    (workspace / "README.md").write_text("x\n")
    fake_llm.script(*[Reply.tool_call("list_files", {}) for _ in range(20)])

    run = print_run("fix the failing test", "--yes", model="openai:smollm2")

    assert run.code == 1
    assert "This is a tiny model" in run.stderr
    assert "called list_files 3 times" in run.stderr
    assert len(fake_llm.requests) == 3
    offered = [tool["function"]["name"] for tool in fake_llm.requests[0].body["tools"]]
    assert offered == ["read_file", "list_files", "search"]
