"""Configuration: YAML files and flags → one validated `Config`.

Precedence, highest first: command-line flags > environment > ``./agent.yaml`` >
``~/.config/agent/config.yaml`` (``$XDG_CONFIG_HOME`` respected) > defaults. ``--config FILE``
or ``AGENT_CONFIG`` names one file that is read instead of the two discovered ones.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from agent.hooks.settings import HookMatcher, check_hook_events, merge_hooks
from agent.permissions.claude_files import read_claude_rules
from agent.permissions.settings import PermissionSettings, merge_permissions, rule_origins
from agent.setup.config_claude import ClaudeLayer, shown_path
from agent.setup.config_words import ConfigError as ConfigError
from agent.setup.config_words import describe_validation, read_yaml
from agent.setup.local_servers import KNOWN_SERVERS
from agent.setup.more_settings import SubagentSettings, TelemetrySettings
from agent.setup.trust import sandbox_mapping, split_project
from compaction.settings import CompactionSettings
from providers.models import ModelLimits, ModelRef
from providers.profiles import model_profile
from recovery.settings import RecoverySettings
from sessions.settings import SessionSettings
from tools.guard.sandbox import SandboxSettings
from tools.hooks import ApprovalMode
from tools.mcp.settings import McpServerSettings, check_server_names
from tools.settings import ToolSettings
from tools.shell_env import ShellEnvSettings
from tools.web.settings import WebSearchSettings

ProviderType = Literal["anthropic", "openai", "local"]


_ONE_LAYER = "one_layer"
"""Validation context key: the data is one file of several, not the merged configuration."""


def check_base_url(url: str) -> str:
    """``url`` if it is an http(s) URL with a host (and a valid port, if any).

    Raises:
        ValueError: it is not; the message completes a sentence naming the setting.
    """
    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        usable = False
    if not usable or any(char.isspace() or not char.isprintable() for char in url):
        raise ValueError("must be an http(s) URL with a host, such as https://api.example.com")
    return url


class ProviderSettings(BaseModel):
    """One provider endpoint: a vendor API or any OpenAI-compatible server."""

    model_config = ConfigDict(extra="forbid")

    type: ProviderType
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    headers: dict[str, str] = Field(default_factory=dict)
    prompt_cache: bool = True
    """Anthropic type: mark cache breakpoints, so each step's resent history is read from
    Anthropic's prompt cache. False for an Anthropic-compatible server that rejects them."""

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        return None if value is None else check_base_url(value)

    def resolve_api_key(self, environ: Mapping[str, str]) -> str | None:
        """The key from ``api_key``, else from the environment variable ``api_key_env``."""
        if self.api_key:
            return self.api_key
        if self.api_key_env:
            return environ.get(self.api_key_env) or None
        return None


class ModelOverride(BaseModel):
    """Limits for one model, overriding the built-in known values."""

    model_config = ConfigDict(extra="forbid")

    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    vision: bool | None = None  # None: known from the provider (local models cannot see)


class LocalSettings(BaseModel):
    """Settings of the in-process ``local:`` provider (llama.cpp through xllamacpp)."""

    model_config = ConfigDict(extra="forbid")

    n_ctx: int = Field(default=8192, gt=0)
    threads: int | None = Field(default=None, gt=0)
    max_output_tokens: int = Field(default=1024, gt=0)


BUILTIN_PROVIDERS: dict[str, ProviderSettings] = {
    "anthropic": ProviderSettings(type="anthropic", api_key_env="ANTHROPIC_API_KEY"),
    "openai": ProviderSettings(type="openai", api_key_env="OPENAI_API_KEY"),
    "local": ProviderSettings(type="local"),
    # Local OpenAI-compatible servers on their usual ports: `--model ollama:qwen2.5-coder`.
    **{
        kind.provider: ProviderSettings(type="openai", base_url=kind.base_url)
        for kind in KNOWN_SERVERS
    },
}


class Config(BaseModel):
    """The whole configuration. Every key is documented in ``config.example.yaml``."""

    model_config = ConfigDict(extra="forbid")

    # Before the model chain, so its validators can check the providers it names.
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    model: str = "anthropic:claude-sonnet-4-5"
    fallback_models: list[str] = Field(default_factory=list)
    small_model: str | None = None
    models: dict[str, ModelOverride] = Field(default_factory=dict)
    max_tokens: int | None = Field(default=None, gt=0)
    max_steps: int = Field(default=50, gt=0)
    turn_timeout: float | None = Field(default=None, gt=0)
    request_timeout: float = Field(default=600.0, gt=0)
    stream_idle_timeout: float = Field(default=90.0, gt=0)
    approval: ApprovalMode = ApprovalMode.ASK
    plan_mode: bool = False
    local: LocalSettings = Field(default_factory=LocalSettings)
    recovery: RecoverySettings = Field(default_factory=RecoverySettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    shell_env: ShellEnvSettings = Field(default_factory=ShellEnvSettings)
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    subagents: SubagentSettings = Field(default_factory=SubagentSettings)
    sessions: SessionSettings = Field(default_factory=SessionSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    web_search: WebSearchSettings | None = None
    mcp_servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    hooks: dict[str, list[HookMatcher]] = Field(default_factory=dict)
    """Claude Code-style hooks, event name → matcher entries (`agent.hooks`)."""
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)

    @field_validator("sandbox", mode="before")
    @classmethod
    def _sandbox_shorthand(cls, value: Any) -> Any:
        """``sandbox: read-only`` (or unquoted ``off``, which YAML reads as false) is the mode."""
        return sandbox_mapping(value)

    @field_validator("hooks", mode="before")
    @classmethod
    def _check_hook_events(cls, value: Any) -> Any:
        return check_hook_events(value) if isinstance(value, dict) else value

    @field_validator("mcp_servers")
    @classmethod
    def _check_mcp_names(cls, value: dict[str, McpServerSettings]) -> dict[str, McpServerSettings]:
        check_server_names(value)
        return value

    @field_validator("model")
    @classmethod
    def _check_model(cls, value: str, info: ValidationInfo) -> str:
        _check_provider_known(ModelRef.parse(value), value, info)
        return value

    @field_validator("small_model")
    @classmethod
    def _check_small_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            _check_provider_known(ModelRef.parse(value), value, info)
        return value

    @field_validator("fallback_models")
    @classmethod
    def _check_fallbacks(cls, value: list[str], info: ValidationInfo) -> list[str]:
        for ref in value:
            _check_provider_known(ModelRef.parse(ref), ref, info)
        return value

    def provider(self, name: str) -> ProviderSettings:
        """The settings of provider ``name``: the configured entry over the built-in one."""
        builtin = BUILTIN_PROVIDERS.get(name)
        configured = self.providers.get(name)
        if configured is None and builtin is None:
            raise ConfigError(f"provider {name!r} is not configured; add it under 'providers:'")
        if configured is None:
            assert builtin is not None
            return builtin
        if builtin is not None and configured.api_key_env is None and configured.api_key is None:
            return configured.model_copy(update={"api_key_env": builtin.api_key_env})
        return configured

    def model_chain(self) -> list[ModelRef]:
        """``model`` then ``fallback_models``, de-duplicated, order kept."""
        chain: list[ModelRef] = []
        for text in [self.model, *self.fallback_models]:
            ref = ModelRef.parse(text)
            if ref not in chain:
                chain.append(ref)
        return chain

    def limits(self, ref: ModelRef) -> ModelLimits:
        """Context window and output ceiling of ``ref``: configured, else known defaults."""
        known = model_profile(ref.name).limits
        if ref.provider == "local" or self.provider(ref.provider).type == "local":
            known = ModelLimits(self.local.n_ctx, self.local.max_output_tokens)
        override = self.models.get(str(ref))
        if override is None:
            return known
        return ModelLimits(
            context_window=override.context_window or known.context_window,
            max_output_tokens=override.max_output_tokens or known.max_output_tokens,
        )


def _check_provider_known(ref: ModelRef, text: str, info: ValidationInfo) -> None:
    # One file alone may name a provider another file defines: only the merge can tell.
    if (info.context or {}).get(_ONE_LAYER) or "providers" not in info.data:
        return
    known = set(BUILTIN_PROVIDERS) | set(info.data["providers"])
    if ref.provider not in known:
        raise ValueError(
            f"model {text!r} names provider {ref.provider!r}, which is not configured; "
            f"use one of {sorted(known)} or add it under 'providers:'"
        )


def agent_home(environ: Mapping[str, str] | None = None) -> Path:
    """The data directory: ``$AGENT_HOME``, else the platform's user data dir."""
    env = os.environ if environ is None else environ
    if env.get("AGENT_HOME"):
        return Path(env["AGENT_HOME"]).expanduser()
    return Path(platformdirs.user_data_dir("agent", appauthor=False))


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/agent/config.yaml``, else ``~/.config/agent/config.yaml``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "agent" / "config.yaml"


PROJECT_FILE = "agent.yaml"

TrustCheck = Callable[[Path, dict[str, Any]], bool]
"""Asked whether a project file may apply what loosens the person's config (`held_back`)."""


def load_config(
    *,
    cwd: Path,
    explicit: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    trust: TrustCheck | None = None,
) -> tuple[Config, list[Path]]:
    """Read, merge and validate the configuration; return it and the files it came from.

    Args:
        cwd: The workspace, where ``agent.yaml`` is looked for.
        explicit: A file named by ``--config``; read instead of the discovered files.
        overrides: Values from command-line flags (already in config-key form).
        environ: The environment (defaults to ``os.environ``).
        trust: Asked about what the project's files hold back (what loosens the person's
            own config: `agent.setup.trust_table`); it applies only when it says yes.

    Raises:
        ConfigError: naming the file, the key, the bad value and what is allowed.
    """
    env = os.environ if environ is None else environ
    if explicit is None and env.get("AGENT_CONFIG"):
        explicit = Path(env["AGENT_CONFIG"]).expanduser()
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"config file {explicit} does not exist (from --config/AGENT_CONFIG)")
        paths = [explicit]
    else:
        paths = [p for p in (user_config_path(env), cwd / PROJECT_FILE) if p.is_file()]

    project_path = cwd / PROJECT_FILE if trust is not None and explicit is None else None
    layers = [(path, _validate_layer(read_yaml(path), path)) for path in paths]
    env_layer, flags = _environment_layer(env), dict(overrides or {})
    claude = ClaudeLayer(read_claude_rules(cwd, env), trust)
    own = [data for path, data in layers if path != project_path]
    try:
        person = person_view(claude.person_mode(*own, env_layer, flags), *own, env_layer, flags)
    except ValidationError as exc:
        where = {key: path for path, data in layers if path != project_path for key in data}
        raise ConfigError(describe_validation(exc, Config, where, flags)) from None
    claude.settle(person, next((data for path, data in layers if path == project_path), {}))

    merged: dict[str, Any] = {}
    origin: dict[str, Path] = {}
    project: dict[str, Any] = {}
    for path, data in layers:
        if path == project_path:
            applied, held = split_project(data, person)
            project = data = applied if held and not claude.ask_with(path, held) else data
        for key in data:
            origin[key] = path
        claude.origins |= rule_origins(data.get("permissions"), shown_path(path, env))
        # Every file's hooks run and every file's rules hold: these add up, not override.
        added = {
            "hooks": merge_hooks(merged.get("hooks"), data.get("hooks")),
            "permissions": merge_permissions(merged.get("permissions"), data.get("permissions")),
        }
        merged = _deep_merge(merged, data)
        merged |= {key: value for key, value in added.items() if value is not None}
    if (permissions := claude.add_to(merged.get("permissions"))) is not None:
        merged["permissions"] = permissions
    claude_mode, mode_note = claude.mode(project)
    merged = _deep_merge(claude_mode, merged)  # under every file: it applies where none sets one
    merged = _deep_merge(merged, env_layer)
    merged = _deep_merge(merged, flags)
    claude.origins |= rule_origins(flags.get("permissions"), None)
    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(describe_validation(exc, Config, origin, overrides or {})) from None
    config.permissions.with_origins(
        claude.origins, claude.rules.warnings, claude.waiting(), mode_note
    )
    return config, paths


def person_view(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """The person's effective config as JSON, from their own ``layers`` (config file, Claude
    Code mode, environment, flags) over the defaults: what a project's is compared to.
    Raises ValidationError when the layers are valid one by one but not together."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _deep_merge(merged, layer)
    return Config.model_validate(merged, context={_ONE_LAYER: True}).model_dump(mode="json")


def _validate_layer(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """``data``, validated alone so an error names the file that holds the bad value, with
    ``sandbox: read-only`` as a mapping (so another file's ``sandbox:`` section merges)."""
    try:
        Config.model_validate(data, context={_ONE_LAYER: True})
    except ValidationError as exc:
        raise ConfigError(describe_validation(exc, Config, dict.fromkeys(data, path), {})) from None
    return data | ({"sandbox": sandbox_mapping(data["sandbox"])} if "sandbox" in data else {})


def _environment_layer(env: Mapping[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {"model": env["AGENT_MODEL"]} if env.get("AGENT_MODEL") else {}
    if env.get("AGENT_CHAOS"):
        layer["recovery"] = {"chaos": env["AGENT_CHAOS"]}
    providers: dict[str, Any] = {}
    for name, var in (("anthropic", "ANTHROPIC_BASE_URL"), ("openai", "OPENAI_BASE_URL")):
        if env.get(var):
            try:
                check_base_url(env[var])
            except ValueError as exc:
                raise ConfigError(f"{var}={env[var]!r} {exc}; fix it or unset it") from None
            providers[name] = {"type": name, "base_url": env[var]}
    if providers:
        layer["providers"] = providers
    return layer


def _deep_merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    result = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), dict):
            result[key] = _deep_merge(result[key], value)
        else:
            result[key] = value
    return result
