from __future__ import annotations

from tools.text import decode, describe_binary, is_binary, trim_middle


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
