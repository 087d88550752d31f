"""The live area at the bottom of a turn's output, kept fresh by writing only what changed.

rich's `Live` redraws its whole renderable at every refresh: an answer kept live was written
to the terminal again eight times a second, 37 to 900 bytes for each byte of it
(`benchmarks/terminal_bytes_bench.py`). Here an
`AreaPainter` compares the new rows with those on the terminal and writes the difference;
rows printed for good (an answer's finished lines) go through the same update, so a line the
area showed already stays where it is.

Anything else printed on the console meanwhile goes through `process_renderables`: the area is
cleared, the output printed, and the area drawn again under it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

import structlog
from rich.console import COLOR_SYSTEMS, Console, ConsoleOptions, ConsoleRenderable, RenderHook
from rich.control import Control
from rich.segment import ControlType, Segment

from agent.terminal.area_painter import CSI, AreaPainter, Cell, runs, to_cells

Row = list[Segment]
Frame = tuple[list[Row], list[Row]]
"""Rows to print for good, then the rows of the area (its last row is the status line)."""

log = structlog.get_logger("agent.terminal.live")


class LiveArea(RenderHook):
    """A few rows under the output, updated in place.

    Args:
        console: The terminal console.
        frame: What to show now (called at each refresh, under ``lock``).
        lock: Held while the area is drawn or the console printed to; whoever prints on the
            console from another thread holds it too.
        refresh_per_second: How often `frame` is asked for and drawn.
    """

    def __init__(
        self,
        console: Console,
        frame: Callable[[], Frame],
        lock: threading.RLock,
        refresh_per_second: float = 8,
    ) -> None:
        self.console = console
        self.frame = frame
        self.lock = lock
        self.interval = 1 / refresh_per_second
        self.painter = AreaPainter(COLOR_SYSTEMS.get(console.color_system or ""), console.no_color)
        self._width = console.width
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Keep the area drawn and fresh until `stop`, from the first refresh on (an eighth of
        a second: a turn's start has set its Ctrl-C handler by then)."""
        with self.lock:
            self.console.push_render_hook(self)
            self._write(CSI + "?25l")  # no cursor jumping about the area
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="live-area", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop refreshing and clear the area; the cursor is left where it began."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self.lock:
            self._write(self.painter.erase() + CSI + "?25h")
            self.console.pop_render_hook()

    def refresh(self) -> None:
        """Show the current frame."""
        with self.lock:
            printed, area = self.frame()
            self.update(printed, area)

    def update(self, printed: list[Row], area: list[Row]) -> None:
        """Print ``printed`` for good above the area, and show ``area``."""
        with self.lock:
            width, height = self.console.width, max(self.console.height - 1, 1)
            area = area[-height:]
            new = [to_cells(row, width) for row in printed + area]
            out = ""
            if width != self._width:  # rows may have been rewrapped: clear, then draw anew
                out, self._width = self.painter.erase(), width
            self._write(out + self.painter.paint(new, len(area), height, width))

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        """Clear the area for output printed meanwhile; draw it again below that output."""
        with self.lock:
            down, rows = self.painter.lift()
            if not rows:
                return renderables
            codes: list[ControlType | tuple[ControlType, int]] = []
            if down > 0:
                codes.append((ControlType.CURSOR_DOWN, down))
            elif down < 0:
                codes.append((ControlType.CURSOR_UP, -down))
            codes += [ControlType.CARRIAGE_RETURN, (ControlType.ERASE_IN_LINE, 2)]
            codes += [(ControlType.CURSOR_UP, 1), (ControlType.ERASE_IN_LINE, 2)] * (len(rows) - 1)
            return [Control(*codes), *renderables, _Redraw(self, rows)]

    def _write(self, text: str) -> None:
        if text:
            self.console.file.write(text)
            self.console.file.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.refresh()
            except Exception:  # a frame that fails to draw must not end the turn
                log.exception("live_area_refresh_failed")


class _Redraw:
    """The area drawn again, whole, under output printed while it was shown."""

    def __init__(self, area: LiveArea, rows: list[list[Cell]]) -> None:
        self.area = area
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        with self.area.lock:
            self.area.painter.drawn(self.rows)
        for index, row in enumerate(self.rows):
            if index:
                yield Segment.line()
            for text, style in runs(row, 0, len(row)):
                yield Segment(text, style)
        yield Control(ControlType.CARRIAGE_RETURN).segment
        if len(self.rows) > 1:  # where the painter keeps the cursor: see `AreaPainter`
            yield Control((ControlType.CURSOR_UP, len(self.rows) - 1)).segment
