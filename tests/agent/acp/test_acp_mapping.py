"""The pure parts of ``agent acp``: message checks, tool kinds and titles, prompt text."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from agent.acp.sessions import prompt_parts
from agent.acp.transport import check_message, read_lines
from agent.acp.updates import edit_diff, tool_kind, tool_title
from providers import ToolUseBlock
from tests.fakes.images import image_bytes


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"{", -32700),
        (b'"text"', -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "initialize"}', -32600),
        (b'{"jsonrpc": "2.0", "id": {}, "method": "initialize"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
        (b"\xff\xfe", -32700),
    ],
)
def test_a_malformed_line_is_answered_with_its_json_rpc_error(line: bytes, code: int) -> None:
    message, error = check_message(line)
    assert message is None
    assert error is not None
    assert error["error"]["code"] == code


def test_requests_notifications_and_responses_pass() -> None:
    for line in (
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}',
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {}}',
        b'{"jsonrpc": "2.0", "id": 0, "result": null}',
    ):
        message, error = check_message(line)
        assert error is None
        assert message is not None


def test_tool_kinds_and_titles() -> None:
    assert tool_kind("read_file") == "read"
    assert tool_kind("edit_file") == "edit"
    assert tool_kind("run_command") == "execute"
    assert tool_kind("search") == "search"
    assert tool_kind("mcp__web__fetch_url") == "fetch"
    assert tool_kind("mcp__db__query") == "other"
    call = ToolUseBlock(id="t1", name="run_command", input={"command": "pytest -q"})
    assert tool_title(call) == "run: pytest -q"


def test_a_rewrite_shows_the_old_text_and_a_new_file_none(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    rewrite = ToolUseBlock(id="t1", name="write_file", input={"path": "a.txt", "content": "new\n"})
    (diff,) = edit_diff(rewrite, tmp_path)
    assert (diff.path, diff.old_text, diff.new_text) == (str(tmp_path / "a.txt"), "old\n", "new\n")
    create = ToolUseBlock(id="t2", name="write_file", input={"path": "b.txt", "content": "b\n"})
    assert edit_diff(create, tmp_path)[0].old_text is None


def test_the_prompt_carries_text_links_and_embedded_files() -> None:
    text, images = prompt_parts(
        [
            TextContentBlock(type="text", text="fix this"),
            ResourceContentBlock(type="resource_link", uri="file:///w/a.py", name="a.py"),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=TextResourceContents(uri="file:///w/b.py", text="x = 1"),
            ),
        ]
    )
    assert (
        text == 'fix this\n\n@file:///w/a.py\n\n<context uri="file:///w/b.py">\nx = 1\n</context>'
    )
    assert images == []


def test_an_image_comes_with_the_text_checked_and_scaled() -> None:
    data = base64.b64encode(image_bytes((3000, 1000))).decode()
    text, [image] = prompt_parts(
        [
            TextContentBlock(type="text", text="why is this red?"),
            ImageContentBlock(type="image", data=data, mime_type="image/png"),
        ]
    )
    assert text == "why is this red?"
    assert (image.media_type, image.width, image.height, image.name) == (
        "image/png",
        1568,
        523,
        "image 1",
    )
    alone, _ = prompt_parts([ImageContentBlock(type="image", data=data, mime_type="image/png")])
    assert alone == "[image 1]"  # a message's text is never empty


def test_a_bad_image_an_audio_clip_or_an_empty_prompt_is_invalid_params() -> None:
    bad = {
        "not base64": "%%%",
        "not an image": base64.b64encode(b"hello").decode(),
        "cut short": base64.b64encode(image_bytes()[:60]).decode(),
    }
    for data in bad.values():
        with pytest.raises(RequestError) as image:
            prompt_parts([ImageContentBlock(type="image", data=data, mime_type="image/png")])
        assert image.value.code == -32602
        assert "image 1" in str(image.value.data)
    with pytest.raises(RequestError) as audio:
        prompt_parts([AudioContentBlock(type="audio", data="", mime_type="audio/wav")])
    assert "audio content is not supported" in str(audio.value.data)
    with pytest.raises(RequestError):
        prompt_parts([TextContentBlock(type="text", text="  ")])


def test_lines_are_read_whole_across_reads_and_an_oversized_one_is_flagged(
    tmp_path: Path,
) -> None:
    data = b'{"a": 1}\n\n  \n' + b"x" * 25 + b"\n" + b'{"b": 2}\n{"c": 3}'
    path = tmp_path / "in"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = list(read_lines(fd, chunk=4, limit=10))
    finally:
        os.close(fd)
    assert lines == [b'{"a": 1}', None, b'{"b": 2}', b'{"c": 3}']
