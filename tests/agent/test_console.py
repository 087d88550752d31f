"""Text printed to the terminal never carries a control sequence the terminal would obey."""

from __future__ import annotations

import io

from rich.control import Control
from rich.markdown import Markdown
from rich.text import Text

from agent.terminal.console import SafeConsole, visible

CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: put "rm -rf ~" on the clipboard
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b2J"


def terminal(**options: object) -> tuple[SafeConsole, io.StringIO]:
    buffer = io.StringIO()
    console = SafeConsole(file=buffer, force_terminal=True, width=80, **options)  # type: ignore[arg-type]
    return console, buffer


def test_escape_sequences_in_text_are_shown_not_obeyed() -> None:
    console, buffer = terminal(color_system=None)

    console.print(Text(f"a {CLIPBOARD} b", style="bold"))
    console.print(Markdown(f"# title\n\nsome {CLEAR} *text* {C1_CSI}"))
    console.print(f"plain {CLIPBOARD}", markup=False)

    shown = buffer.getvalue()
    assert "\x1b" not in shown
    assert "\x9b" not in shown
    assert "\x07" not in shown
    assert "␛]52;c;cm0gLXJmIH4=" in shown
    assert "text" in shown


def test_styles_and_the_consoles_own_control_codes_still_work() -> None:
    console, buffer = terminal(color_system="standard")

    console.print(Text("ok", style="red"))
    console.control(Control.move_to_column(0))

    shown = buffer.getvalue()
    assert "\x1b[31mok\x1b[0m" in shown
    assert "\x1b[1G" in shown


def test_visible_keeps_lines_tabs_and_length() -> None:
    text = f"a\tb\n{CLEAR}\x7f"
    assert visible(text) == "a\tb\n␛[2J␛[H␡"
    assert len(visible(text)) == len(text)
