"""A ``Read`` deny rule holds on every reading path of our own, as the person meets it:
``-p --yes``, the fake LLM server, a decoy HOME, a workspace with a secret in ``.env``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.cli import MODELS, AgentRun, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

SECRET = "purple-elephant-4242"  # not key-shaped: the redactor would hide a key
WITHHELD = "withheld by a permission rule"


@pytest.fixture
def secret_workspace(workspace: Path) -> Path:
    """A workspace whose ``.env`` and ``secrets/`` hold the secret, denied to reading tools."""
    (workspace / ".env").write_text(f"WORD={SECRET}\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "prod.txt").write_text(f"WORD {SECRET}\n")
    (workspace / "app.py").write_text("WORD = 'from the environment'\n")
    (workspace / "link").symlink_to(".env")  # a link inside the workspace to the secret
    (workspace / "agent.yaml").write_text(
        "permissions:\n  deny: ['Read(./.env)', 'Read(./secrets/)']\n"
    )
    return workspace


def _run(fake_llm: FakeLlmServer, workspace: Path, home: Path, prompt: str) -> AgentRun:
    return run_agent(
        "-p", prompt, "--yes", "--model", MODELS["anthropic"],
        server=fake_llm, workspace=workspace, home=home,
    )  # fmt: skip


def _sent(fake_llm: FakeLlmServer) -> str:
    return json.dumps([request.body for request in fake_llm.requests])


def test_search_and_list_files_skip_denied_files_and_say_so(
    fake_llm: FakeLlmServer, secret_workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("search", {"pattern": "WORD|elephant", "path": "."}),
        Reply.tool_call("list_files", {"pattern": "**/*", "path": "."}),
        Reply.tool_call("search", {"pattern": "elephant", "path": "link"}),
        Reply.tool_call("list_files", {"path": "secrets"}),
        Reply.tool_call("search", {"pattern": "elephant", "path": "secrets/"}),
        Reply.tool_call("read_file", {"path": ".env"}),
        Reply.text("Done."),
    )

    run = _run(fake_llm, secret_workspace, decoy_home, "find the keys")

    assert run.code == 0, run.stderr
    sent = _sent(fake_llm)
    assert SECRET not in sent
    results = [json.dumps(request.body["messages"][-1]) for request in fake_llm.requests[1:]]
    searched, listed, through_link, listed_dir, searched_dir, read = results
    assert "app.py:1:" in searched
    assert f"3 files were {WITHHELD}" in searched  # .env, link, secrets/prod.txt
    assert "app.py" in listed
    assert ".env" not in listed
    assert "prod.txt" not in listed
    assert WITHHELD in listed
    assert "permission rule deny: Read(./.env)" in through_link
    for refused in (listed_dir, searched_dir):
        assert "permission rule deny: Read(./secrets/)" in refused
    assert "permission rule deny: Read(./.env)" in read


def test_a_mention_of_a_denied_file_or_its_directory_withholds_it(
    fake_llm: FakeLlmServer, secret_workspace: Path, decoy_home: Path
) -> None:
    refused = _run(fake_llm, secret_workspace, decoy_home, "what is in @.env")

    assert refused.code != 0
    assert "@.env: refused by the permission rule deny: Read(./.env)" in refused.stderr
    assert fake_llm.requests == []  # nothing was sent

    fake_llm.script(Reply.text("Seen."))
    listed = _run(fake_llm, secret_workspace, decoy_home, "what is in @./")

    assert listed.code == 0, listed.stderr
    sent = _sent(fake_llm)
    assert SECRET not in sent
    assert "app.py" in sent
    assert "\\n.env\\n" not in sent
    # The messages, not the tool descriptions (web_fetch's speaks of links).
    messages = json.dumps([request.body["messages"] for request in fake_llm.requests])
    assert "link" not in messages.replace("symlink", "")
    assert f"3 files were {WITHHELD}" in sent  # .env, link, secrets/
