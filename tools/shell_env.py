"""The environment a command or an MCP server starts with (the ``shell_env:`` config key).

The agent's own environment holds the provider keys it calls models with; a command that
inherited them could send them anywhere (a prompt-injected ``curl``). As Codex's
``shell_environment_policy`` does, the environment is built from the agent's in steps:

1. ``inherit``: ``all`` of it, only the ``core`` variables (`CORE`), or ``none``;
2. drop every name that marks a secret (`SECRET_PATTERNS`: KEY, SECRET, TOKEN, PASSWORD, the
   OTLP exporters' headers) and each provider's key variable
   (its ``api_key_env``), unless ``ignore_default_excludes``;
3. drop the names matching ``exclude``;
4. keep only the names matching ``include_only``, when it is not empty;
5. add ``set``, which always passes (the person wrote those values).

Patterns are shell globs matched case-insensitively (``*TOKEN*`` matches ``gh_token``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

SECRET_PATTERNS = ("*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "OTEL_EXPORTER_OTLP_*HEADERS")
"""Names that mark a variable as a secret; never passed unless the person says so. The
OpenTelemetry exporters' headers (``OTEL_EXPORTER_OTLP_HEADERS``, ``..._LOGS_HEADERS``...)
usually carry the collector's token: ``Authorization=Bearer ...``."""
CORE = (
    "HOME",
    "LOGNAME",
    "USER",
    "USERNAME",
    "PATH",
    "SHELL",
    "TMPDIR",
    "TEMP",
    "TMP",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "TZ",
)
"""What ``inherit: core`` keeps: enough for programs to find themselves, home, temp and locale."""


class Inherit(StrEnum):
    """Where the environment starts from."""

    ALL = "all"
    CORE = "core"
    NONE = "none"


class ShellEnvSettings(BaseModel):
    """The ``shell_env:`` section of the configuration."""

    model_config = ConfigDict(extra="forbid")

    inherit: Inherit = Field(
        default=Inherit.ALL,
        description="all: the agent's environment; core: only PATH, HOME, USER, SHELL, TMPDIR, "
        "LANG, LC_*, TERM and the like; none: nothing but `set`.",
    )
    ignore_default_excludes: bool = Field(
        default=False,
        description="true: also pass names with KEY, SECRET, TOKEN or PASSWORD in them, "
        "OTEL_EXPORTER_OTLP_*HEADERS and the providers' key variables.",
    )
    exclude: list[str] = Field(
        default_factory=list, description="More names to withhold (globs, case-insensitive)."
    )
    include_only: list[str] = Field(
        default_factory=list,
        description="When not empty, pass only names matching one of these globs.",
    )
    set: dict[str, str] = Field(
        default_factory=dict, description="Variables every command gets, always passed."
    )

    @field_validator("exclude", "include_only")
    @classmethod
    def _check_patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            if not pattern.strip():
                raise ValueError("an empty pattern matches nothing; remove it")
        return value

    @field_validator("set")
    @classmethod
    def _check_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not name or "=" in name or "\0" in name:
                raise ValueError(f"{name!r} is not a variable name")
            if "\0" in text:
                raise ValueError(f"the value of {name} holds a NUL byte")
        return value


def looks_secret(name: str) -> bool:
    """Whether ``name`` marks its variable as a secret (`SECRET_PATTERNS`)."""
    return _matches(name, SECRET_PATTERNS)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


@dataclass(frozen=True)
class Withheld:
    """A variable of the agent's environment that commands do not get, and why."""

    name: str
    reason: str
    """``secret name``, ``provider key``, ``exclude``, ``include_only`` or ``inherit: core``..."""


@dataclass(frozen=True)
class ShellEnv:
    """The policy in force: the settings, and the provider key variables to withhold."""

    settings: ShellEnvSettings = field(default_factory=ShellEnvSettings)
    provider_keys: frozenset[str] = frozenset()
    """Each provider's ``api_key_env`` (``ANTHROPIC_API_KEY``, a custom name...)."""

    def build(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The environment a command gets when the agent's own is ``environ``."""
        passed = {name: value for name, value in environ.items() if not self.withholds(name)}
        return passed | self.settings.set

    def withholds(self, name: str) -> str:
        """Why ``name`` (from the agent's environment) is not passed on; "" when it is."""
        settings = self.settings
        if settings.inherit is Inherit.NONE:
            return "inherit: none"
        if settings.inherit is Inherit.CORE and not _matches(name, CORE):
            return "inherit: core"
        if not settings.ignore_default_excludes:
            if name in self.provider_keys:
                return "provider key"
            if looks_secret(name):
                return "secret name"
        if _matches(name, settings.exclude):
            return "exclude"
        if settings.include_only and not _matches(name, settings.include_only):
            return "include_only"
        return ""

    def explain(self, environ: Mapping[str, str]) -> tuple[list[str], list[Withheld]]:
        """The names passed (``set`` included) and those withheld with why, both sorted; for
        ``/doctor``, which shows names only, never values."""
        withheld = [Withheld(name, why) for name in environ if (why := self.withholds(name))]
        withheld = [item for item in withheld if item.name not in self.settings.set]
        return sorted(self.build(environ)), sorted(withheld, key=lambda item: item.name)
