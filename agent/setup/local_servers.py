"""OpenAI-compatible servers already running on this machine, and the models they offer.

Ollama, LM Studio, llama.cpp's server and vLLM each listen on a standard port and answer
``GET /v1/models``. Looking costs one connection per port (refused at once when nothing
listens), so the REPL can look at start when it would otherwise fall back to the tiny offline
model, and ``agent setup`` can offer what it finds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["KNOWN_SERVERS", "FoundServer", "ServerKind", "calls_tools", "find_servers"]


@dataclass(frozen=True)
class ServerKind:
    """A kind of local server: its name, the provider name agent gives it, its usual port."""

    label: str
    provider: str
    port: int
    host: str = "127.0.0.1"

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


KNOWN_SERVERS = (
    ServerKind("Ollama", "ollama", 11434),
    ServerKind("LM Studio", "lmstudio", 1234),
    ServerKind("llama.cpp", "llamacpp", 8080),
    ServerKind("vLLM", "vllm", 8000),
)

# Families whose chat templates and training include tool calling (the model cards say so);
# a name is matched anywhere, so "qwen2.5-coder:7b" and "Qwen/Qwen2.5-7B-Instruct" both count.
_TOOL_FAMILIES = re.compile(
    r"qwen2\.5|qwen3|qwq|llama-?3\.[123]|llama-?4|mistral|mixtral|ministral|codestral|devstral|"
    r"command-r|hermes|granite-?3|gpt-oss|firefunction|functionary|deepseek-(v3|r1)|glm-?4|"
    r"phi-?4-mini|kimi|smollm3",
    re.IGNORECASE,
)


def calls_tools(model: str) -> bool:
    """Whether ``model``'s family is known to call tools (a coding agent needs that)."""
    return _TOOL_FAMILIES.search(model) is not None


@dataclass(frozen=True)
class FoundServer:
    """A server that answered, with the models it lists."""

    kind: ServerKind
    models: tuple[str, ...]

    @property
    def tool_models(self) -> list[str]:
        return [model for model in self.models if calls_tools(model)]

    def suggested(self) -> str | None:
        """The model to offer first: one that calls tools (a coder if there is one)."""
        tools = self.tool_models
        coders = [model for model in tools if "coder" in model.lower()]
        return next(iter(coders or tools), None)

    def ref(self, model: str) -> str:
        return f"{self.kind.provider}:{model}"


def find_servers(
    kinds: tuple[ServerKind, ...] = KNOWN_SERVERS, timeout: float = 1.0
) -> list[FoundServer]:
    """The servers among ``kinds`` that answer ``GET /v1/models`` now, in ``kinds`` order."""
    from concurrent.futures import ThreadPoolExecutor  # not at start-up: config imports this

    if not kinds:
        return []
    with ThreadPoolExecutor(max_workers=len(kinds)) as pool:
        found = list(pool.map(lambda kind: _ask(kind, timeout), kinds))
    return [server for server in found if server is not None]


def _ask(kind: ServerKind, timeout: float) -> FoundServer | None:
    import urllib.request

    # No proxy from the environment may answer for localhost.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{kind.base_url}/models", timeout=timeout) as response:
            listed = json.loads(response.read(1 << 20))
    except (OSError, ValueError):  # refused, timed out, an HTTP error, not JSON
        return None
    if not isinstance(listed, dict) or not isinstance(listed.get("data"), list):
        return None
    names = [entry.get("id") for entry in listed["data"] if isinstance(entry, dict)]
    return FoundServer(kind, tuple(name for name in names if isinstance(name, str) and name))
