"""The scripting contract: stream-json events, stream-json input, and exit codes."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.fakes.cli import agent_command, agent_env, run_agent, wait_for_descendant
from tests.fakes.images import image_bytes
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer


def _lines(stdout: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in stdout.splitlines()]
    assert all(isinstance(line, dict) for line in lines)
    return lines


def _system(lines: list[dict[str, Any]], subtype: str) -> list[dict[str, Any]]:
    return [line for line in lines if line["type"] == "system" and line["subtype"] == subtype]


def _user(content: str | list[dict[str, Any]]) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}})


def _stream_in(
    fake_llm: FakeLlmServer, workspace: Path, home: Path, stdin: list[str], *flags: str
) -> list[dict[str, Any]]:
    """Run ``-p`` with ``stdin`` as stream-json input lines; the output lines, exit 0 checked."""
    proc = subprocess.run(
        agent_command(
            "-p", *flags, "--input-format", "stream-json", "--output-format", "stream-json"
        ),
        cwd=workspace,
        env=agent_env(fake_llm, home),
        input="\n".join(stdin) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return _lines(proc.stdout)


def test_stream_json_starts_with_init_carries_messages_and_ends_with_the_result(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "hello.py", "content": "print('hi')\n"}),
        Reply.text("Created hello.py."),
    )
    run = run_agent(
        "-p",
        "create hello.py",
        "--yes",
        "--model",
        "anthropic:claude-test",
        "--output-format",
        "stream-json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    lines = _lines(run.stdout)
    init, result = lines[0], lines[-1]
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert init["model"] == "anthropic:claude-test"
    assert "write_file" in init["tools"]
    assert init["approval"] == "full-auto"
    assert init["permissionMode"] == "bypassPermissions"  # Claude Code's key and name
    assert init["session_id"]
    assert init["version"]
    kinds = [line["type"] for line in lines[1:-1]]
    assert kinds == ["assistant", "user", "assistant"]
    tool_use = lines[1]["message"]["content"][-1]
    assert tool_use["type"] == "tool_use"
    assert tool_use["name"] == "write_file"
    tool_result = lines[2]["message"]["content"][0]
    assert tool_result["type"] == "tool_result"
    assert tool_result["tool_use_id"] == tool_use["id"]
    assert lines[3]["message"]["content"] == [{"type": "text", "text": "Created hello.py."}]
    assert result["type"] == "result"
    assert result["subtype"] == "success"
    assert result["is_error"] is False
    assert result["result"] == "Created hello.py."
    assert result["changed_files"] == ["hello.py"]
    assert result["num_turns"] == 2
    assert result["tool_calls"] == 1
    assert result["session_id"] == init["session_id"]
    assert {"duration_ms", "duration_api_ms", "usage", "total_cost_usd"} <= result.keys()
    assert all(line["session_id"] == init["session_id"] for line in lines)


def test_recovery_shows_in_the_stream_and_in_the_result(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Fault.status(529, "overloaded_error"),
        Fault.status(401, "authentication_error"),
        Reply.text("from the fallback"),
    )
    run = run_agent(
        "-p",
        "hi",
        "--model",
        "anthropic:claude-test",
        "--fallback-model",
        "openai:gpt-test",
        "--include-partial-messages",
        "--output-format",
        "stream-json",
        "--set",
        "recovery.overload_backoff=0.01",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    lines = _lines(run.stdout)
    (retry,) = _system(lines, "api_retry")
    assert retry["error"] == "overloaded"
    assert retry["error_status"] == 529
    assert retry["attempt"] == 2
    (fallback,) = _system(lines, "model_fallback")
    assert (fallback["from"], fallback["to"]) == ("anthropic:claude-test", "openai:gpt-test")
    deltas = [line for line in lines if line["type"] == "stream_event"]
    assert "".join(d["event"]["delta"]["text"] for d in deltas) == "from the fallback"
    result = lines[-1]
    assert result["retries"] == 1
    assert result["fallbacks"] == [
        {"from": "anthropic:claude-test", "to": "openai:gpt-test", "reason": fallback["reason"]}
    ]


def test_a_provider_that_cannot_answer_now_exits_75_with_the_resume_command(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(429, "rate_limit_error", headers={"retry-after": "7200"}))
    run = run_agent(
        "-p",
        "hi",
        "--output-format",
        "stream-json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 75, run.stderr
    lines = _lines(run.stdout)
    result = lines[-1]
    assert result["subtype"] == "error_provider_unavailable"
    assert result["is_error"]
    assert result["resume"] == f"agent --resume {result['session_id']}"
    assert _system(lines, "session_saved")

    text_run = run_agent("-p", "hi", server=fake_llm, workspace=workspace, home=decoy_home)
    assert text_run.code == 75
    assert "agent --resume" in text_run.stderr


def test_json_output_carries_the_same_run_report(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("I created hello.py."))  # a claim no tool backs
    run = run_agent(
        "-p",
        "create hello.py",
        "--output-format",
        "json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    data = run.json()
    assert data["status"] == "done"
    assert data["subtype"] == "success"
    assert data["changed_files"] == []
    assert data["tool_calls"] == 0
    assert isinstance(data["events"], list)


def test_stream_json_input_answers_each_line_and_skips_a_malformed_one(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("one"), Reply.text("two"))
    stdin = [
        _user("first"),
        "{not json",
        json.dumps({"type": "assistant", "message": {}}),
        _user([{"type": "text", "text": "second"}]),
    ]
    lines = _stream_in(fake_llm, workspace, decoy_home, stdin)
    results = [line for line in lines if line["type"] == "result"]
    assert [r["result"] for r in results] == ["one", "two"]
    errors = _system(lines, "input_error")
    assert [e["line"] for e in errors] == [2, 3]
    assert "not JSON" in errors[0]["error"]
    second_request = fake_llm.requests[1].body["messages"]
    assert "first" in json.dumps(second_request)
    assert "second" in json.dumps(second_request)


def test_stream_json_input_sends_an_image_block_as_an_image(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("red"))
    picture = image_bytes((40, 30))
    data = base64.b64encode(picture).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    damaged = {"type": "image", "source": {"type": "base64", "data": "AAAA"}}
    stdin = [_user([{"type": "text", "text": "colour?"}, image]), _user([damaged])]
    lines = _stream_in(fake_llm, workspace, decoy_home, stdin)

    assert [line["result"] for line in lines if line["type"] == "result"] == ["red"]
    [error] = _system(lines, "input_error")  # the damaged one: said, and nothing sent
    assert error["line"] == 2
    assert "image 1" in error["error"]
    [request] = fake_llm.requests
    [sent] = [b for b in request.body["messages"][-1]["content"] if b["type"] == "image"]
    assert base64.b64decode(sent["source"]["data"]) == picture


def test_stream_json_input_needs_stream_json_output(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent(
        "-p",
        "--input-format",
        "stream-json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 2
    assert "--output-format stream-json" in run.stderr


def test_a_prompt_with_stream_json_input_is_refused_before_anything_runs(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "notes.md").write_text("notes\n")
    fake_llm.script(Reply.text("answered"))
    proc = subprocess.run(
        agent_command(
            "-p", "/init @notes.md", "--input-format", "stream-json",
            "--output-format", "stream-json",
        ),
        cwd=workspace, env=agent_env(fake_llm, decoy_home), input=_user("hi") + "\n",
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert proc.returncode == 2
    assert "would be ignored" in proc.stderr
    assert "send it as the first line, or drop --input-format" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert fake_llm.requests == []  # neither the prompt's command nor stdin's message ran
    assert list((decoy_home / ".agent" / "sessions").glob("*")) == []  # no session began


def test_an_empty_or_dash_prompt_with_stream_json_input_reads_stdin(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("one"), Reply.text("two"))
    for prompt in ("", "-"):
        proc = subprocess.run(
            agent_command(
                "-p", prompt, "--input-format", "stream-json", "--output-format", "stream-json"
            ),
            cwd=workspace, env=agent_env(fake_llm, decoy_home), input=_user("hi") + "\n",
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    assert len(fake_llm.requests) == 2


def test_sigterm_saves_the_session_and_exits_143(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "sleep 30"}), Reply.text("unreachable")
    )
    proc = subprocess.Popen(
        agent_command("-p", "wait", "--yes", "--output-format", "stream-json"),
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_descendant(proc.pid, ["sleep", "30"])
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, stderr
    lines = _lines(stdout)
    assert lines[-1]["type"] == "result"
    assert lines[-1]["exit_code"] == 143
    assert _system(lines, "session_saved")


def test_files_a_command_changed_are_in_the_result(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "echo hi > made.txt"}),
        Reply.text("Made it."),
    )
    run = run_agent(
        "-p",
        "make a file",
        "--yes",
        "--output-format",
        "json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    assert run.json()["changed_files"] == ["made.txt"]


def test_stream_json_input_runs_commands_and_mentions_as_p_does(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "app.py").write_text("print('v1')\n")
    fake_llm.script(
        Reply.tool_call("edit_file", {"path": "app.py", "old_string": "v1", "new_string": "v2"}),
        Reply.text("1. Change v1 to v2."),
        Reply.tool_call("edit_file", {"path": "app.py", "old_string": "v1", "new_string": "v2"}),
        Reply.text("Done."),
    )

    stdin = [
        _user("/plan bump the version in @app.py"),
        _user("/nosuch thing"),
        _user("look at @missing.py"),
        _user("go ahead"),
    ]
    lines = _stream_in(fake_llm, workspace, decoy_home, stdin, "--yes")
    assert [r["result"] for r in lines if r["type"] == "result"] == ["1. Change v1 to v2.", "Done."]
    errors = _system(lines, "input_error")
    assert [e["line"] for e in errors] == [2, 3]
    assert "/nosuch is not a command" in errors[0]["error"]
    assert "missing.py" in errors[1]["error"]
    first = json.dumps(fake_llm.requests[0].body)
    assert '<file path=\\"app.py\\">' in first  # the mention was attached
    assert "plan mode" in json.dumps(fake_llm.requests[1].body)  # the edit was refused...
    assert (workspace / "app.py").read_text() == "print('v2')\n"  # ...until plan mode ended
    # Each change of mode, as Claude Code's status message says it.
    modes = [(s["status"], s["permissionMode"]) for s in _system(lines, "status")]
    assert modes == [(None, "plan"), (None, "bypassPermissions")]
