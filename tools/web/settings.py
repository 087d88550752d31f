"""The ``web_search:`` section of the configuration: which search service ``web_search`` asks."""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Backend = Literal["searxng", "brave", "tavily", "anthropic"]

DEFAULT_URLS: dict[str, str] = {
    "brave": "https://api.search.brave.com",
    "tavily": "https://api.tavily.com",
}
"""Where each paid service answers when ``url`` is not set."""

DEFAULT_KEY_ENVS: dict[str, str] = {"brave": "BRAVE_API_KEY", "tavily": "TAVILY_API_KEY"}
"""The environment variable holding the key when ``api_key_env`` is not set."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class WebSearchSettings(BaseModel):
    """How ``web_search`` searches. Without this section the tool is not offered."""

    model_config = ConfigDict(extra="forbid")

    backend: Backend = Field(
        description="searxng (a SearXNG instance's JSON API at url), brave or tavily (their "
        "APIs, with the key named by api_key_env), or anthropic (Anthropic's server-side "
        "search; the model must be Anthropic's)."
    )
    url: str | None = Field(
        default=None,
        description="searxng: the instance's root (required). brave, tavily: the API root, "
        "when not the vendor's own.",
    )
    api_key_env: str | None = Field(
        default=None,
        description="brave, tavily: the environment variable holding the key "
        "(BRAVE_API_KEY, TAVILY_API_KEY by default). searxng: an optional bearer token.",
    )
    max_results: int = Field(default=8, ge=1, le=20, description="Results shown per search.")
    timeout: float = Field(default=20.0, gt=0, le=120, description="Seconds one search may take.")

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value)
            usable = parts.scheme in ("http", "https") and bool(parts.hostname)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError:
            usable = False
        if not usable or any(char.isspace() or not char.isprintable() for char in value):
            raise ValueError("must be an http(s) URL with a host, such as http://localhost:8080")
        return value.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _check_key_env(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            raise ValueError(
                "names the environment variable that holds the key (e.g. BRAVE_API_KEY), "
                "not the key itself"
            )
        return value

    @model_validator(mode="after")
    def _searxng_needs_url(self) -> WebSearchSettings:
        if self.backend == "searxng" and self.url is None:
            raise ValueError(
                "backend searxng needs url: the root of a SearXNG instance with its JSON "
                "format on, such as http://localhost:8080"
            )
        return self

    def base_url(self) -> str:
        """Where requests go (``url``, else the vendor's API root)."""
        return self.url or DEFAULT_URLS.get(self.backend, "")

    def key_env(self) -> str | None:
        """The environment variable the key is read from; None: no key is used."""
        return self.api_key_env or DEFAULT_KEY_ENVS.get(self.backend)
