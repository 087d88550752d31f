"""``agent doctor`` and ``agent -p /doctor``: /doctor's checks from a shell, with an exit code
that says whether something is broken."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer


@pytest.mark.parametrize("args", [("doctor",), ("-p", "/doctor")])
def test_doctor_from_a_shell_checks_the_model_and_exits_0(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, args: tuple[str, ...]
) -> None:
    fake_llm.script(Reply.text("ok"))
    run = run_agent(*args, server=fake_llm, workspace=workspace, home=decoy_home)

    assert run.code == 0, run.stdout + run.stderr
    assert "✓  model anthropic:" in run.stdout
    assert "answered in" in run.stdout
    assert "sandbox" in run.stdout
    assert "Everything needed works" in run.stdout
    assert len(fake_llm.requests) == 1  # one tiny probe, no turn
    assert not list((decoy_home / ".agent" / "sessions").glob("*.jsonl"))  # no session left


def test_doctor_exits_1_and_says_the_fix_when_the_key_is_refused(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Fault.status(401))
    run = run_agent("doctor", server=fake_llm, workspace=workspace, home=decoy_home)

    assert run.code == 1, run.stdout + run.stderr
    assert "✗" in run.stdout
    assert "1 check failed" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def test_doctor_exits_2_on_a_configuration_it_cannot_load(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent(
        "--set", "model=nonsense", "doctor", server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 2
    assert "provider:model" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert not fake_llm.requests


def test_doctor_says_where_telemetry_goes_and_never_a_headers_value(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("ok"))
    env = {
        "AGENT_ENABLE_TELEMETRY": "1",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_LOGS_EXPORTER": "console",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:otel-pass-4471@127.0.0.1:9/",
        "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer otel-token-5523",
        "OTEL_METRIC_EXPORT_INTERVAL": "600000",
    }
    run = run_agent("doctor", server=fake_llm, workspace=workspace, home=decoy_home, env=env)

    assert run.code == 0, run.stdout + run.stderr
    output = " ".join((run.stdout + run.stderr).split())  # the table wraps long lines
    assert "telemetry" in output
    assert "metrics otlp http/protobuf to http://127.0.0.1:9/v1/metrics" in output
    assert "events console" in output
    assert "headers Authorization (values not shown)" in output
    for secret in ("otel-token-5523", "otel-pass-4471", "Bearer"):
        assert secret not in output


def test_doctor_fails_on_a_telemetry_setting_it_cannot_use(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("ok"))
    env = {"AGENT_ENABLE_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
    run = run_agent("doctor", server=fake_llm, workspace=workspace, home=decoy_home, env=env)

    assert run.code == 1, run.stdout + run.stderr
    output = " ".join(run.stdout.split())
    assert "OTEL_EXPORTER_OTLP_PROTOCOL='http/json': use grpc or http/protobuf." in output
    assert "Traceback" not in run.stdout + run.stderr
