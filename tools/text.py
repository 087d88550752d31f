"""Text handling shared by the tools: binary detection, lenient decoding, trimming."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SNIFF_BYTES = 8_192
"""Bytes at the start of a file that decide whether it is binary."""
_MAGIC = {
    b"\x89PNG": "PNG image",
    b"\xff\xd8\xff": "JPEG image",
    b"GIF8": "GIF image",
    b"%PDF": "PDF document",
    b"PK\x03\x04": "zip archive",
    b"\x7fELF": "ELF executable",
    b"\x1f\x8b": "gzip archive",
}


_CONTROL = bytes(byte for byte in range(32) if byte not in (9, 10, 12, 13, 27))


def is_binary(data: bytes) -> bool:
    """Whether ``data`` looks like a binary file (a NUL byte or mostly control bytes)."""
    sample = data[:SNIFF_BYTES]
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    # Counted by deleting them (in C): a loop over the bytes cost a search 0.16 ms a file.
    control = len(sample) - len(sample.translate(None, _CONTROL))
    return control / len(sample) > 0.3


def describe_binary(head: bytes, name: str, size: int | None = None) -> str:
    """A one-line description of a binary file (from its first bytes), in place of its content.

    ``size`` is the file's size; by default ``len(head)``, for a file read whole.
    """
    kind = next((label for magic, label in _MAGIC.items() if head.startswith(magic)), "binary data")
    size = len(head) if size is None else size
    return f"{name} is a binary file ({kind}, {size:,} bytes); its content is not shown."


def decode(data: bytes) -> str:
    """Decode as UTF-8; bytes that are not valid UTF-8 become U+FFFD instead of failing."""
    return data.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Gap:
    """Output a tool already left out of its text, and where: a command's capture keeps only
    the head and the tail of a flood, so the text it returns has a hole at ``at``."""

    at: int
    """Character offset in the text where the left-out output was."""
    bytes: int
    lines: int
    """Line ends (newlines) in the left-out output."""


_SNAP = 2_000
"""Characters the cut may move to end the head and start the tail on whole lines."""


def trim_middle(text: str, limit: int, *, gap: Gap | None = None, whole: str | None = None) -> str:
    """Keep the head and tail of ``text`` within about ``limit`` characters, on whole lines.

    The one place a tool's output is cut for the model. The marker gives the true count of
    the lines and bytes left out (the text's own cut and ``gap``, what the tool left out
    before), which line numbers they were, and where to get them: ``whole`` names a file
    holding the whole output, else the model is told to narrow its request.
    """
    if gap is None and len(text) <= limit:
        return text
    start, end = _cut_span(text, limit, gap)
    head, cut, tail = text[:start], text[start:end], text[end:]
    lines = cut.count("\n") + (gap.lines if gap else 0)
    size = len(cut.encode("utf-8", "replace")) + (gap.bytes if gap else 0)
    first = head.count("\n") + 1
    span = f"lines {first:,}-{first + lines - 1:,}" if lines > 1 else ""
    if whole:
        how = (
            f"the whole output is saved in {whole}; read the part you need from it "
            f"(sed -n '{first},{first + max(lines - 1, 0)}p' FILE, or grep -n PATTERN FILE)"
        )
    else:
        how = (
            "narrow the request (offset/limit, a more specific pattern, or filter the "
            "command output) to see them"
        )
    noun = "line" if lines == 1 else "lines"
    counted = f"{lines:,} {noun} ({size:,} bytes)" if lines else f"{size:,} bytes"
    where = f", {span}" if span else ""
    marker = f"[... {counted} cut from the middle{where}; {how} ...]\n"
    joint = "" if not head or head.endswith("\n") else "\n"
    return head + joint + marker + tail


def _cut_span(text: str, limit: int, gap: Gap | None) -> tuple[int, int]:
    """The part of ``text`` to cut: about its middle beyond ``limit``, covering ``gap``,
    moved to line boundaries when one is near."""
    if len(text) <= limit:
        start = end = min(gap.at if gap else len(text), len(text))
    else:
        start, end = limit * 2 // 3, len(text) - (limit - limit * 2 // 3)
        if gap is not None:
            start, end = min(start, gap.at), max(end, min(gap.at, len(text)))
    line_end = text.rfind("\n", max(start - _SNAP, 0), start)
    if line_end != -1:
        start = line_end + 1
    if end < len(text) and (end == 0 or text[end - 1] != "\n"):
        line_end = text.find("\n", end, end + _SNAP)
        if line_end != -1:
            end = line_end + 1
    return start, max(start, end)


def redact_value(value: Any, redact: Callable[[str], str]) -> Any:
    """A copy of JSON-like ``value`` (tool arguments) with every string passed through
    ``redact``, dict keys included."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(key)): redact_value(item, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_value(item, redact) for item in value]
    return value
