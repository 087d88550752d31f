from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.text import SNIFF_BYTES, Gap, decode, describe_binary, is_binary, trim_middle


def test_short_text_is_untouched() -> None:
    assert trim_middle("abc", 10) == "abc"


def test_long_text_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    text = "".join(f"line {n}\n" for n in range(10_000))
    trimmed = trim_middle(text, 1_000)
    assert trimmed.startswith("line 0\n")
    assert trimmed.endswith("line 9999\n")
    kept = [line for line in trimmed.splitlines() if line.startswith("line ")]
    left_out = set(text.splitlines()) - set(kept)
    size = sum(len(line) + 1 for line in left_out)
    assert f"{len(left_out):,} lines ({size:,} bytes) cut from the middle" in trimmed
    first = len([line for line in kept if int(line.split()[1]) < 5_000])
    assert f"lines {first + 1:,}-{first + len(left_out):,};" in trimmed
    assert len(trimmed) < 1_300


def test_a_gap_the_tool_left_is_counted_in_and_the_whole_named() -> None:
    head = "".join(f"{n}\n" for n in range(1, 101))
    tail = "".join(f"{n}\n" for n in range(901, 1001))
    left = "".join(f"{n}\n" for n in range(101, 901))
    gap = Gap(at=len(head), bytes=len(left), lines=800)
    trimmed = trim_middle(head + tail, 200, gap=gap, whole="/tmp/out.txt")
    shown = [int(line) for line in trimmed.splitlines() if line.isdigit()]
    missing = sorted(set(range(1, 1001)) - set(shown))
    size = sum(len(f"{n}\n") for n in missing)
    assert missing == list(range(missing[0], missing[-1] + 1))
    assert f"{len(missing):,} lines ({size:,} bytes) cut" in trimmed
    assert "/tmp/out.txt" in trimmed
    assert f"sed -n '{missing[0]},{missing[-1]}p' FILE" in trimmed


def test_a_gap_is_marked_even_when_the_rest_fits() -> None:
    trimmed = trim_middle("a\nb\n", 1_000, gap=Gap(at=2, bytes=10, lines=5))
    assert trimmed.splitlines()[0] == "a"
    assert "5 lines (10 bytes) cut" in trimmed
    assert trimmed.endswith("b\n")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 120), max_size=400), st.integers(1_000, 3_000))
def test_the_note_counts_exactly_the_lines_and_bytes_left_out(
    lengths: list[int], limit: int
) -> None:
    lines = [f"{n}:" + "x" * size for n, size in enumerate(lengths)]
    text = "".join(line + "\n" for line in lines)
    trimmed = trim_middle(text, limit)
    if trimmed == text:
        return
    kept = {line for line in trimmed.splitlines() if not line.startswith("[...")}
    left_out = [line for line in lines if line not in kept]
    size = sum(len(line) + 1 for line in left_out)
    noun = "line" if len(left_out) == 1 else "lines"
    counted = f"{len(left_out):,} {noun} ({size:,} bytes)" if left_out else f"{size:,} bytes"
    assert counted in trimmed


def test_binary_detection() -> None:
    assert is_binary(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert is_binary(bytes(range(0, 32)) * 10)
    assert not is_binary("héllo\tworld\n".encode())
    assert not is_binary(b"")


def test_binary_description_names_kind_and_size() -> None:
    text = describe_binary(b"\x89PNG" + b"\x00" * 96, "logo.png")
    assert "logo.png" in text
    assert "PNG image" in text
    assert "100 bytes" in text


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert decode(b"caf\xe9 ok") == "caf\ufffd ok"


TEXT_CONTROLS = (9, 10, 12, 13, 27)  # tab, newline, form feed, carriage return, escape


def by_definition(data: bytes) -> bool:
    sample = data[:SNIFF_BYTES]
    if b"\x00" in sample:
        return True
    control = sum(1 for byte in sample if byte < 32 and byte not in TEXT_CONTROLS)
    return bool(sample) and control / len(sample) > 0.3


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300) | st.lists(st.integers(1, 40), max_size=300).map(bytes))
def test_is_binary_is_the_definition(data: bytes) -> None:
    assert is_binary(data) == by_definition(data)


def test_only_the_first_bytes_decide() -> None:
    assert not is_binary(b"a" * SNIFF_BYTES + b"\x00")
    assert is_binary(b"\x01\x02\x03abc")
    assert not is_binary(b"line\r\n\ttab\x1b[0m\x0c")
