"""End to end: the real ``agent -p`` in a subprocess, the real SDKs, the fake LLM server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.cli import MODELS, PrintRun, Protocol
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

PROTOCOLS: list[Protocol] = ["anthropic", "openai"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_multi_step_task_reads_edits_runs_and_answers(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, print_run: PrintRun
) -> None:
    (workspace / "greet.py").write_text('print("helo")\n')
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "greet.py"}),
        Reply.tool_call(
            "edit_file", {"path": "greet.py", "old_string": "helo", "new_string": "hello"}
        ),
        Reply.tool_call("run_command", {"command": "python3 greet.py"}),
        Reply.text("Fixed the typo; greet.py now prints hello."),
    )

    run = print_run("fix the typo in greet.py", "--yes", model=MODELS[protocol])

    assert run.code == 0, run.stderr
    assert (workspace / "greet.py").read_text() == 'print("hello")\n'
    assert "Fixed the typo" in run.stdout
    requests = fake_llm.requests
    assert len(requests) == 4
    last = str(requests[-1].body)
    assert "hello" in last  # the command's output went back to the model
    assert all(
        r.path.endswith("/messages" if protocol == "anthropic" else "/completions")
        for r in requests
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_json_output_has_the_documented_fields(
    protocol: Protocol, fake_llm: FakeLlmServer, print_run: PrintRun
) -> None:
    fake_llm.script(Reply.text("All good."))

    run = print_run("hi", "--output-format", "json", model=MODELS[protocol])

    assert run.code == 0, run.stderr
    data = run.json()
    assert set(data) == {
        *("session_id", "status", "result", "error", "events", "usage", "usage_by_purpose"),
        # The run report every output format shares (docs/scripting.md).
        *("subtype", "is_error", "num_turns", "duration_ms", "duration_api_ms"),
        *("tool_calls", "changed_files", "permission_denials", "retries", "fallbacks"),
        *("total_cost_usd", "exit_code"),
    }
    assert data["status"] == "done"
    assert data["result"] == "All good."
    assert data["error"] is None
    assert data["usage"]["output_tokens"] == 7
    assert data["session_id"]
