"""The ``web_search`` tool the configuration asks for, and what stops it from working.

Without a ``web_search:`` section the tool is not offered; with one that cannot work (a key
that is not set, the ``anthropic`` backend on another vendor's model) it is not offered
either, a notice says why, and ``agent doctor`` says what to change.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent.setup.config import Config, ConfigError
from providers import Provider
from providers.models import ModelRef
from tools.web import HttpSearch, ServerSearch, WebSearch

__all__ = ["search_model", "web_search_problem", "web_search_tool"]

ANTHROPIC_WAIT = 4
"""The ``anthropic`` backend's search is a model's request, which runs the searches and
then writes: it gets this many times ``web_search.timeout``."""


def search_model(config: Config) -> ModelRef:
    """The model the ``anthropic`` backend asks: ``small_model``, else the session's."""
    return ModelRef.parse(config.small_model or config.model)


def web_search_problem(config: Config, environ: Mapping[str, str]) -> str | None:
    """Why the configured ``web_search`` cannot work, or None (also None when it is not
    configured)."""
    settings = config.web_search
    if settings is None:
        return None
    env = settings.key_env()
    if settings.backend in ("brave", "tavily") and env and not environ.get(env):
        return f"backend {settings.backend} needs its API key in ${env}, which is not set"
    if settings.backend == "searxng" and settings.api_key_env and not environ.get(env or ""):
        return f"web_search.api_key_env names ${settings.api_key_env}, which is not set"
    if settings.backend == "anthropic":
        ref = search_model(config)
        try:
            kind: str = config.provider(ref.provider).type
        except ConfigError:
            kind = "unknown"
        if kind != "anthropic":
            return (
                f"backend anthropic searches through an Anthropic model, and {ref} is not "
                "one; set small_model to one, or use backend searxng, brave or tavily"
            )
    return None


def web_search_tool(
    config: Config, environ: Mapping[str, str], side: Provider
) -> tuple[WebSearch | None, str | None]:
    """The tool, or None; and a notice when it is configured but cannot work.

    ``side``: the provider for side requests (``small_model`` first), which the
    ``anthropic`` backend sends its search through.
    """
    settings = config.web_search
    if settings is None:
        return None, None
    if (problem := web_search_problem(config, environ)) is not None:
        return None, f"web_search is not offered: {problem} (see `agent doctor`)"
    if settings.backend == "anthropic":
        seconds = settings.timeout * ANTHROPIC_WAIT
        server = ServerSearch(side)
        return WebSearch(
            server, service=server.name, max_results=settings.max_results, seconds=seconds
        ), None
    env = settings.key_env()
    http = HttpSearch(settings, environ.get(env) if env else None)
    tool = WebSearch(
        http, service=http.name, max_results=settings.max_results, seconds=settings.timeout
    )
    return tool, None
