"""``!command`` runs in a session: user messages that wait for the next prompt."""

from __future__ import annotations

from pathlib import Path

from providers import Message, ToolResultBlock, ToolUseBlock
from sessions import SessionStore, is_shell_run, shell_run


def test_runs_alone_do_not_make_a_session_wait_for_an_answer(
    store: SessionStore, tmp_path: Path
) -> None:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("hello"))
        writer.append_message(Message.assistant("hi"))
        writer.append_message(shell_run("ls", "a.py\n"))
        writer.append_message(shell_run("pwd", "/w\n"))

    loaded = store.load(writer.id)

    assert loaded.repairs == []
    assert loaded.warnings == []
    assert loaded.view[-1] == Message(
        role="user", content=[*shell_run("ls", "a.py\n").content, *shell_run("pwd", "/w\n").content]
    )
    assert is_shell_run(loaded.view[-1])
    assert not loaded.ends_with_user_message


def test_a_run_after_an_interrupted_turn_leaves_that_turn_waiting(
    store: SessionStore, tmp_path: Path
) -> None:
    result = ToolResultBlock(tool_use_id="t1", content="interrupted", is_error=True)
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("go"))
        call = ToolUseBlock(id="t1", name="run_command", input={"command": "sleep 9"})
        writer.append_message(Message(role="assistant", content=[call]))
        writer.append_message(Message(role="user", content=[result]))
        writer.append_message(shell_run("ls", "a.py\n"))

    loaded = store.load(writer.id)

    assert not is_shell_run(loaded.view[-1])
    assert loaded.ends_with_user_message


def test_what_is_a_shell_run() -> None:
    assert shell_run("ls", "x").text == "<bash-input>ls</bash-input>\n<bash-stdout>x</bash-stdout>"
    assert is_shell_run(shell_run("ls", "x"))
    assert not is_shell_run(Message.user("run <bash-input>ls</bash-input>"))
    assert not is_shell_run(Message.assistant("<bash-input>ls</bash-input>"))
