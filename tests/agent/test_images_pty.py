"""Images at the REPL prompt, in a real pseudo-terminal: ``@shot.png``, Ctrl-V with an image
on the clipboard (read by a stand-in ``xclip``, a real program on PATH), Ctrl-V with no
clipboard tool, and a pasted image path."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from tests.fakes.images import write_image
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, Terminal

WAIT = 120  # a busy machine starts the REPL slowly; nothing here waits on purpose


def _leave(term: Terminal) -> None:
    term.child.sendcontrol("d")
    term.ended(WAIT)


def _sent_images(fake_llm: FakeLlmServer) -> list[bytes]:
    content = fake_llm.requests[-1].body["messages"][-1]["content"]
    return [base64.b64decode(b["source"]["data"]) for b in content if b["type"] == "image"]


def test_a_mentioned_image_goes_with_the_prompt(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    picture = write_image(workspace / "shot.png", (80, 60))
    fake_llm.script(Reply.text("A red square."))
    term = spawn()
    term.prompt(WAIT)
    shown = term.command("what is in @shot.png?", WAIT)
    _leave(term)

    assert "Attached shot.png" in shown
    assert "A red square." in shown
    assert _sent_images(fake_llm) == [picture.read_bytes()]


def test_ctrl_v_pastes_the_clipboard_image_as_a_mark(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, tmp_path: Path
) -> None:
    picture = write_image(tmp_path / "clip.png", (50, 40))
    tools = tmp_path / "bin"
    tools.mkdir()
    xclip = tools / "xclip"
    xclip.write_text(f"#!/bin/sh\nexec cat '{picture}'\n")
    xclip.chmod(0o755)
    fake_llm.script(Reply.text("A pasted picture."))
    env = {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "DISPLAY": ":99"}
    term = spawn(env={**env, "WAYLAND_DISPLAY": ""})
    term.prompt(WAIT)
    term.child.send("\x16")  # Ctrl-V
    term.expect(r"\[Image #1\]", WAIT)
    shown = term.command(" what is this?", WAIT)
    _leave(term)

    assert "A pasted picture." in shown
    assert _sent_images(fake_llm) == [picture.read_bytes()]


def test_ctrl_v_without_a_clipboard_tool_says_so_and_sends_nothing(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    term = spawn(env={"DISPLAY": "", "WAYLAND_DISPLAY": ""})
    term.prompt(WAIT)
    term.child.send("\x16")
    shown = term.expect("Install wl-clipboard", WAIT)
    # The prompt draws the message and never leaves raw mode: keys typed at once are the
    # prompt's, never the tty's (a Ctrl-C taken as SIGINT, a Ctrl-D as end of input).
    term.child.send("typed\x16\x03")  # Ctrl-C clears the line...
    term.child.send("after")
    term.expect("› after", WAIT)
    screen = term.lines()
    term.child.send("\x03")
    _leave(term)  # ...and Ctrl-D at the empty line leaves

    assert "Ctrl-V: no clipboard tool found to read an image with" in shown
    assert not any("Press Ctrl-C again" in line for line in screen), screen
    assert not any("typed" in line for line in screen), screen
    assert fake_llm.requests == []


def test_a_pasted_image_path_outside_the_workspace_is_attached(
    spawn: Spawn, fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    folder = tmp_path / "Screen Shots"
    folder.mkdir()
    picture = write_image(folder / "shot 1.png", (70, 30))
    fake_llm.script(Reply.text("Seen."))
    term = spawn()
    term.prompt(WAIT)
    shown = term.command(f"fix this '{picture}'", WAIT)
    _leave(term)

    assert "Attached shot 1.png" in shown
    assert _sent_images(fake_llm) == [picture.read_bytes()]
