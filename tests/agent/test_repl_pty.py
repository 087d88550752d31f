"""The real ``agent`` REPL in a pseudo-terminal, against the fake LLM server."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import pytest

from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Screen, Spawn, Terminal, clean
from tests.tools.test_run_command import running, wait_until_gone


def test_a_turn_with_a_tool_call_shows_the_call_and_the_answer(
    spawn: Spawn,
    fake_llm: FakeLlmServer,
    workspace: Path,
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "notes.txt"}),
        Reply.text("The file has **two** lines."),
    )
    term = spawn()
    term.prompt()
    term.send_line("what is in notes.txt?")

    shown = clean(term.expect("two"))
    term.prompt()

    assert "read_file(notes.txt)" in shown
    assert "alpha" in shown  # the excerpt
    out = clean(term.exit())
    assert "agent --resume" in out


def test_quitting_at_once_keeps_no_empty_session(spawn: Spawn, decoy_home: Path) -> None:
    term = spawn()
    term.prompt()
    term.command("/model")  # a command is not a conversation

    out = clean(term.exit())

    assert "agent --resume" not in out
    assert list((decoy_home / ".agent" / "sessions").glob("*.jsonl")) == []


def test_a_rate_limit_shows_a_live_countdown_then_the_answer(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Fault.status(429, headers={"retry-after": "3"}), Reply.text("Made it."))
    term = spawn()
    term.prompt()
    term.send_line("hello")

    # Each state of the status line, in order, as the screen shows it (the line is redrawn
    # by its changed cells: "2" becomes "1", so the bytes never hold "retrying in 1s").
    term.expect("Rate limited", timeout=30)
    for second in ("3s", "2s", "1s"):
        term.expect(f"retrying in {second}", timeout=10)
    term.expect("Made it", timeout=30)
    term.prompt()
    term.exit()


def test_ctrl_c_during_a_backoff_returns_to_the_prompt_at_once(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(429, headers={"retry-after": "30"}), Reply.text("late"))
    term = spawn()
    term.prompt()
    term.send_line("hello")
    term.expect("retrying in")

    started = time.monotonic()
    term.interrupt()
    term.expect("Interrupted")
    term.prompt(timeout=5)
    took = time.monotonic() - started

    assert took < 5  # generous for a loaded machine; the benchmark-free bound is the 30s wait
    assert len(fake_llm.requests) == 1
    out = clean(term.exit())
    assert "agent --resume" in out


def test_resume_after_a_restart_shows_the_last_exchange(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Reply.text("The capital is Paris."))
    first = spawn()
    first.prompt()
    first.send_line("capital of France?")
    first.expect("Paris")
    first.prompt()
    session_id = first.exit_for_resume()

    second = spawn()
    second.prompt()
    second.send_line(f"/resume {session_id}")
    shown = clean(second.expect("Paris"))
    second.prompt()

    assert "Resumed" in shown
    assert "capital of France?" in shown
    second.exit()


def test_undo_restores_a_file_the_turn_changed(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    target = workspace / "greet.py"
    target.write_text('print("helo")\n')
    fake_llm.script(
        Reply.tool_call(
            "edit_file", {"path": "greet.py", "old_string": "helo", "new_string": "hello"}
        ),
        Reply.text("Fixed."),
    )
    term = spawn("--yes")
    term.prompt()
    term.send_line("fix the typo")
    shown = clean(term.expect("Fixed"))
    term.prompt()
    assert '+print("hello")' in shown  # the edit is shown as a diff
    assert target.read_text() == 'print("hello")\n'

    term.send_line("/undo")
    shown = clean(term.expect("greet.py: restored"))
    term.prompt()
    assert "1 file put back" in shown

    assert target.read_text() == 'print("helo")\n'
    term.exit()


def test_undo_after_resume_restores_what_a_command_changed(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    keep = workspace / "keep.txt"
    keep.write_text("keep\n")
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "rm keep.txt && echo x > made.txt"}),
        Reply.text("Cleaned up."),
    )
    first = spawn("--yes")
    first.prompt()
    first.send_line("clean up")
    first.expect("Cleaned up")
    first.prompt()
    session_id = first.exit_for_resume()
    assert not keep.exists()

    second = spawn("--yes", "--resume", session_id)
    second.prompt()
    second.send_line("/undo")
    shown = clean(second.expect("2 files put back"))
    shown += clean(second.prompt())
    assert "keep.txt: restored" in shown
    assert "made.txt: removed (the turn created it)" in shown
    assert "file(s)" not in shown  # one report naming each file, not a count besides it

    assert keep.read_text() == "keep\n"
    assert not (workspace / "made.txt").exists()
    checkpoints = decoy_home / ".agent" / "checkpoints" / session_id
    assert checkpoints.stat().st_mode & 0o777 == 0o700
    second.send_line("/undo")
    second.expect("Nothing to undo")
    second.prompt()
    second.exit()


def _asked_to_write_new_txt(spawn: Spawn, fake_llm: FakeLlmServer) -> Terminal:
    """A REPL in ask mode whose model wants to write new.txt, at the approval question."""
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "new.txt", "content": "hi\n"}),
        Reply.text("Wrote it."),
    )
    term = spawn("--approval", "ask")
    term.prompt()
    term.send_line("make new.txt")
    term.expect("Allow\\?")
    return term


def test_ask_mode_prompts_for_approval_inside_the_repl(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    term = _asked_to_write_new_txt(spawn, fake_llm)
    term.send_line("y")
    term.expect("Wrote it")
    term.prompt()

    assert (workspace / "new.txt").read_text() == "hi\n"
    term.exit()


def test_unknown_commands_suggest_the_closest_one(spawn: Spawn) -> None:
    term = spawn()
    term.prompt()
    term.send_line("/stast")
    shown = clean(term.expect("Did you mean /\\w+"))
    assert "/stats" in shown
    term.prompt()
    shown = clean(term.command("/foo"))
    assert "Unknown command /foo." in shown
    assert "Did you mean" not in shown  # /doctor is no close match
    term.exit()


def test_ctrl_c_twice_at_an_empty_prompt_exits_with_the_resume_hint(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Reply.text("Noted."))
    term = spawn()
    term.prompt()
    term.send_line("remember this")
    term.expect("Noted")
    term.prompt()
    term.child.sendcontrol("c")
    term.expect("Ctrl-C again")
    term.prompt()
    term.child.sendcontrol("c")
    assert "agent --resume" in term.ended()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_during_a_turn_saves_the_session_and_says_how_to_resume(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path, sig: signal.Signals
) -> None:
    fake_llm.script(Fault.hang(30))
    terminal = spawn()
    terminal.prompt()
    terminal.send_line("take your time")
    deadline = time.monotonic() + 20
    while not fake_llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    terminal.child.kill(sig)
    output = terminal.ended(timeout=10)
    assert "Session saved. Resume with: agent --resume" in output
    assert terminal.child.exitstatus == 130
    session_file = next((decoy_home / ".agent" / "sessions").glob("*.jsonl"))
    assert '"interrupted"' in session_file.read_text()


def test_escape_sequences_from_a_file_and_the_answer_never_reach_the_terminal(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    # A cloned repository's file, read by the model, and the answer it writes: an OSC 52
    # sequence would put a command on the clipboard, a CSI one clear the screen.
    clipboard, clear = "\x1b]52;c;cm0gLXJmIH4=\x07", "\x1b[2J"
    (workspace / "README").write_text(f"hello {clipboard}\nworld {clear}\n")
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "README"}),
        Reply.text(f"It says hello {clipboard} and world {clear}. Done."),
    )
    term = spawn()
    term.prompt()
    term.send_line("what does README say?")

    shown = term.expect("Done") + term.prompt()

    assert "␛]52;c;cm0gLXJmIH4=" in shown  # shown, not obeyed
    assert "\x1b]52" not in term.raw
    assert "\x1b[2J" not in term.raw
    term.exit()


def test_undo_asks_before_undoing_an_older_turn_after_resume(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    # The first turn creates notes.txt; the next two change nothing. After a resume, /undo
    # must not silently reach back three turns: it names the turn and asks.
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "notes.txt", "content": "n\n"}),
        Reply.text("Wrote it."),
        Reply.text("Nothing to change."),
        Reply.text("Still nothing."),
    )
    first = spawn("--yes")
    first.prompt()
    for prompt, answer in (("write notes", "Wrote it"), ("look", "Nothing"), ("again", "Still")):
        first.send_line(prompt)
        first.expect(answer)
        first.prompt()
    session_id = first.exit_for_resume()

    second = spawn("--yes", "--resume", session_id)
    second.prompt()
    second.send_line("/undo")
    asked = clean(second.expect(r"\[y/N\]"))
    second.send_line("n")
    shown = clean(second.expect("Nothing undone"))
    second.prompt()
    assert "The last 2 turns changed no files" in asked
    assert "notes.txt (created)" in asked
    assert (workspace / "notes.txt").exists()

    second.send_line("/undo")
    second.expect(r"\[y/N\]")
    second.send_line("y")
    shown = clean(second.expect("notes.txt: removed"))
    second.prompt()
    second.exit()
    assert "1 file put back" in shown
    assert not (workspace / "notes.txt").exists()


def test_an_answer_that_is_not_one_is_asked_again(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    term = _asked_to_write_new_txt(spawn, fake_llm)
    term.send_line("maybe")
    shown = clean(term.expect("is not an answer"))
    term.expect("Allow\\?")
    assert not (workspace / "new.txt").exists()  # not taken as a no, nor as a yes
    term.send_line("y")
    term.expect("Wrote it")
    term.prompt()
    term.exit()

    assert "denied" not in shown
    assert (workspace / "new.txt").read_text() == "hi\n"


def test_sessions_does_not_list_the_empty_session_just_started(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Hello."))
    earlier = run_agent("-p", "hello", server=fake_llm, workspace=workspace, home=decoy_home)
    assert earlier.code == 0, earlier.stderr
    sessions = decoy_home / ".agent" / "sessions"
    [old] = [path.stem for path in sessions.glob("*.jsonl")]
    term = spawn()
    term.prompt()
    shown = clean(term.command("/sessions"))
    [new] = [path.stem for path in sessions.glob("*.jsonl") if path.stem != old]
    term.exit()

    assert old in shown
    assert new not in shown


def test_background_commands_show_in_the_status_line_and_bashes_stops_one(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "sleep 300.91", "run_in_background": True}),
        Reply.tool_call("run_command", {"command": "sleep 3"}),
        Reply.text("Server up."),
        Reply.tool_call("run_command", {"command": "sleep 300.92", "run_in_background": True}),
        Reply.text("Another one."),
    )
    term = spawn("--yes", env={"PROMPT_TOOLKIT_NO_CPR": ""})  # the toolbar needs known rows
    Screen(term, answer_cursor_queries=True)
    term.prompt()
    term.send_line("start it")
    term.expect("in the background as bash_1")  # the call's line
    term.expect(r"running run_command .*· 1 background")  # the status line, mid-turn
    term.expect("Server up")
    term.expect(r"1 background \(/bashes\)")  # the line under the prompt
    listed = clean(term.command("/bashes"))
    assert re.search(r"bash_1 +running +\d+s +sleep 300\.91", listed), listed
    term.send_line("/bashes kill bash_1")
    term.expect("bash_1 stopped by /bashes")
    term.prompt()
    assert wait_until_gone("sleep 300.91") == []
    term.send_line("one more")
    term.expect("Another one")
    term.prompt()
    assert running("sleep 300.92")
    term.exit()
    assert wait_until_gone("sleep 300.92") == []


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c twice"])
def test_leaving_the_repl_stops_its_background_commands(
    how: str, spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    marker = "sleep 300.93" if how == "sigterm" else "sleep 300.94"
    fake_llm.script(
        Reply.tool_call("run_command", {"command": marker, "run_in_background": True}),
        Reply.text("Running."),
    )
    term = spawn("--yes")
    term.prompt()
    term.send_line("start it")
    term.expect("Running")
    term.prompt()
    assert running(marker)
    if how == "sigterm":
        term.child.kill(signal.SIGTERM)
    else:
        term.interrupt()
        term.expect("Press Ctrl-C again")
        term.interrupt()
    term.ended()
    assert wait_until_gone(marker) == []
