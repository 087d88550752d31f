"""OpenTelemetry export, end to end: the real ``agent -p`` against the fake LLM server, its
OTLP/HTTP exports received by a collector on loopback and decoded with opentelemetry-proto."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from agent.telemetry import telemetry_wanted
from tests.fakes.cli import AgentRun, agent_env, run_agent
from tests.fakes.hook_log import hook_payloads, record_recovery_hooks
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.side_requests import fetching, is_side, serve_long_page
from tests.fakes.subagents import (
    always,
    answered,
    define,
    delegating,
    gone_then_fallback,
    is_child,
    job_of,
    task_calls,
)
from tests.fakes.web_server import FakeWebServer

PRICED = "anthropic:claude-sonnet-4-5"
FALLBACK = "anthropic:claude-haiku-4-5"
PRICED_ID, FALLBACK_ID = "claude-sonnet-4-5", "claude-haiku-4-5"
"""How telemetry names them (``model``, ``from``, ``to``): the bare id, as Claude Code does."""
KEY = "sk-ant-test-key-0123456789"  # what tests.fakes.cli.agent_env hands the agent
SDK = re.compile(r"opentelemetry\.(sdk|exporter)")
"""The SDK and its exporters (the API alone comes with the provider SDKs, for their tracing)."""
FAST = "recovery: {base_backoff: 0.05, max_backoff: 0.2, rate_limit_floor: 0.1}\n"
GIVE_UP = "recovery: {max_attempts: 2, base_backoff: 0.05, max_backoff: 0.1}\n"
"""Two requests to each model of the chain, then the call is given up."""
SMALL, SMALL_ID = "anthropic:claude-small", "claude-small"


@dataclass
class Collector:
    """An OTLP/HTTP receiver on loopback: keeps every body posted to it."""

    server: ThreadingHTTPServer
    posts: list[tuple[str, bytes]] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def raw(self) -> bytes:
        return b"".join(body for _, body in self.posts)

    def metrics(self) -> list[tuple[str, dict[str, Any], float]]:
        """Every data point: (metric name, its attributes, its value)."""
        points = []
        for path, body in self.posts:
            if path != "/v1/metrics":
                continue
            request = ExportMetricsServiceRequest.FromString(body)
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        data = metric.sum.data_points or metric.histogram.data_points
                        for point in data:
                            value = getattr(point, "as_double", 0) or getattr(point, "as_int", 0)
                            if metric.HasField("histogram"):
                                value = point.count
                            points.append((metric.name, _attributes(point.attributes), value))
        return points

    def events(self) -> list[dict[str, Any]]:
        """Every log record's attributes (each has ``event.name``)."""
        found = []
        for path, body in self.posts:
            if path != "/v1/logs":
                continue
            for resource in ExportLogsServiceRequest.FromString(body).resource_logs:
                for scope in resource.scope_logs:
                    found += [_attributes(record.attributes) for record in scope.log_records]
        return found

    def resources(self) -> list[dict[str, Any]]:
        return [
            _attributes(resource.resource.attributes)
            for path, body in self.posts
            if path == "/v1/metrics"
            for resource in ExportMetricsServiceRequest.FromString(body).resource_metrics
        ]


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind is not None else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


@pytest.fixture
def collector() -> Iterator[Collector]:
    posts: list[tuple[str, bytes]] = []

    class Receive(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            posts.append((self.path, body))
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receive)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Collector(server, posts)
    server.shutdown()
    server.server_close()


def telemetry_env(collector: Collector, **more: str) -> dict[str, str]:
    return {
        "AGENT_ENABLE_TELEMETRY": "1",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
        "OTEL_RESOURCE_ATTRIBUTES": "team=platform",
        **more,
    }


def run(
    fake_llm: FakeLlmServer,
    workspace: Path,
    home: Path,
    env: dict[str, str],
    *args: str,
    config: str = FAST,
) -> AgentRun:
    (workspace / "agent.yaml").write_text(config)
    done = run_agent(
        "-p", "say it", "--model", PRICED, *args,
        server=fake_llm, workspace=workspace, home=home, env=env,
    )  # fmt: skip
    assert done.code == 0, done.stderr
    return done


def named(points: list[tuple[str, dict[str, Any], float]], name: str) -> list[Any]:
    return [(attrs, value) for metric, attrs, value in points if metric == name]


def test_a_rate_limit_then_an_answer_arrives_as_metrics_and_events(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    fake_llm.script(Fault.status(429, "rate_limit_error"), Reply.text("done"))

    done = run(fake_llm, workspace, decoy_home, telemetry_env(collector))

    assert done.stdout.strip() == "done"
    points = collector.metrics()
    (session_attrs, sessions), *_ = named(points, "agent.session.count")
    assert sessions == 1
    session_id = session_attrs["session.id"]
    assert session_attrs["model"] == PRICED_ID
    [(retry, count)] = named(points, "agent.retry.count")
    assert count == 1
    assert retry == {
        "session.id": session_id,
        "model": PRICED_ID,
        "provider": "anthropic",
        "reason": "rate_limit",
        "purpose": "turn",
    }
    assert {attrs["model"] for attrs, _ in named(points, "agent.token.usage")} == {PRICED_ID}
    tokens = {attrs["type"]: value for attrs, value in named(points, "agent.token.usage")}
    assert tokens == {"input": 11, "output": 7}
    [(cost_attrs, cost)] = named(points, "agent.cost.usage")
    assert cost > 0
    assert cost_attrs["session.id"] == session_id
    assert all(
        r["service.name"] == "agent" and r["team"] == "platform" for r in collector.resources()
    )

    events = collector.events()
    [error] = [e for e in events if e["event.name"] == "agent.api_error"]
    assert error["status_code"] == 429
    assert error["attempt"] == 1
    assert error["error_kind"] == "rate_limit"
    assert error["model"] == PRICED_ID
    assert error["session.id"] == session_id
    assert error["next"] == "retry"
    assert error["retry_after"] > 0
    [request] = [e for e in events if e["event.name"] == "agent.api_request"]
    assert request["attempt"] == 2
    assert request["model"] == PRICED_ID
    assert request["input_tokens"] == 11
    assert request["output_tokens"] == 7
    assert request["cost_usd"] == pytest.approx(cost)
    assert request["duration_ms"] >= 0
    [prompt] = [e for e in events if e["event.name"] == "agent.user_prompt"]
    assert prompt["prompt_length"] == len("say it")
    assert "prompt" not in prompt


def test_a_fallback_and_its_reason_are_exported(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    overloaded = Fault.status(529, "overloaded_error")
    fake_llm.script(overloaded, overloaded, overloaded, model=PRICED.split(":")[1])
    fake_llm.script(Reply.text("done"), model=FALLBACK.split(":")[1])

    run(fake_llm, workspace, decoy_home, telemetry_env(collector), "--fallback-model", FALLBACK)

    [(attrs, count)] = named(collector.metrics(), "agent.fallback.count")
    assert count == 1
    assert (attrs["from"], attrs["to"]) == (PRICED_ID, FALLBACK_ID)
    [event] = [e for e in collector.events() if e["event.name"] == "agent.fallback"]
    assert (event["from"], event["to"], event["state"]) == (PRICED_ID, FALLBACK_ID, "activated")
    assert event["reason"]


def test_a_childs_fallback_is_counted_and_told_as_the_sub_agents(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    define(workspace / ".agent" / "agents", "gone", "model: anthropic:claude-gone\n")
    fake_llm.respond_with(gone_then_fallback)

    run(fake_llm, workspace, decoy_home, telemetry_env(collector), "--yes")

    [(attrs, count)] = named(collector.metrics(), "agent.fallback.count")
    assert count == 1
    assert (attrs["from"], attrs["to"], attrs["agent_type"]) == (
        "claude-gone",
        PRICED_ID,
        "gone",
    )
    assert "agent_id" not in attrs  # one series per kind, not per child
    [event] = [e for e in collector.events() if e["event.name"] == "agent.fallback"]
    assert (event["from"], event["to"], event["state"]) == (
        "claude-gone",
        PRICED_ID,
        "activated",
    )
    assert event["agent_type"] == "gone"
    assert event["agent_id"]
    assert event["sticky"] is True  # an unknown model: the children stay off it
    [error] = [e for e in collector.events() if e["event.name"] == "agent.api_error"]
    assert (error["model"], error["status_code"], error["next"]) == (
        "claude-gone",
        404,
        "fallback",
    )
    assert (error["agent_type"], error["agent_id"]) == ("gone", event["agent_id"])


def test_a_childs_retry_is_counted_with_the_runs_and_named_by_its_kind(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    failed: list[bool] = []

    def child(request: RecordedRequest) -> Step:
        if not failed:
            failed.append(True)
            return Fault.status(429, "rate_limit_error")
        return Reply.text("child answer")

    fake_llm.respond_with(delegating(child, ("scan", "explore")))
    run(fake_llm, workspace, decoy_home, telemetry_env(collector), "--yes")

    [(retry, count)] = named(collector.metrics(), "agent.retry.count")
    assert count == 1
    assert (retry["model"], retry["reason"], retry["agent_type"]) == (
        PRICED_ID,
        "rate_limit",
        "explore",
    )
    assert "agent_id" not in retry  # one series per kind, not per child
    [error] = [e for e in collector.events() if e["event.name"] == "agent.api_error"]
    assert (error["status_code"], error["next"], error["agent_type"]) == (429, "retry", "explore")
    assert error["agent_id"]
    requests = [e for e in collector.events() if e["event.name"] == "agent.api_request"]
    assert len(requests) == 3  # the parent's two, the child's answer


def test_children_on_one_model_at_once_each_have_their_own_attempt_numbers(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    a_sent_again, b_answered = threading.Event(), threading.Event()
    a_asked: list[bool] = []

    def respond(request: RecordedRequest) -> Step:
        if not is_child(request):
            if answered(request):
                return Reply.text("parent answer")
            return task_calls(("job-a", "general-purpose"), ("job-b", "general-purpose"))
        if "job-a" in job_of(request):  # fails once; its retry is answered after b's answer
            a_asked.append(True)
            if len(a_asked) == 1:
                return Fault.status(500, "api_error")
            a_sent_again.set()
            b_answered.wait(30)
            return Reply.text("a done", input_tokens=77)
        if answered(request):  # b's first answer was counted: its tool ran since
            b_answered.set()
            return Reply.text("b done", input_tokens=55)
        a_sent_again.wait(30)  # b's first request is answered while a's retry is under way
        return Reply.tool_call("read_file", {"path": "a.txt"}, input_tokens=33)

    fake_llm.respond_with(respond)
    run(fake_llm, workspace, decoy_home, telemetry_env(collector), "--yes")

    assert b_answered.is_set()
    assert len(a_asked) == 2
    requests = [e for e in collector.events() if e["event.name"] == "agent.api_request"]
    children = {e["input_tokens"]: e["attempt"] for e in requests if e["purpose"] == "subagent"}
    assert children == {77: 2, 33: 1, 55: 1}  # a's answer came to its second send
    [error] = [e for e in collector.events() if e["event.name"] == "agent.api_error"]
    assert (error["attempt"], error["next"], error["purpose"]) == (1, "retry", "subagent")


def test_a_child_on_a_model_of_its_own_gives_up_on_its_model(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    define(workspace / ".agent" / "agents", "gone", "model: anthropic:claude-gone\n")

    # Its model and then the session's fail: the child gives up.
    fake_llm.respond_with(delegating(always(Fault.status(500, "api_error")), ("job", "gone")))
    run(fake_llm, workspace, decoy_home, telemetry_env(collector), "--yes", config=GIVE_UP)

    sent = [r.model for r in fake_llm.requests if is_child(r)]
    assert sent == ["claude-gone", "claude-gone", "claude-sonnet-4-5", "claude-sonnet-4-5"]
    [gave_up] = [e for e in collector.events() if e["event.name"] == "agent.api_retries_exhausted"]
    assert (gave_up["model"], gave_up["error_kind"]) == ("claude-gone", "server")
    assert (gave_up["agent_type"], gave_up["purpose"]) == ("gone", "subagent")
    assert gave_up["requests"] == 4


def test_a_side_requests_failures_are_told_with_what_it_was_for_and_fail_no_turn(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    workspace: Path,
    decoy_home: Path,
    collector: Collector,
) -> None:
    record_recovery_hooks(decoy_home, seen := workspace / "hooks")
    fetch = serve_long_page(web_server, "Which change is caching?")
    # small_model's answer over the page, and then the session's model's: both fail
    side = always(Fault.status(500, "api_error"))
    fake_llm.respond_with(fetching(fetch, side, Reply.text("read the page itself")))
    config = GIVE_UP + f"small_model: {SMALL}\n"
    env = telemetry_env(collector)
    done = run(
        fake_llm, workspace, decoy_home, env, "--yes", "--output-format", "json", config=config
    )

    assert (done.json()["subtype"], done.json()["result"]) == ("success", "read the page itself")
    sent = [r.model for r in fake_llm.requests if is_side(r)]
    assert sent == ["claude-small", "claude-small", "claude-sonnet-4-5", "claude-sonnet-4-5"]
    events = collector.events()
    errors = [e for e in events if e["event.name"] == "agent.api_error"]
    assert [(e["model"], e["attempt"], e["next"], e["purpose"]) for e in errors] == [
        (SMALL_ID, 1, "retry", "web_fetch"),
        (SMALL_ID, 2, "fallback", "web_fetch"),
        (PRICED_ID, 1, "retry", "web_fetch"),
        (PRICED_ID, 2, "fallback", "web_fetch"),
    ]
    [gave_up] = [e for e in events if e["event.name"] == "agent.api_retries_exhausted"]
    assert (gave_up["model"], gave_up["purpose"], gave_up["requests"]) == (SMALL_ID, "web_fetch", 4)
    retries = named(collector.metrics(), "agent.retry.count")
    assert {(attrs["model"], attrs["purpose"]): n for attrs, n in retries} == {
        (SMALL_ID, "web_fetch"): 1,
        (PRICED_ID, "web_fetch"): 1,
    }
    turns = [e for e in events if e["event.name"] == "agent.api_request"]
    assert [(e["purpose"], e["attempt"]) for e in turns] == [("turn", 1), ("turn", 1)]
    payloads = hook_payloads(seen)
    assert not [p for p in payloads if p.get("kind") == "provider_unavailable"], payloads


def test_a_side_requests_wait_is_not_the_runs_when_the_turn_then_fails_for_its_own_reason(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    workspace: Path,
    decoy_home: Path,
    collector: Collector,
) -> None:
    record_recovery_hooks(decoy_home, seen := workspace / "hooks")
    fetch = serve_long_page(web_server, "What is it?")
    later = Fault.status(429, "rate_limit_error", headers={"retry-after": "3600"})

    def side(request: RecordedRequest) -> Step:  # small_model: come back in an hour; then the
        return later if request.model == "claude-small" else Fault.status(500, "api_error")

    # the session's own model's server fails the turn
    fake_llm.respond_with(fetching(fetch, side, Fault.status(500, "api_error")))
    (workspace / "agent.yaml").write_text(GIVE_UP + f"small_model: {SMALL}\n")
    done = run_agent(
        "-p", "what is it?", "--yes", "--model", PRICED, "--output-format", "json",
        server=fake_llm, workspace=workspace, home=decoy_home, env=telemetry_env(collector),
    )  # fmt: skip

    assert done.code == 75, done.stderr  # the provider is unavailable: the turn's own
    result = done.json()
    assert result["subtype"] == "error_provider_unavailable"
    assert result["retry_after"] is None  # the turn's server named no wait; the side's hour
    events = collector.events()
    exhausted = [e for e in events if e["event.name"] == "agent.api_retries_exhausted"]
    assert [(e["purpose"], e["model"], e.get("retry_after")) for e in exhausted] == [
        ("web_fetch", SMALL_ID, 3600.0),
        ("turn", PRICED_ID, None),
    ]
    payloads = hook_payloads(seen)
    unavailable = [p for p in payloads if p.get("kind") == "provider_unavailable"]
    assert [p["details"]["error_kind"] for p in unavailable] == ["server"], payloads


def test_a_failure_that_goes_straight_to_the_fallback_is_an_api_error(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    fake_llm.script(Fault.status(401, "authentication_error"), model=PRICED.split(":")[1])
    fake_llm.script(Reply.text("done"), model=FALLBACK.split(":")[1])

    done = run(
        fake_llm, workspace, decoy_home, telemetry_env(collector), "--fallback-model", FALLBACK
    )

    assert done.stdout.strip() == "done"
    events = collector.events()
    [error] = [e for e in events if e["event.name"] == "agent.api_error"]
    assert (error["model"], error["status_code"], error["error_kind"]) == (PRICED_ID, 401, "auth")
    assert (error["attempt"], error["next"], error["provider"]) == (1, "fallback", "anthropic")
    assert "retry_after" not in error  # the server named no wait, and none is scheduled
    assert named(collector.metrics(), "agent.retry.count") == []
    [fallback] = [e for e in events if e["event.name"] == "agent.fallback"]
    assert (fallback["from"], fallback["to"]) == (PRICED_ID, FALLBACK_ID)
    assert KEY.encode() not in collector.raw()


def test_a_request_the_provider_rejects_is_an_api_error_that_ends_the_call(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    fake_llm.script(Fault.status(400, "invalid_request_error"))
    (workspace / "agent.yaml").write_text(FAST)

    done = run_agent(
        "-p", "say it", "--model", PRICED,
        server=fake_llm, workspace=workspace, home=decoy_home, env=telemetry_env(collector),
    )  # fmt: skip

    assert done.code != 0
    assert "Traceback" not in done.stderr
    [error] = [e for e in collector.events() if e["event.name"] == "agent.api_error"]
    assert (error["status_code"], error["error_kind"]) == (400, "bad_request")
    assert error["next"] == "fail"
    assert KEY.encode() not in collector.raw()


def test_no_key_no_command_no_file_and_no_prompt_leave_by_default(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    written = {"path": "notes.txt", "content": "file-canary-3141\nsecond line\n"}
    fake_llm.script(
        Reply.tool_call("write_file", written),
        Reply.tool_call("run_command", {"command": "echo telemetry-canary-5521"}),
        Reply.text("done"),
    )
    (workspace / "agent.yaml").write_text(FAST)

    done = run_agent(
        "-p", "prompt-canary-9917", "--yes", "--model", PRICED,
        server=fake_llm, workspace=workspace, home=decoy_home, env=telemetry_env(collector),
    )  # fmt: skip

    assert done.code == 0, done.stderr
    assert (workspace / "notes.txt").read_text() == written["content"]
    raw = collector.raw()
    assert b"agent.tool_result" in raw
    for secret in (KEY, "telemetry-canary-5521", "file-canary-3141", "prompt-canary-9917"):
        assert secret.encode() not in raw
    results = [e for e in collector.events() if e["event.name"] == "agent.tool_result"]
    assert [(e["tool"], e["success"], e["decision"]) for e in results] == [
        ("write_file", True, "accept"),
        ("run_command", True, "accept"),
    ]
    assert all("tool_input" not in e for e in results)
    points = collector.metrics()
    assert sorted(attrs["tool"] for attrs, _ in named(points, "agent.tool.duration")) == [
        "run_command",
        "write_file",
    ]
    [(lines, added)] = named(points, "agent.lines_of_code.count")
    assert (lines["type"], added) == ("added", 2)


def test_a_refused_command_is_a_rejected_decision(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "echo telemetry-canary-5521"}),
        Reply.text("done"),
    )

    run(fake_llm, workspace, decoy_home, telemetry_env(collector))  # no --yes: not approved

    [decision] = [e for e in collector.events() if e["event.name"] == "agent.tool_decision"]
    assert (decision["tool"], decision["decision"]) == ("run_command", "reject")
    assert decision["source"] in {"approval", "policy"}
    [result] = [e for e in collector.events() if e["event.name"] == "agent.tool_result"]
    assert (result["success"], result["decision"]) == (False, "reject")


def test_grpc_is_a_protocol_too(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    fake_llm.script(Reply.text("done"))
    grpc = telemetry_env(collector, OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
    grpc["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"  # nothing listens

    done = run(fake_llm, workspace, decoy_home, grpc)

    assert done.stdout.strip() == "done"
    assert "Telemetry is" not in done.stderr  # it started (its exports fail: nothing listens)
    assert "Traceback" not in done.stderr


def test_tool_details_are_sent_redacted_only_when_asked_for(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    command = f"echo telemetry-canary-5521 {KEY}"
    fake_llm.script(Reply.tool_call("run_command", {"command": command}), Reply.text("done"))
    env = telemetry_env(collector, AGENT_LOG_TOOL_DETAILS="1", AGENT_LOG_USER_PROMPTS="1")
    (workspace / "agent.yaml").write_text(FAST)

    done = run_agent(
        "-p", "prompt-canary-9917", "--yes", "--model", PRICED,
        server=fake_llm, workspace=workspace, home=decoy_home, env=env,
    )  # fmt: skip

    assert done.code == 0, done.stderr
    raw = collector.raw()
    assert b"telemetry-canary-5521" in raw
    assert b"prompt-canary-9917" in raw
    assert KEY.encode() not in raw


def test_a_bad_setting_is_one_line_and_the_turn_still_runs(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    fake_llm.script(Reply.text("done"))

    done = run(
        fake_llm, workspace, decoy_home, telemetry_env(collector, OTEL_METRICS_EXPORTER="prom")
    )

    assert done.stdout.strip() == "done"
    assert "Traceback" not in done.stderr
    [line] = [line for line in done.stderr.splitlines() if "OTEL_METRICS_EXPORTER" in line]
    assert "otlp, console or none" in line
    assert collector.posts == []


def test_a_collector_that_is_down_does_not_hold_up_the_exit(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, collector: Collector
) -> None:
    fake_llm.script(Reply.text("done"))
    down = telemetry_env(collector, OTEL_EXPORTER_OTLP_TIMEOUT="30000")
    down["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"  # discard: nothing listens

    done = run(fake_llm, workspace, decoy_home, down)

    assert done.stdout.strip() == "done"
    assert "Traceback" not in done.stderr
    assert "Failed to export" not in done.stderr  # the SDK's complaints go to the log...
    said = [line for line in done.stderr.splitlines() if "elemetry" in line]
    assert len(said) <= 1, said  # ... and at most one line says so at exit
    assert all("OTEL_EXPORTER_OTLP_ENDPOINT" in line for line in said)


def test_a_collector_that_never_answers_never_holds_up_a_turn(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    arrived: list[str] = []
    release = threading.Event()

    class Stuck(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            arrived.append(self.path)
            release.wait(60)  # takes the export and never answers while the turn runs

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stuck)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "a.txt"}),
        Reply.tool_call("list_files", {"pattern": "*"}),
        Reply.text("done"),
    )
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "agent.yaml").write_text(FAST)
    env = {
        "AGENT_ENABLE_TELEMETRY": "1",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "600000",  # an export in the turn's way would hang it
        "OTEL_METRIC_EXPORT_INTERVAL": "1",
        "OTEL_LOGS_EXPORT_INTERVAL": "1",
    }
    try:
        done = run_agent(
            "-p", "read it", "--model", PRICED,
            server=fake_llm, workspace=workspace, home=decoy_home, env=env,
        )  # fmt: skip
    finally:
        release.set()
        server.shutdown()
        server.server_close()

    assert done.code == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert len(fake_llm.requests) == 3
    assert arrived  # the exports were sent, and never answered
    assert "Traceback" not in done.stderr


def test_a_plain_start_never_imports_opentelemetry(
    workspace: Path, decoy_home: Path, fake_llm: FakeLlmServer
) -> None:
    probe = (
        "import sys, runpy\n"
        "SDK = ('opentelemetry.sdk', 'opentelemetry.exporter')\n"
        "sys.argv = ['agent', '--version']\n"
        "try:\n"
        "    runpy.run_module('agent', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert not [m for m in sys.modules if m.startswith(SDK)], 'imported'\n"
        "from agent.setup.config import Config\n"
        "from agent.app import build_agent\n"
        "assert not [m for m in sys.modules if m.startswith(SDK)], 'imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_a_turn_without_telemetry_never_imports_opentelemetry(
    workspace: Path, decoy_home: Path, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Reply.text("done"))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agent", "-p", "say it"],
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home, {"AGENT_ENABLE_TELEMETRY": ""}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert " agent.app\n" in done.stderr  # importtime's report is there
    assert not SDK.search(done.stderr)


@pytest.mark.parametrize(
    ("in_config", "variable", "wanted"),
    [(False, "", False), (True, "", True), (False, "1", True), (True, "0", False)],
)
def test_the_variable_turns_telemetry_on_or_off_over_the_config(
    in_config: bool, variable: str, wanted: bool
) -> None:
    environ = {"AGENT_ENABLE_TELEMETRY": variable} if variable else {}
    assert telemetry_wanted(in_config, environ) is wanted


def test_the_dashboard_charts_only_documented_metrics() -> None:
    docs = Path(__file__).parents[2] / "docs"
    documented = set(
        re.findall(r"^\| `(agent\.[a-z_.]+)` \|", (docs / "telemetry.md").read_text(), re.M)
    )
    dashboard = json.loads((docs / "telemetry-dashboard.json").read_text())
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\b(agent_[a-z_]+)", target["expr"])
    }
    assert "agent.retry.count" in documented
    assert queried
    assert {name.replace("_", ".", 2) for name in queried} <= documented


def test_every_model_is_named_one_way_whoever_asked(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    workspace: Path,
    decoy_home: Path,
    collector: Collector,
) -> None:
    define(workspace / ".agent" / "agents", "own", "model: anthropic:claude-own\n")
    fetch = serve_long_page(web_server, "Which change is caching?")
    failed: set[str] = set()

    def once(who: str, fault: Step, then: Step) -> Step:
        if who in failed:
            return then
        failed.add(who)
        return fault

    def respond(request: RecordedRequest) -> Step:
        if is_side(request):  # small_model's answer, asked by the child
            return once("small", Fault.status(500, "api_error"), Reply.text("number 7"))
        if is_child(request):  # on its own model
            if answered(request):
                return Reply.text("child answer")
            return once(
                "own", Fault.status(429, "rate_limit_error"), Reply.tool_call("web_fetch", fetch)
            )
        if answered(request):
            return Reply.text("parent answer")
        return once("parent", Fault.status(529, "overloaded_error"), task_calls(("job", "own")))

    fake_llm.respond_with(respond)
    config = FAST + f"small_model: {SMALL}\n"
    run(fake_llm, workspace, decoy_home, telemetry_env(collector), "--yes", config=config)

    assert failed == {"small", "own", "parent"}
    events, points = collector.events(), collector.metrics()
    ids = {PRICED_ID, "claude-own", SMALL_ID}
    named_models = [e for e in events if "model" in e] + [a for _, a, _ in points if "model" in a]
    assert {(e["model"], e["provider"]) for e in named_models} == {(m, "anthropic") for m in ids}
    for name in ("agent.api_request", "agent.api_error"):
        assert {e["model"] for e in events if e["event.name"] == name} == ids, name
    for metric in ("agent.token.usage", "agent.retry.count"):
        assert {attrs["model"] for attrs, _ in named(points, metric)} == ids, metric
    [child_error] = [
        e for e in events if e["event.name"] == "agent.api_error" and e["model"] == "claude-own"
    ]
    child = ("own", child_error["agent_id"])
    requests = [e for e in events if e["event.name"] == "agent.api_request"]
    asked = {e["purpose"]: [] for e in requests}  # who asked, per purpose
    for e in requests:
        asked[e["purpose"]].append((e.get("agent_type"), e.get("agent_id")))
    # the child's own requests, and its tool's side request, name it; the parent's do not
    assert asked == {"turn": [(None, None)] * 2, "subagent": [child] * 2, "web_fetch": [child]}
    for attrs, _ in named(points, "agent.token.usage") + named(points, "agent.cost.usage"):
        assert not {"agent_type", "agent_id"} & attrs.keys()  # one series per model


def test_small_models_fallback_is_its_own_not_the_sessions(
    fake_llm: FakeLlmServer,
    web_server: FakeWebServer,
    workspace: Path,
    decoy_home: Path,
    collector: Collector,
) -> None:
    fetch = serve_long_page(web_server, "Which change is caching?")

    def side(request: RecordedRequest) -> Step:  # small_model is unknown: the session's answers
        if request.model == SMALL_ID:
            return Fault.status(404, "not_found_error", message=f"model: {SMALL_ID}")
        return Reply.text("number 7")

    fake_llm.respond_with(fetching(fetch, side, Reply.text("read it")))
    config = FAST + f"small_model: {SMALL}\n"
    done = run(
        fake_llm, workspace, decoy_home, telemetry_env(collector), "--yes",
        "--output-format", "json", config=config,
    )  # fmt: skip

    [(attrs, count)] = named(collector.metrics(), "agent.fallback.count")
    assert count == 1
    assert (attrs["from"], attrs["to"], attrs["purpose"]) == (SMALL_ID, PRICED_ID, "web_fetch")
    [event] = [e for e in collector.events() if e["event.name"] == "agent.fallback"]
    assert (event["from"], event["to"], event["state"]) == (SMALL_ID, PRICED_ID, "activated")
    assert (event["purpose"], event["from_provider"], event["to_provider"]) == (
        "web_fetch",
        "anthropic",
        "anthropic",
    )
    result = done.json()
    assert result["fallbacks"] == []  # the run's model never moved
    [path] = (decoy_home / ".agent" / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert not [r for r in records if r["type"] == "model_switch"], records
