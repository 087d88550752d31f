"""Session config options over ACP: the mode and model menus, choosing from them, and the
update an editor gets when a fallback changed the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from tests.agent.acp.editor import editor_session
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer

FALLBACK = ("--fallback-model", "openai:gpt-test", "--set", "recovery.overload_backoff=0.01")


def _menus(options: Any) -> dict[str, tuple[str, list[str]]]:
    return {
        option.id: (option.current_value, [choice.value for choice in option.options])
        for option in options
    }


async def test_new_session_offers_the_mode_and_the_model_chain(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    async with editor_session(fake_llm, workspace, decoy_home, *FALLBACK) as agent:
        await agent.conn.initialize(protocol_version=1)
        new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])

    assert new.config_options is not None
    assert _menus(new.config_options) == {
        "mode": ("default", ["default", "acceptEdits", "plan", "bypassPermissions"]),
        "model": ("anthropic:claude-test", ["anthropic:claude-test", "openai:gpt-test"]),
    }
    categories = {option.id: option.category for option in new.config_options}
    assert categories == {"mode": "mode", "model": "model"}


async def test_choosing_a_model_sends_the_next_prompt_to_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("From the other one."))
    async with editor_session(fake_llm, workspace, decoy_home, *FALLBACK) as agent:
        session_id = await agent.start()
        chosen = await agent.conn.set_config_option(
            config_id="model", session_id=session_id, value="openai:gpt-test"
        )
        moded = await agent.conn.set_config_option(
            config_id="mode", session_id=session_id, value="acceptEdits"
        )
        await agent.ask(session_id, "hello")
        with pytest.raises(RequestError) as unknown_model:
            await agent.conn.set_config_option(
                config_id="model", session_id=session_id, value="openai:gpt-5-nowhere"
            )
        with pytest.raises(RequestError) as unknown_option:
            await agent.conn.set_config_option(
                config_id="temperature", session_id=session_id, value="hot"
            )

    assert chosen is not None
    assert _menus(chosen.config_options)["model"][0] == "openai:gpt-test"
    assert moded is not None
    assert _menus(moded.config_options)["mode"][0] == "acceptEdits"
    assert [request.model for request in fake_llm.requests] == ["gpt-test"]
    assert "is not one of" in str(unknown_model.value.data)
    assert "the options are mode and model" in str(unknown_option.value.data)


async def test_a_fallback_during_a_prompt_updates_the_model_menu(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Fault.status(529, "overloaded_error"),
        Fault.status(401, "authentication_error"),
        Reply.text("from the fallback"),
    )
    async with editor_session(fake_llm, workspace, decoy_home, *FALLBACK) as agent:
        session_id = await agent.start()
        answer = await agent.ask(session_id, "hi")
        quiet = len(agent.editor.of_kind("config_option_update"))
        fake_llm.script(Reply.text("again"))
        await agent.ask(session_id, "and again")

    assert answer.stop_reason == "end_turn"
    [update] = agent.editor.of_kind("config_option_update")
    model = next(option for option in update["configOptions"] if option["id"] == "model")
    assert model["currentValue"] == "openai:gpt-test"
    assert quiet == 1  # the second prompt, on the same model, changed nothing to show
