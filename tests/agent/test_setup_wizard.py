"""``agent setup`` against a local OpenAI-compatible server played by the fake LLM server."""

from __future__ import annotations

import io
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from rich.console import Console

from agent.setup.config import load_config
from agent.setup.local_servers import FoundServer, ServerKind, calls_tools
from agent.terminal.setup_view import local_server_hint, run_setup
from providers.adapters.local_model import bundled_model_path, local_runtime_installed
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer

CODER = "qwen2.5-coder:7b"


def _ollama_at(fake: FakeLlmServer) -> ServerKind:
    port = urlsplit(fake.openai_url).port
    assert port is not None
    return ServerKind("Ollama", "ollama", port)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(*answers: str) -> tuple[list[str], object]:
    asked: list[str] = []
    queue: Iterator[str] = iter(answers)

    def ask(question: str) -> str:
        asked.append(question)
        return next(queue)

    return asked, ask


def _run(fake: FakeLlmServer, path: Path, ask: object, environ: dict[str, str]) -> tuple[int, str]:
    out = io.StringIO()
    code = run_setup(
        environ,
        path,
        console=Console(file=out, width=200),
        ask=ask,  # type: ignore[arg-type]
        kinds=(_ollama_at(fake), ServerKind("vLLM", "vllm", _closed_port())),
    )
    return code, out.getvalue()


def test_it_lists_marks_tests_shows_and_writes_the_choice(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    fake_llm.models = ["tinyllama", CODER]
    fake_llm.script(Reply.text("OK"), model=CODER)
    path = tmp_path / "config" / "agent" / "config.yaml"
    asked, ask = _answers("2", "")  # the key is listed; its test would leave the machine

    code, shown = _run(fake_llm, path, ask, {"ANTHROPIC_API_KEY": "sk-test"})

    assert code == 0, shown
    assert "vLLM (127.0.0.1:" in shown
    assert "not running" in shown
    assert "Ollama (127.0.0.1:" in shown
    assert "running, 2 models" in shown
    assert "1. anthropic:claude-sonnet-4-5  (ANTHROPIC_API_KEY is set; tools ✓)" in shown
    assert f"2. ollama:{CODER}  (Ollama on 127.0.0.1:" in shown
    assert "3. ollama:tinyllama" in shown
    assert "no tool calling known" in shown
    assert asked == ["Use which? [1] ", f"Write {path}? [Y/n] "]
    assert path.read_text().count("\n") == 6


def test_the_local_choice_is_tested_once_and_written_as_a_person_would(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    fake_llm.models = ["tinyllama", CODER]
    fake_llm.script(Reply.text("OK"), model=CODER)
    path = tmp_path / "config.yaml"
    _, ask = _answers("", "")

    code, shown = _run(fake_llm, path, ask, {})

    assert code == 0, shown
    assert f"✓ ollama:{CODER} answered." in shown
    assert [request.model for request in fake_llm.requests] == [CODER]
    text = path.read_text()
    assert f"model: ollama:{CODER}\n" in text
    assert text in shown.replace("\n\n", "\n")  # shown before it was written
    config, _ = load_config(cwd=tmp_path, explicit=path, environ={})
    assert config.model == f"ollama:{CODER}"
    assert config.provider("ollama").base_url == fake_llm.openai_url


def test_an_existing_file_is_replaced_only_when_the_person_says_so(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("max_steps: 9\n")
    fake_llm.models = [CODER]
    fake_llm.script(Reply.text("OK"), Reply.text("OK"), Reply.text("OK"), model=CODER)

    for ask in (_answers("", "n")[1], None):
        code, shown = _run(fake_llm, path, ask, {})
        assert code == 0, shown
        assert "left as it was" in shown
        assert path.read_text() == "max_steps: 9\n"

    code, shown = _run(fake_llm, path, _answers("1", "y")[1], {})
    assert code == 0, shown
    assert path.read_text().startswith("# Written by `agent setup`")


def test_a_model_that_fails_its_test_is_not_written(
    fake_llm: FakeLlmServer, tmp_path: Path
) -> None:
    fake_llm.models = [CODER]
    fake_llm.script(Fault.status(404, message="model not found"), model=CODER)
    path = tmp_path / "config.yaml"

    code, shown = _run(fake_llm, path, None, {})

    assert code == 1
    assert f"✗ ollama:{CODER} did not answer" in shown
    assert not path.exists()


def test_nothing_found_says_how_to_get_a_model(tmp_path: Path) -> None:
    out = io.StringIO()
    kinds = (ServerKind("Ollama", "ollama", _closed_port()),)
    environ = {"AGENT_NO_LOCAL_DEFAULT": "1"}  # no offline model to fall back on
    code = run_setup(environ, tmp_path / "c.yaml", console=Console(file=out), ask=None, kinds=kinds)
    assert code == 1
    assert "No model found" in out.getvalue()
    assert "set an API key" in out.getvalue()


@pytest.mark.skipif(
    not local_runtime_installed() or bundled_model_path() is None,
    reason="the offline model (the local extra and its GGUF) is not installed",
)
def test_with_only_the_offline_model_setup_says_agent_runs_it(tmp_path: Path) -> None:
    out = io.StringIO()
    kinds = (ServerKind("Ollama", "ollama", _closed_port()),)
    code = run_setup(
        {}, tmp_path / "c.yaml", console=Console(file=out, width=500), ask=None, kinds=kinds
    )
    shown = out.getvalue()
    assert code == 1
    assert "No model found" not in shown
    assert "runs the bundled offline model local:smollm2" in shown
    assert "set an API key" in shown


def test_the_banner_names_a_running_server_and_a_model_that_calls_tools() -> None:
    ollama = ServerKind("Ollama", "ollama", 11434)
    found = FoundServer(ollama, ("llava:7b", "qwen2.5:7b", CODER))
    assert local_server_hint([found]) == (
        f"Ollama is running with {CODER}: `agent --model ollama:{CODER}` "
        "(or `agent setup` to keep it)."
    )
    assert "none of its models is known to call tools" in str(
        local_server_hint([FoundServer(ollama, ("llava:7b",))])
    )
    assert local_server_hint([]) is None
    assert calls_tools("Qwen/Qwen2.5-Coder-7B-Instruct")
    assert not calls_tools("gemma2:2b")


def test_the_written_config_is_private_and_ignores_a_planted_link(tmp_path: Path) -> None:
    from agent.setup.setup_wizard import write_config

    target = tmp_path / "config" / "config.yaml"
    target.parent.mkdir()
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("canary")
    # A link where the temporary file would go must not be written through.
    (target.parent / f".config.yaml.{os.getpid()}.tmp").symlink_to(elsewhere)
    with pytest.raises(FileExistsError):
        write_config(target, "model: x:y\n")
    assert elsewhere.read_text() == "canary"
    (target.parent / f".config.yaml.{os.getpid()}.tmp").unlink()

    write_config(target, "model: x:y\n")
    assert target.read_text() == "model: x:y\n"
    assert target.stat().st_mode & 0o777 == 0o600
