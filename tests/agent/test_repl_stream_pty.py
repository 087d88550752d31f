"""The real REPL in a pseudo-terminal, its screen read through a terminal emulator: a streamed
answer is printed a line at a time, once, and nothing stands between the prompt and its toolbar.
"""

from __future__ import annotations

import re

import pexpect
import pytest

from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Screen, Spawn

SENTENCE = "the retry budget refills with time so a new run is never punished for an old one"
WORDS = SENTENCE.split(" ")
PROSE = "".join(f"line{n:02d} {' '.join(WORDS[n % 5 :][:12])}.\n" for n in range(30))
PROMPT_ROW = re.compile(r"^› ?")


def test_a_long_answer_without_blank_lines_is_printed_a_line_at_a_time_and_once(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    # 2 KB in 4-character deltas, 10 ms apart: the stream lasts about five seconds.
    fake_llm.script(Reply.text(PROSE, delta_chars=4, delta_pause=0.01))
    term = spawn()
    screen = Screen(term)
    term.prompt()
    before, start = screen.written, len(term.raw)
    term.send_line("tell me")

    term.expect("line05")
    during = "\n".join(screen.lines)
    term.prompt(timeout=60)
    raw = term.raw[start:]
    written = screen.written - before

    first = PROSE.splitlines()[0]
    assert first in screen.lines  # its own row, whole, while the answer was still coming
    assert first in during.splitlines()
    assert "line29" not in during
    for n in range(30):  # each line's words went to the terminal once, not at every refresh
        assert raw.count(f"line{n:02d}") == 1, f"line{n:02d}"
    assert [line for line in screen.lines if line.startswith("line")] == PROSE.splitlines()
    assert written <= 6 * len(PROSE.encode())  # the benchmark holds it to 3 (with colours)
    term.exit()


def test_a_code_fence_is_shown_highlighted_a_line_at_a_time_without_its_fence(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    answer = 'Run this:\n```python\ndef greet(name):\n    return f"hi {name}"\n```\nDone.\n'
    fake_llm.script(Reply.text(answer, delta_chars=3, delta_pause=0.005))
    term = spawn()
    screen = Screen(term)
    term.prompt()
    term.send_line("code please")
    term.expect("Done")
    term.prompt()

    shown = screen.lines
    start = shown.index("Run this:")
    assert shown[start : start + 6] == [
        "Run this:",
        "",
        "  def greet(name):",
        '      return f"hi {name}"',
        "",
        "Done.",
    ]
    assert not any("```" in line for line in shown)
    term.exit()


def test_a_secret_split_over_deltas_never_reaches_the_terminal(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    token = "ghp_" + "Q7b" * 12  # a key by its form: the agent does not know its value
    known = "sk-ant-test-key-0123456789"  # the key the agent runs with
    answer = f"Your token is {token} and your key {known} — keep both safe.\nNext line.\n"
    # Slow enough for the live area to be drawn while each key is half sent.
    fake_llm.script(Reply.text(answer, delta_chars=3, delta_pause=0.03))
    term = spawn()
    screen = Screen(term)
    term.prompt()
    term.send_line("what are my keys?")

    term.prompt(timeout=60)
    raw = term.raw  # everything written, escape sequences and all

    assert "keep both safe" in "\n".join(screen.lines)
    assert "[redacted" in "\n".join(screen.lines)
    assert "ghp_Q7b" not in raw
    assert "test-key" not in raw
    term.exit()


def _toolbar_row(screen: Screen) -> int:
    return next(n for n, line in enumerate(screen.display) if "session" in line)


def _prompt_row(screen: Screen) -> int:
    return max(n for n, line in enumerate(screen.display) if PROMPT_ROW.match(line))


def test_no_blank_lines_are_left_under_the_prompt(spawn: Spawn, fake_llm: FakeLlmServer) -> None:
    # prompt-toolkit kept room for a completion menu under every prompt: at the bottom of the
    # screen it scrolled the answer up and left seven blank lines under the prompt.
    fake_llm.script(Reply.text(PROSE + PROSE))
    term = spawn()
    screen = Screen(term)
    term.prompt()
    term.send_line("a long one")
    term.expect("line29", timeout=60)
    term.prompt()
    term.expect("›")
    term.child.expect([pexpect.TIMEOUT], timeout=1)  # the prompt's drawing has ended

    assert _prompt_row(screen) == 39  # the last row of the 40
    assert screen.display[38] == "no files changed"
    term.exit()


def test_where_the_terminal_reports_the_cursor_the_toolbar_is_under_the_prompt(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    # Knowing the rows below the cursor, prompt-toolkit grew the input to the screen's bottom
    # and pinned its toolbar there.
    fake_llm.script(Reply.text(PROSE + PROSE))
    term = spawn(env={"PROMPT_TOOLKIT_NO_CPR": ""})
    screen = Screen(term, answer_cursor_queries=True)
    term.prompt()
    term.expect("session")

    toolbar = _toolbar_row(screen)
    assert toolbar == _prompt_row(screen) + 1
    assert screen.display[toolbar + 1 :] == [""] * (39 - toolbar)

    term.child.send("/mo")  # a command being typed: its completions get room under the prompt
    term.expect("show or switch the model")
    term.child.sendcontrol("u")
    term.send_line("a long one")
    term.expect("line29")
    term.prompt()
    term.expect("session")
    assert (_prompt_row(screen), _toolbar_row(screen)) == (38, 39)
    term.exit()


PARAGRAPH = " ".join(f"word{n}" for n in range(1, 121))


@pytest.mark.parametrize(
    ("reflow", "anchor_bottom", "columns"),
    [
        (True, False, 60),
        (False, False, 60),
        # tmux keeps the blank rows under the text, so the rows a narrower width adds push
        # the top rows into the history: the live area must be small enough to stay below.
        (True, True, 30),
    ],
    ids=["rewrapping", "cutting", "tmux"],
)
def test_a_resize_mid_answer_leaves_the_answer_on_screen_once(
    spawn: Spawn, fake_llm: FakeLlmServer, reflow: bool, anchor_bottom: bool, columns: int
) -> None:
    answer = Reply.text(f"Intro line.\n\n{PARAGRAPH}\n\nThe end.\n", delta_chars=6)
    # About 80 words of the paragraph, then nothing until the test lets the rest come.
    fake_llm.script(Fault.stall(600, after_events=100, reply=answer))
    term = spawn()
    term.prompt()
    term.send_line("tell me")
    term.expect("word75", timeout=60)  # its line is still being written, its first rows printed

    term.resize(40, columns, reflow=reflow, anchor_bottom=anchor_bottom)
    term.expect("…")  # the status line is drawn again, cut at the new width
    fake_llm.reset()  # the rest of the answer
    term.expect("The end")
    term.prompt()
    lines = term.logical_lines()
    term.exit()

    assert sum(line.startswith("Intro line.") for line in lines) == 1, lines
    assert sum(line.startswith("The end.") for line in lines) == 1, lines
    if reflow:
        words = [word for line in lines for word in line.split() if word.startswith("word")]
        assert words == PARAGRAPH.split(), lines
        return
    # xterm cuts every row it shows at the new width, the answer's rows printed before the
    # resize too (a row's last word may be cut short): none twice, and the rest whole.
    shown = [line.split()[: -1 if len(line) == columns else None] for line in lines]
    numbers = [int(word[4:]) for words in shown for word in words if word.startswith("word")]
    assert numbers == sorted(set(numbers)), lines
    assert set(range(75, 121)) <= set(numbers), lines
