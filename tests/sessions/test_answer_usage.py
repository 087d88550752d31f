"""An answer's token usage is saved in the answer's own line; files that keep usage on lines
of their own (every file written before) still load and resume the same."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from providers import Message, ToolResultBlock, ToolUseBlock, Usage
from sessions import SessionStore
from sessions.ids import new_session_id
from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

CALL = Message(
    role="assistant", content=[ToolUseBlock(id="t1", name="read_file", input={"path": "a.py"})]
)
RESULT = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="x = 1")])


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_in_a_step_the_usage_rides_in_the_answer_line(store: SessionStore, tmp_path: Path) -> None:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("read a.py"))
        with writer.group_commit():
            writer.append_usage(Usage(input_tokens=30, output_tokens=4), "anthropic:x", "turn")
            writer.append_message(CALL)
            writer.append_message(RESULT)

    lines = _lines(writer.path)
    assert [line["type"] for line in lines] == [
        "header",
        "message",
        "message",
        "message",
    ]
    answer = lines[2]
    assert answer["message"]["role"] == "assistant"
    assert (answer["usage"]["input_tokens"], answer["model"], answer["kind"]) == (
        30,
        "anthropic:x",
        "turn",
    )
    assert "usage" not in lines[1]  # the other lines as they were
    assert "usage" not in lines[3]
    assert [seen["path"] for seen in lines[3]["files"]] == [str(tmp_path.resolve() / "a.py")]
    loaded = store.load(writer.id)
    assert loaded.messages == [Message.user("read a.py"), CALL, RESULT]
    assert loaded.usage_total == Usage(input_tokens=30, output_tokens=4)
    assert loaded.usage_by_model == {"anthropic:x": Usage(input_tokens=30, output_tokens=4)}
    assert loaded.usage_by_kind == {"turn": Usage(input_tokens=30, output_tokens=4)}


def test_usage_no_answer_carries_gets_a_line_of_its_own(
    store: SessionStore, tmp_path: Path
) -> None:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("go"))
        with writer.group_commit():
            # A summary's tokens, then the compaction it made: saved before that record.
            writer.append_usage(Usage(input_tokens=500), "anthropic:x", "compaction")
            writer.append_compaction([Message.user("summary")])
            # A truncated answer asked again: the first usage is saved when the second comes.
            writer.append_usage(Usage(input_tokens=7), "anthropic:x", "turn")
            writer.append_usage(Usage(input_tokens=9), "anthropic:x", "turn")
            writer.append_message(Message.assistant("done"))
        with writer.group_commit():
            writer.append_usage(Usage(input_tokens=11), "anthropic:y", "turn")
            # The step ended without saving an answer (a failed turn): saved at its end.
        writer.append_usage(Usage(input_tokens=13), "anthropic:y", "turn")  # outside a step

    kinds = [
        (line["type"], line.get("usage", {}).get("input_tokens")) for line in _lines(writer.path)
    ]
    assert kinds == [
        ("header", None),
        ("message", None),
        ("usage", 500),
        ("compaction", None),
        ("usage", 7),
        ("message", 9),
        ("usage", 11),
        ("usage", 13),
    ]
    loaded = store.load(writer.id)
    assert loaded.usage_total == Usage(input_tokens=540)
    assert loaded.usage_by_kind == {
        "compaction": Usage(input_tokens=500),
        "turn": Usage(input_tokens=40),
    }
    assert loaded.usage_by_model["anthropic:y"] == Usage(input_tokens=24)


def test_usage_held_when_the_session_closes_is_saved(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(cwd=tmp_path, model_chain=["anthropic:x"])
    with writer.group_commit():
        writer.append_message(Message.user("go"))
        writer.append_usage(Usage(input_tokens=3), "anthropic:x", "turn")
        writer.close()  # Ctrl-C ended the agent while the answer was on its way

    assert store.load(writer.id).usage_total == Usage(input_tokens=3)


def _old_format_session(store: SessionStore, cwd: Path) -> str:
    """A session as every earlier version wrote it: each answer's usage on its own line,
    before the answer; the last step was cut off by a kill (a call without its result)."""
    session_id = new_session_id(1_700_000_000)
    lines: list[dict[str, Any]] = [
        {
            "type": "header",
            "format": 1,
            "id": session_id,
            "cwd": str(cwd),
            "model_chain": ["anthropic:claude-test"],
            "parent": None,
            "parent_tool_use_id": None,
        },
        {
            "type": "message",
            "message": {"role": "user", "content": [{"type": "text", "text": "read a.py"}]},
        },
        {
            "type": "usage",
            "usage": {
                "input_tokens": 30,
                "output_tokens": 4,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
            },
            "model": "claude-test",
            "kind": "turn",
        },
        {"type": "message", "message": CALL.model_dump(mode="json")},
        {
            "type": "event",
            "event": {"type": "tool_started", "tool": "read_file", "tool_use_id": "t1"},
        },
        {"type": "message", "message": RESULT.model_dump(mode="json")},
        {
            "type": "usage",
            "usage": {"input_tokens": 40, "output_tokens": 2},
            "model": "claude-test",
            "kind": "turn",
        },
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "b.py"}}
                ],
            },
        },
        {
            "type": "event",
            "event": {"type": "tool_started", "tool": "read_file", "tool_use_id": "t2"},
        },
    ]
    text = "".join(
        json.dumps({"ts": 1_700_000_000 + n, **line}) + "\n" for n, line in enumerate(lines)
    )
    store.directory.mkdir(parents=True, exist_ok=True)
    (store.directory / f"{session_id}.jsonl").write_text(text)
    return session_id


def test_an_old_format_session_loads_and_continues_unchanged(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id = _old_format_session(store, tmp_path)

    loaded, writer = store.open(session_id)
    with writer, writer.group_commit():
        writer.append_usage(Usage(input_tokens=50, output_tokens=1), "claude-test", "turn")
        writer.append_message(Message.assistant("Both read."))

    assert loaded.warnings == []
    assert loaded.usage_total == Usage(input_tokens=70, output_tokens=6)
    assert loaded.usage_by_kind == {"turn": Usage(input_tokens=70, output_tokens=6)}
    assert loaded.view[:3] == [Message.user("read a.py"), CALL, RESULT]
    assert loaded.view[-1].tool_results[0].tool_use_id == "t2"  # the cut call answered
    again = store.load(session_id)
    assert again.usage_total == Usage(input_tokens=120, output_tokens=7)  # old lines and new
    assert again.messages[-1] == Message.assistant("Both read.")


def test_the_cli_resumes_an_old_format_session(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    session_id = _old_format_session(SessionStore(decoy_home / ".agent"), workspace)
    fake_llm.script(Reply.text("Carried on."))

    run = run_agent(
        "-p",
        "go on",
        "--resume",
        session_id,
        "--output-format",
        "json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    assert run.json()["result"] == "Carried on."
    sent = fake_llm.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[3]["content"][0]["id"] == "t2"
    answered = [
        block["tool_use_id"] for block in sent[4]["content"] if block["type"] == "tool_result"
    ]
    assert answered == ["t2"]


KILLED_AFTER_THE_ANSWER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from providers import Message, ToolUseBlock, Usage
    from sessions import SessionStore

    writer = SessionStore(Path(sys.argv[1])).create(cwd=Path.cwd(), model_chain=["anthropic:x"])
    writer.append_message(Message.user("run it"))
    with writer.group_commit():
        writer.append_usage(Usage(input_tokens=21, output_tokens=3), "anthropic:x", "turn")
        call = ToolUseBlock(id="t1", name="run_command", input={"command": "sleep 60"})
        writer.append_message(Message(role="assistant", content=[call]))
        print(writer.id, flush=True)  # the answer is saved: the tool runs
        time.sleep(60)  # killed here, while the tool runs, before the step's fsync
    """
)


@pytest.mark.timeout(60)
def test_a_kill_while_the_tool_runs_keeps_the_answer_and_its_usage(
    tmp_path: Path, killed_writer: Callable[[str], str]
) -> None:
    session_id = killed_writer(KILLED_AFTER_THE_ANSWER)

    loaded = SessionStore(tmp_path / "home").load(session_id)

    assert loaded.usage_total == Usage(input_tokens=21, output_tokens=3)
    assert [m.role for m in loaded.view] == ["user", "assistant", "user"]  # call answered
    assert loaded.view[-1].tool_results[0].tool_use_id == "t1"
