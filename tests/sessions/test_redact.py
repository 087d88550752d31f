"""Secrets never reach the session file, and the redactor works as a structlog processor."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import structlog
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import Message, ToolUseBlock
from sessions import Redactor, SessionStore
from sessions.redact import KEY_ANCHORS, KEY_PATTERNS
from tests.sessions.conftest import SECRET

OPENAI_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234"


def test_env_secrets_and_key_shaped_strings_are_not_persisted(
    store: SessionStore, tmp_path: Path
) -> None:
    call = ToolUseBlock(
        id="t1",
        name="run_command",
        input={"command": f"curl -H 'Authorization: Bearer abc.def-123456' -d {SECRET}"},
    )
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_message(Message.user(f"my key is {SECRET} and {OPENAI_KEY}"))
        writer.append_message(Message(role="assistant", content=[call]))

    raw = writer.path.read_text()
    assert SECRET not in raw
    assert OPENAI_KEY not in raw
    assert "abc.def-123456" not in raw
    messages = store.load(writer.id).messages
    assert messages[0].text == "my key is [redacted:ANTHROPIC_API_KEY] and [redacted]"
    assert messages[1].tool_uses[0].input["command"] == (
        "curl -H 'Authorization: Bearer [redacted]' -d [redacted:ANTHROPIC_API_KEY]"
    )


def test_which_environment_variables_count_as_secrets() -> None:
    environ = {
        "OPENAI_API_KEY": "plain-looking-value-1",
        "GITHUB_TOKEN": "gh-token-value-22",
        "MY_SERVICE_SECRET": "hunter2hunter2",
        "DB_PASSWORD": "short",
        "CUSTOM": "custom-value-33",
        "HOME": "/home/someone",
    }
    redactor = Redactor.from_environ(environ, extra_names=["CUSTOM"])
    text = " ".join(environ.values())
    assert redactor.text(text) == (
        "[redacted:OPENAI_API_KEY] [redacted:GITHUB_TOKEN] [redacted:MY_SERVICE_SECRET] "
        "short [redacted:CUSTOM] /home/someone"
    )


def test_secrets_with_json_special_characters_are_redacted(
    tmp_path: Path,
) -> None:
    secret = 'p@ss"word\\with/quotes'
    store = SessionStore(tmp_path, redactor=Redactor({"X_TOKEN": secret}))
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_message(Message.user(f"use {secret}"))
    raw = writer.path.read_text()
    assert "p@ss" not in raw
    assert store.load(writer.id).messages[0].text == "use [redacted:X_TOKEN]"


def test_redactor_as_a_structlog_processor() -> None:
    out = io.StringIO()
    logger = structlog.wrap_logger(
        structlog.PrintLogger(out),
        processors=[Redactor({"ANTHROPIC_API_KEY": SECRET}), structlog.processors.JSONRenderer()],
    )
    logger.info("request", headers={"x-api-key": SECRET}, note=f"Bearer {SECRET}", count=3)
    line = json.loads(out.getvalue())
    assert SECRET not in out.getvalue()
    assert line["headers"] == {"x-api-key": "[redacted:ANTHROPIC_API_KEY]"}
    assert line["count"] == 3


def test_config_file_keys_can_be_added() -> None:
    redactor = Redactor.from_environ({}).with_secrets({"providers.ollama.api_key": "local-key-1"})
    assert redactor.text("key=local-key-1") == "key=[redacted:providers.ollama.api_key]"


LOOKBEHIND = "(?<=Bearer )"


def _key_shaped(pattern: str) -> st.SearchStrategy[str]:
    if pattern.startswith(LOOKBEHIND):
        body = pattern.removeprefix(LOOKBEHIND)
        return st.from_regex(body, fullmatch=True).map(lambda key: "Bearer " + key)
    return st.from_regex(pattern, fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(KEY_PATTERNS).flatmap(_key_shaped), st.sampled_from(["", "x ", "\n"]))
def test_every_key_shaped_string_contains_an_anchor(key: str, before: str) -> None:
    # Text with no anchor skips the patterns: a key without one would go unredacted.
    assert any(anchor in key for anchor in KEY_ANCHORS)
    assert Redactor().contains_secret(before + key)
    assert "[redacted]" in Redactor().text(before + key)


def test_text_without_anchors_is_returned_as_is() -> None:
    redactor = Redactor({"MY_TOKEN": "hunter2-is-long"})
    text = "def f(x):\n    return x * 2\n" * 50
    assert redactor.text(text) is text
    assert not redactor.contains_secret(text)
    assert redactor.text(f"token={'hunter2-is-long'}") == "token=[redacted:MY_TOKEN]"


@pytest.mark.parametrize("anchor", KEY_ANCHORS)
def test_each_anchor_alone_lets_the_patterns_run(anchor: str) -> None:
    # The anchors are looked for in two ways (``in``, and one pattern for those that share
    # a prefix); each must reach the patterns, and a known value must be found by itself.
    redactor = Redactor({"A_TOKEN": "sk-ant-known-value", "B_TOKEN": "plain-known-value"})
    assert redactor._may_hold_secret(f"x {anchor} y")
    assert redactor.text("v=plain-known-value") == "v=[redacted:B_TOKEN]"
    assert redactor.text("v=sk-ant-known-value") == "v=[redacted:A_TOKEN]"
