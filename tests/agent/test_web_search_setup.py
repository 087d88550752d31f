"""How the configuration becomes the web_search tool (or a reason why not), and the search
key kept from commands and hidden in sessions like a provider's."""

from __future__ import annotations

from agent.setup.command_env import command_env
from agent.setup.config import Config
from agent.setup.startup import secret_redactor
from agent.setup.web_link import web_search_problem, web_search_tool
from providers.testing import ScriptedProvider

SECRET = "tvly-secret-value-123456"


def _config(**web_search: object) -> Config:
    return Config.model_validate({"model": "anthropic:claude-test", "web_search": web_search})


def test_not_configured_there_is_no_tool_and_nothing_to_say() -> None:
    tool, notice = web_search_tool(Config(), {}, ScriptedProvider([]))

    assert (tool, notice) == (None, None)


def test_each_backend_builds_the_tool_when_it_can_work() -> None:
    environ = {"BRAVE_API_KEY": "b", "TAVILY_API_KEY": "t"}
    services = {
        "brave": "Brave Search",
        "tavily": "Tavily",
        "anthropic": "Anthropic web search",
    }
    for backend, service in services.items():
        tool, notice = web_search_tool(_config(backend=backend), environ, ScriptedProvider([]))
        assert notice is None
        assert tool is not None
        assert tool.service == service
    tool, _ = web_search_tool(
        _config(backend="searxng", url="http://127.0.0.1:8888"), {}, ScriptedProvider([])
    )
    assert tool is not None


def test_a_backend_that_cannot_work_is_not_offered_and_the_notice_says_why() -> None:
    tool, notice = web_search_tool(_config(backend="tavily"), {}, ScriptedProvider([]))

    assert tool is None
    assert notice == (
        "web_search is not offered: backend tavily needs its API key in $TAVILY_API_KEY, "
        "which is not set (see `agent doctor`)"
    )
    on_openai = Config.model_validate(
        {"model": "openai:gpt-test", "web_search": {"backend": "anthropic"}}
    )
    problem = web_search_problem(on_openai, {})
    assert problem is not None
    assert "openai:gpt-test is not one" in problem
    small = on_openai.model_copy(update={"small_model": "anthropic:claude-haiku-4-5"})
    assert web_search_problem(small, {}) is None
    token = _config(backend="searxng", url="http://127.0.0.1:8888", api_key_env="SEARX_TOKEN")
    assert web_search_problem(token, {}) == (
        "web_search.api_key_env names $SEARX_TOKEN, which is not set"
    )


def test_the_search_key_is_withheld_from_commands_and_hidden_in_sessions() -> None:
    config = _config(backend="tavily", api_key_env="MY_TAVILY")
    environ = {"MY_TAVILY": SECRET, "PATH": "/usr/bin"}

    passed = command_env(config).build(environ)
    shown = secret_redactor(config, environ).text(f"the key is {SECRET}")

    assert "MY_TAVILY" not in passed
    assert SECRET not in shown
