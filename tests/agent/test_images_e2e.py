"""Images end to end, through the real SDKs to the fake server on both protocols: ``@image``
under ``-p``, a resized screenshot, a damaged file, a model that cannot see, ``read_file`` of
an image, and a session of twenty images resumed."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.fakes.cli import MODELS, AgentRun, run_agent, write_person_config
from tests.fakes.images import write_image
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.llm_wire import Protocol
from tests.fakes.vendor_rules import request_problems

PROTOCOLS: list[Protocol] = ["anthropic", "openai"]


def _run(
    server: FakeLlmServer, workspace: Path, home: Path, protocol: Protocol, *args: str
) -> AgentRun:
    model = ("--model", MODELS[protocol])
    # A generous limit: the machine running the tests may be busy; nothing here waits.
    return run_agent(*args, *model, server=server, workspace=workspace, home=home, timeout=300)


def _images(request: RecordedRequest) -> list[tuple[str, bytes]]:
    """Every image the request sends, in order: (media type, bytes)."""
    found: list[tuple[str, bytes]] = []

    def visit(block: Any) -> None:
        if isinstance(block, list):
            for item in block:
                visit(item)
        elif isinstance(block, dict):
            if block.get("type") == "image":
                source = block["source"]
                found.append((source["media_type"], base64.b64decode(source["data"])))
            elif block.get("type") == "image_url":
                head, _, data = block["image_url"]["url"].partition(";base64,")
                found.append((head.removeprefix("data:"), base64.b64decode(data)))
            else:
                visit(block.get("content"))

    for message in request.body["messages"]:
        visit(message.get("content"))
    return found


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_mentioned_screenshot_is_sent_as_an_image_scaled_to_the_limits(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, protocol: Protocol
) -> None:
    write_image(workspace / "shot.png", (3200, 1800))
    fake_llm.script(Reply.text("The button overlaps the header."))

    run = _run(fake_llm, workspace, decoy_home, protocol, "-p", "what is wrong in @shot.png?")

    assert run.code == 0, run.stderr
    assert "The button overlaps the header." in run.stdout
    request = fake_llm.requests[0]
    assert request_problems(protocol, request.body) == []
    [(media_type, data)] = _images(request)
    assert media_type == "image/png"
    assert Image.open(io.BytesIO(data)).size == (1568, 882)
    assert "what is wrong in @shot.png?" in json.dumps(request.body)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_damaged_image_is_refused_naming_it_and_nothing_is_sent(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, protocol: Protocol
) -> None:
    (workspace / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")

    run = _run(fake_llm, workspace, decoy_home, protocol, "-p", "look at @broken.jpg")

    assert run.code == 2
    assert "@broken.jpg: " in run.stderr
    assert "nothing was sent" in run.stderr
    assert "Traceback" not in run.stderr
    assert fake_llm.requests == []


def test_a_model_set_to_vision_false_is_told_before_anything_is_sent(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_image(workspace / "shot.png")
    write_person_config(decoy_home, 'models:\n  "openai:gpt-test":\n    vision: false\n')

    run = _run(fake_llm, workspace, decoy_home, "openai", "-p", "what is in @shot.png?")

    assert run.code == 2
    assert "openai:gpt-test cannot see images" in run.stderr
    assert "vision: false" in run.stderr
    assert fake_llm.requests == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_read_file_of_an_image_hands_the_model_the_image(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, protocol: Protocol
) -> None:
    picture = write_image(workspace / "chart.png", (90, 60))
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "chart.png"}), Reply.text("A red rectangle.")
    )

    run = _run(fake_llm, workspace, decoy_home, protocol, "-p", "describe chart.png", "--yes")

    assert run.code == 0, run.stderr
    second = fake_llm.requests[1]
    assert request_problems(protocol, second.body) == []
    assert _images(second) == [("image/png", picture.read_bytes())]
    messages = second.body["messages"]
    if protocol == "anthropic":
        result = messages[-1]["content"][0]
        assert result["type"] == "tool_result"
        assert [part["type"] for part in result["content"]] == ["text", "image"]
    else:
        tool, after = messages[-2], messages[-1]
        assert tool["role"] == "tool"
        assert "image attached: chart.png" in tool["content"]
        assert after["role"] == "user"
        assert after["content"][0]["type"] == "image_url"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_session_of_twenty_images_stays_small_and_resumes_with_them(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, protocol: Protocol
) -> None:
    names = [f"s{n}.png" for n in range(20)]
    for n, name in enumerate(names):
        write_image(workspace / name, (300 + n, 200), noise=True)
    fake_llm.script(Reply.text("Twenty screenshots."), Reply.text("Still twenty."))
    prompt = "compare " + " ".join(f"@{name}" for name in names)

    first = _run(fake_llm, workspace, decoy_home, protocol, "-p", prompt, "--output-format", "json")
    session_id = first.json()["session_id"]
    again = _run(fake_llm, workspace, decoy_home, protocol, "--resume", session_id, "-p", "again")

    assert first.code == 0, first.stderr
    assert again.code == 0, again.stderr
    sent = [data for _, data in _images(fake_llm.requests[0])]
    assert sent == [(workspace / name).read_bytes() for name in names]
    assert sum(map(len, sent)) > 3_000_000
    [session] = (decoy_home / ".agent" / "sessions").glob(f"{session_id}*.jsonl")
    assert session.stat().st_size < 30_000
    assert [data for _, data in _images(fake_llm.requests[1])] == sent
    assert request_problems(protocol, fake_llm.requests[1].body) == []


def test_a_resumed_session_whose_image_copy_is_gone_goes_on_and_says_so(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_image(workspace / "shot.png")
    fake_llm.script(Reply.text("A red square."), Reply.text("Going on."))
    first = _run(
        fake_llm, workspace, decoy_home, "openai", "-p", "@shot.png?", "--output-format", "json"
    )
    for copy in (decoy_home / ".agent" / "images").iterdir():
        copy.unlink()

    again = _run(
        fake_llm,
        workspace,
        decoy_home,
        "openai",
        "--resume",
        first.json()["session_id"],
        "-p",
        "go on",
    )

    assert again.code == 0, again.stderr
    assert "image shot.png: its copy" in again.stderr
    assert "is missing; the session goes on without it" in again.stderr
    assert "Traceback" not in again.stderr
    assert _images(fake_llm.requests[1]) == []
    assert "[image shot.png could not be restored" in json.dumps(fake_llm.requests[1].body)
    assert request_problems("openai", fake_llm.requests[1].body) == []
