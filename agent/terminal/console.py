"""Terminal output that never lets a control character in text reach the terminal.

Model answers, tool output, file contents, server errors and session files are untrusted. An
escape sequence in them, printed as it is, would be obeyed by the terminal: clear the screen
over what the agent did, retitle the window, forge a hyperlink, or write the clipboard
(OSC 52) with a command for the person to paste. rich writes text as it is, so every console
agent prints through is a `SafeConsole`, and text written around rich goes through `visible`.

Characters the terminal draws as nothing are as dangerous in a command to approve: a
right-to-left override (U+202E) shows ``rm -rf ~/x`` reversed as something harmless, a
zero-width space makes two different paths look the same. Those are shown by their code
point (``<U+202E>``); the text a tool returns to the model keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

INVISIBLE = frozenset(
    (
        0x00AD,  # soft hyphen
        0x034F,  # combining grapheme joiner
        0x061C,  # Arabic letter mark
        0x115F,  # Hangul fillers
        0x1160,
        0x17B4,  # Khmer inherent vowels
        0x17B5,
        0x180E,  # Mongolian vowel separator
        *range(0x200B, 0x2010),  # zero-width space, non-joiner, joiner; LRM, RLM
        *range(0x2028, 0x202F),  # line and paragraph separators; LRE, RLE, PDF, LRO, RLO
        *range(0x2060, 0x2070),  # word joiner, invisible operators; LRI, RLI, FSI, PDI, ...
        0x3164,  # Hangul filler
        0xFEFF,  # zero-width no-break space (byte order mark)
        0xFFA0,  # halfwidth Hangul filler
        *range(0xFFF9, 0xFFFC),  # interlinear annotation
        *range(0xE0000, 0xE0080),  # tags: invisible ASCII ("ASCII smuggling")
        *range(0xE0100, 0xE01F0),  # variation selectors 17-256
    )
)
"""Characters a terminal draws as nothing, or that reorder or hide the text around them:
bidirectional controls, zero-width and other invisible format characters."""

VISIBLE: dict[int, int | str] = {
    **{code: 0x2400 + code for code in range(0x20) if chr(code) not in "\n\t"},  # ␀ … ␟
    0x7F: 0x2421,  # ␡
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),  # C1 controls (0x9B is a one-byte CSI)
    **{code: f"<U+{code:04X}>" for code in INVISIBLE},
}
"""`str.translate` table: each control character but newline and tab becomes one visible
character (ESC shows as ␛), so a text's length, and the spans styling it, stay the same;
each `INVISIBLE` character becomes its code point, ``<U+202E>``."""


def visible(text: str) -> str:
    """``text`` with its control characters (but newline and tab) shown, not obeyed, and its
    invisible ones named."""
    return text.translate(VISIBLE)


def hidden_characters(text: str) -> int:
    """How many `INVISIBLE` characters ``text`` holds."""
    if text.isascii():  # nearly every text: no look at each character
        return 0
    return sum(1 for char in text if ord(char) in INVISIBLE)


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
