from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.text import SNIFF_BYTES, decode, describe_binary, is_binary, trim_middle


def test_short_text_is_untouched() -> None:
    assert trim_middle("abc", 10) == "abc"


def test_long_text_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    text = "".join(f"line {n}\n" for n in range(10_000))
    trimmed = trim_middle(text, 1_000)
    assert trimmed.startswith("line 0\n")
    assert trimmed.endswith("line 9999\n")
    cut = len(text) - 1_000
    assert f"{cut:,} characters" in trimmed
    assert len(trimmed) < 1_300


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
