"""The pty helper returns what the screen shows, however the words reached the terminal."""

from __future__ import annotations

import sys

import pexpect

from tests.fakes.terminal import Terminal

# "Seen " on a row, the status line under it, then back up to finish the row: as the live
# view draws a line before and after its last word arrives. Then a prompt-like marker.
SPLIT = (
    "import sys, time\n"
    "w = sys.stdout.write\n"
    "w('Seen \\r\\n\\x1b[2m* writing\\x1b[0m\\x1b[1A\\r\\x1b[5C'); sys.stdout.flush()\n"
    "time.sleep(0.3)\n"
    "w('both.\\r\\n\\x1b[K\\r\\n'); sys.stdout.flush()\n"
    "time.sleep(0.3)\n"
    "w('\\x1b[?2004hnext\\r\\n'); sys.stdout.flush()\n"
    "time.sleep(0.5)\n"
)


def _run(script: str) -> Terminal:
    child = pexpect.spawn(
        sys.executable, ["-c", script], dimensions=(10, 40), encoding="utf-8", timeout=10
    )
    return Terminal(child)


def test_a_line_written_in_pieces_is_found_and_returned_whole() -> None:
    term = _run(SPLIT)

    shown = term.expect("Seen both", timeout=5)

    assert shown.splitlines()[0] == "Seen both."
    assert "\x1b" not in shown
    assert "\x1b[2m* writing" in term.raw  # the bytes as written are kept too
    term.ended()


def test_what_follows_a_match_on_screen_is_left_for_the_next_wait() -> None:
    term = _run(SPLIT)
    term.expect("Seen both", timeout=5)

    term.prompt(timeout=5)  # the marker after it was not swallowed by the screen match

    assert term.ended() == "next"


def test_each_wait_returns_the_rows_drawn_since_the_last() -> None:
    term = _run("import time; print('one'); print('two'); time.sleep(0.3); print('three')")

    assert term.expect("two") == "one\ntwo"
    assert term.ended() == "two\nthree"  # the cursor's row was still open to more


def test_a_cleared_screen_returns_what_was_drawn_after_the_clear() -> None:
    script = (
        "import time\n"
        "for n in range(5): print(f'old{n}')\n"
        "time.sleep(0.3)\n"
        "print('\\x1b[2J\\x1b[Hfresh')"
    )
    term = _run(script)
    term.expect("old4")

    assert term.ended() == "fresh"
