"""Pasted image paths and the clipboard, below the REPL: which paths are images, and what
the person is told when the clipboard cannot give one."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from agent.terminal.pasted_images import (
    NO_TOOL,
    ClipboardError,
    PastedImages,
    clipboard_image,
    pasted_paths,
)
from tests.fakes.images import write_image


def test_quoted_and_escaped_paths_are_found_and_other_paths_are_text(tmp_path: Path) -> None:
    folder = tmp_path / "My Shots"
    folder.mkdir()
    quoted = write_image(folder / "a b.png")
    escaped = write_image(folder / "c d.jpg", kind="JPEG")
    plain = write_image(tmp_path / "e.webp", kind="WEBP")
    text = (
        f"compare '{quoted}' with {str(escaped).replace(' ', chr(92) + ' ')} and {plain}, "
        f"not /api/users.png or {tmp_path}/notes.txt"
    )

    images, problems = pasted_paths(text)

    assert problems == []
    assert [image.name for image in images] == ["a b.png", "c d.jpg", "e.webp"]
    assert base64.b64decode(images[1].data) == escaped.read_bytes()


def test_a_damaged_or_withheld_pasted_image_is_a_problem_naming_it(tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_bytes(b"no picture here")
    secret = write_image(tmp_path / "secret.png")

    def refused(path: Path) -> str | None:
        return "a Read deny rule withholds it" if path.name == "secret.png" else None

    images, problems = pasted_paths(f"{tmp_path}/bad.png and {secret}", refused)

    assert images == []
    assert problems[0].startswith("bad.png: not an image")
    assert problems[1] == f"{secret}: a Read deny rule withholds it"


def test_without_a_clipboard_tool_ctrl_v_says_which_to_install() -> None:
    pasted = PastedImages(environ={"PATH": os.environ["PATH"]})  # no display at all

    assert pasted.paste() == ("", NO_TOOL)
    assert pasted.take("[Image #1] what?") == []


def test_a_clipboard_without_an_image_is_said(tmp_path: Path) -> None:
    tool = tmp_path / "xclip"
    tool.write_text("#!/bin/sh\necho 'Error: target image/png not available' >&2\nexit 1\n")
    tool.chmod(0o755)

    with pytest.raises(ClipboardError) as refused:
        clipboard_image({"PATH": str(tmp_path), "DISPLAY": ":99"})

    assert str(refused.value) == (
        "Ctrl-V: the clipboard holds no image (xclip: Error: target image/png not available)."
    )


def test_only_images_whose_mark_is_still_in_the_prompt_are_sent(tmp_path: Path) -> None:
    picture = write_image(tmp_path / "clip.png")
    tool = tmp_path / "xclip"
    tool.write_text(f"#!/bin/sh\nexec cat '{picture}'\n")
    tool.chmod(0o755)
    pasted = PastedImages(environ={"PATH": f"{tmp_path}:/usr/bin:/bin", "DISPLAY": ":99"})

    assert pasted.paste() == ("[Image #1] ", None)
    assert pasted.paste() == ("[Image #2] ", None)
    kept = pasted.take("only [Image #2] please")

    assert len(kept) == 1
    assert base64.b64decode(kept[0].data) == picture.read_bytes()
    assert pasted.take("[Image #2]") == []
