"""NO_COLOR (no-color.org): set and not empty, the REPL draws no color at all. Bold, dim and
reverse are not color, and the convention keeps them: they still mark the prompt's parts, a
tool line's name and the status line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn

SGR = re.compile(r"\x1b\[([0-9;]*)m")
COLOR = {*range(30, 38), 38, *range(40, 48), 48, *range(90, 98), *range(100, 108)}


def colors(raw: str) -> set[str]:
    """The SGR sequences in ``raw`` that set a foreground or background color."""
    found = set()
    for match in SGR.finditer(raw):
        codes = [int(code) for code in match.group(1).split(";") if code]
        if any(code in COLOR for code in codes):
            found.add(match.group())
    return found


def _a_turn_with_a_tool(spawn: Spawn, fake_llm: FakeLlmServer, env: dict[str, str]) -> str:
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "a.txt", "content": "hi\n"}),
        Reply.text("**Done**, wrote `a.txt`."),
    )
    term = spawn("--yes", env=env)
    term.prompt()
    term.send_line("write a.txt")
    term.expect("wrote")
    term.prompt()
    term.command("/help")
    term.exit()
    return term.raw


@pytest.mark.parametrize("value", ["1", "true"])
def test_no_color_removes_every_color(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, value: str
) -> None:
    raw = _a_turn_with_a_tool(spawn, fake_llm, {"NO_COLOR": value})
    assert colors(raw) == set()
    assert "\x1b[1m" in raw  # bold stays: it is not color


def test_without_no_color_there_is_color(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    raw = _a_turn_with_a_tool(spawn, fake_llm, {"NO_COLOR": ""})  # empty: not set
    assert colors(raw)
