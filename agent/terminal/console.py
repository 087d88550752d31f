"""Terminal output that never lets a control character in text reach the terminal.

Model answers, tool output, file contents, server errors and session files are untrusted. An
escape sequence in them, printed as it is, would be obeyed by the terminal: clear the screen
over what the agent did, retitle the window, forge a hyperlink, or write the clipboard
(OSC 52) with a command for the person to paste. rich writes text as it is, so every console
agent prints through is a `SafeConsole`, and text written around rich goes through `visible`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

VISIBLE = {
    **{code: 0x2400 + code for code in range(0x20) if chr(code) not in "\n\t"},  # ␀ … ␟
    0x7F: 0x2421,  # ␡
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),  # C1 controls (0x9B is a one-byte CSI)
}
"""`str.translate` table: each control character but newline and tab becomes one visible
character (ESC shows as ␛), so a text's length, and the spans styling it, stay the same."""


def visible(text: str) -> str:
    """``text`` with its control characters (but newline and tab) shown, not obeyed."""
    return text.translate(VISIBLE)


class SafeConsole(Console):
    """A rich `Console` whose text segments are passed through `visible`.

    rich's own control output (the live status line moving the cursor, clearing a line) is
    made of control segments, which pass as they are; styles are rendered from their
    `Style`, not from the text.
    """

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(visible(segment.text), segment.style)
            for segment in buffer
        )
