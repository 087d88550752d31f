"""The ``shell_env`` policy of a configuration: its settings and every provider's key variable."""

from __future__ import annotations

from agent.setup.config import BUILTIN_PROVIDERS, Config
from tools.shell_env import ShellEnv


def command_env(config: Config) -> ShellEnv:
    """What commands and MCP servers get of the agent's environment under ``config``.

    Each provider's ``api_key_env`` is withheld as a secret whatever its name, the built-in
    ones (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``) whether the chain uses them or not, and
    so is the search service's (``web_search.api_key_env``).
    """
    names = {*BUILTIN_PROVIDERS, *config.providers}
    keys = {config.provider(name).api_key_env for name in names}
    keys.add(config.web_search.key_env() if config.web_search else None)
    return ShellEnv(config.shell_env, frozenset(key for key in keys if key))
