"""A dead endpoint: told apart (refused, no such host, TLS, a missing /v1), announced while
it is checked again, used if it comes back, and otherwise a failure naming the URL."""

from __future__ import annotations

import json
import random
import socket
import ssl
import subprocess
from pathlib import Path

import pytest

from agent.setup.endpoint_guard import EndpointAnswers, EndpointGuard, EndpointUnreachable
from providers import ErrorKind, Event, LlmError, Message
from providers.adapters.openai import OpenAIProvider
from providers.adapters.unreachable import Unreachable, unreachable
from providers.models import ModelLimits, ModelRef
from providers.provider import ChatRequest, ChatResponse, DeltaHandler, StopReason
from providers.testing import FunctionProvider
from recovery import ModelTarget, RecoveringProvider, RecoverySettings, RetryScheduled
from tests.fakes.cli import MODELS, AgentRun, agent_command, agent_env, run_agent
from tests.fakes.clock import VirtualClock
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean

REQUEST = ChatRequest(model="m", messages=[Message.user("hi")])


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _raised_from(cause: BaseException) -> LlmError:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise OSError("All connection attempts failed") from inner
    except OSError as outer:
        error = LlmError(ErrorKind.CONNECTION, "connection failed")
        error.__cause__ = outer
        return error


@pytest.mark.parametrize(
    ("cause", "reason"),
    [
        (ConnectionRefusedError(111, "Connect call failed"), Unreachable.REFUSED),
        (socket.gaierror(-2, "Name or service not known"), Unreachable.DNS),
        (ssl.SSLError(1, "WRONG_VERSION_NUMBER"), Unreachable.TLS),
        (OSError(113, "No route to host"), Unreachable.NO_ROUTE),
        (ConnectionResetError(104, "reset"), None),  # it answered, then dropped: retry
        (TimeoutError(), None),
    ],
)
def test_the_causes_are_told_apart(cause: BaseException, reason: Unreachable | None) -> None:
    found = unreachable(_raised_from(cause))
    assert (found[0] if found else None) == reason


def _guard(
    inner: FunctionProvider | OpenAIProvider, url: str, said: list[Event], clock: VirtualClock
) -> EndpointGuard:
    return EndpointGuard(inner, url, wants_v1=True, emit=said.append, clock=clock.now)  # type: ignore[arg-type]


def _recovering(guard: EndpointGuard, said: list[Event], clock: VirtualClock) -> RecoveringProvider:
    """The guard under recovery, as `agent.app` builds it: one model, on ``clock``."""
    return RecoveringProvider(
        [ModelTarget(ModelRef.parse("ollama:m"), guard, ModelLimits(8_000, 1_000))],
        settings=RecoverySettings(),
        events=said.append,
        clock=clock.now,
        sleep=clock.sleep,
        rng=random.Random(1),
    )


async def test_a_refused_endpoint_is_tried_for_seconds_by_the_policy_then_named() -> None:
    port = _closed_port()
    url = f"http://127.0.0.1:{port}/v1"
    adapter = OpenAIProvider(api_key="k", base_url=url, provider_name="ollama")
    said: list[Event] = []
    clock = VirtualClock()
    guard = _guard(adapter, url, said, clock)

    with pytest.raises(LlmError) as caught:
        await _recovering(guard, said, clock).chat(REQUEST)

    error = caught.value
    assert error.kind is ErrorKind.UNREACHABLE
    assert f"nothing listens on 127.0.0.1:{port} ({url}; still so after 10 s)" in error.message
    assert "is the server running?" in error.message
    assert said[0] == EndpointUnreachable(url=url, reason="connection refused", window=10.0)
    assert said[0].describe() == (
        f"Cannot reach {url} (connection refused); trying again for up to 10 s..."
    )
    retries = [event for event in said if isinstance(event, RetryScheduled)]
    assert [r.delay for r in retries] == [1.0] * 10  # decide's pace, within its window
    assert clock.total_slept == 10.0
    assert [e for e in said if isinstance(e, EndpointUnreachable)] == [said[0]]  # said once


async def test_an_unknown_host_and_a_tls_mismatch_say_what_to_check() -> None:
    clock = VirtualClock()
    url = "http://no-such-host.invalid/v1"
    adapter = OpenAIProvider(api_key="k", base_url=url, provider_name="x")
    with pytest.raises(LlmError, match=r"cannot resolve no-such-host\.invalid"):
        await _guard(adapter, url, [], clock).chat(REQUEST)

    with FakeLlmServer() as plain:  # speaks http; asked for https
        tls_url = plain.openai_url.replace("http://", "https://")
        adapter = OpenAIProvider(api_key="k", base_url=tls_url, provider_name="x")
        said: list[Event] = []
        guard = _guard(adapter, tls_url, said, clock)
        with pytest.raises(LlmError, match=r"TLS handshake .* try http:// in base_url"):
            await _recovering(guard, said, clock).chat(REQUEST)
    assert clock.sleeps == []  # waiting does not fix TLS: the policy does not wait
    assert said[0] == EndpointUnreachable(url=tls_url, reason="TLS handshake failed", window=0)


async def test_a_server_that_comes_back_within_the_window_is_used() -> None:
    calls = 0

    async def answer(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        nonlocal calls
        calls += 1
        if calls <= 3:
            raise _raised_from(ConnectionRefusedError(111, "refused"))
        return ChatResponse(message=Message.assistant("back"), stop_reason=StopReason.END_TURN)

    said: list[Event] = []
    clock = VirtualClock()
    url = "http://127.0.0.1:9/v1"
    guard = _guard(FunctionProvider(answer), url, said, clock)

    response = await _recovering(guard, said, clock).chat(REQUEST)

    assert response.message.text == "back"
    assert calls == 4  # every send was the retry loop's: the guard sends nothing itself
    assert said[-1] == EndpointAnswers(url=url)
    assert said[-1].describe() == f"{url} answers again."
    assert clock.sleeps == [1.0, 1.0, 1.0]


def _openai_at(base_url: str, fake_llm: FakeLlmServer, workspace: Path, home: Path) -> AgentRun:
    """``agent -p hi`` with JSON output, on the OpenAI model served at ``base_url``."""
    return run_agent(
        "-p",
        "hi",
        "--model",
        MODELS["openai"],
        "--output-format",
        "json",
        server=fake_llm,
        workspace=workspace,
        home=home,
        env={"OPENAI_BASE_URL": base_url},
    )


def test_a_404_where_v1_is_missing_says_so(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(404, message="Not Found"))
    root = fake_llm.root_url  # no /v1
    run = _openai_at(root, fake_llm, workspace, decoy_home)
    result = json.loads(run.stdout)
    assert run.code == 1
    assert f"is /v1 missing from base_url? Try {root}/v1" in result["error"]


def test_p_on_a_dead_endpoint_fails_with_a_progress_line_and_the_url(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    run = _openai_at(url, fake_llm, workspace, decoy_home)
    result = json.loads(run.stdout)
    assert run.code == 75  # the provider is unavailable: a script may try again later
    assert result["subtype"] == "error_provider_unavailable"
    said = " ".join(run.stderr.split())
    assert f"Cannot reach {url} (connection refused); trying again for up to 10 s" in said
    assert "retrying in" not in said  # the line above said it; no line per try
    assert "is the server running?" in result["error"]
    assert "does not know this model" not in result["error"]
    kinds = [event.get("kind") for event in result["events"] if event["type"] == "retry_scheduled"]
    assert set(kinds) == {"unreachable"}  # the policy's tries, each in the record


def test_p_uses_a_server_that_starts_while_it_waits(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    port = _closed_port()
    url = f"http://127.0.0.1:{port}/v1"
    env = agent_env(fake_llm, decoy_home, {"OPENAI_BASE_URL": url})
    argv = agent_command("-p", "hi", "--model", MODELS["openai"])
    with subprocess.Popen(
        argv,
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stderr is not None
        said = f"Cannot reach {url} (connection refused)"
        for line in proc.stderr:  # the server starts only once the agent waits for it
            if said in line:
                break
        else:
            pytest.fail(f"no line saying {said!r}")
        late = FakeLlmServer(port=port)
        late.script(Reply.text("late but here"))
        with late:
            out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "late but here" in out
    assert f"{url} answers again" in err


def test_the_repl_says_it_waits_for_a_server_and_uses_it_once_it_listens(spawn: Spawn) -> None:
    port = _closed_port()
    url = f"http://127.0.0.1:{port}/v1"
    term = spawn(model=MODELS["openai"], env={"OPENAI_BASE_URL": url})
    term.prompt()
    term.send_line("hi")
    waiting = clean(term.expect("trying again for up to 10 s"))
    late = FakeLlmServer(port=port)
    late.script(Reply.text("late but here"))
    with late:
        answered = clean(term.expect("late but here", timeout=30))
        shown = term.prompt()
    term.exit()

    assert f"Cannot reach {url} (connection refused)" in " ".join(waiting.split())
    assert f"{url} answers again." in " ".join((answered + shown).split())
    assert "Traceback" not in term.raw
