"""What a command sees of the agent's environment: the `shell_env` builder, and run_command
run for real (through the sandbox launcher) with a fake provider key in the environment."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from tests.tools.conftest import MakeHarness
from tools.guard.sandbox import Sandbox, SandboxMode, SandboxSettings
from tools.shell_env import ShellEnv, ShellEnvSettings, Withheld

FAKE_KEY = "sk-ant-test-0123456789abcdef"
ENVIRON = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/person",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm",
    "ANTHROPIC_API_KEY": FAKE_KEY,
    "gh_token": "ghp-test",
    "DB_PASSWORD": "hunter2",
    "AWS_SECRET_ACCESS_KEY": "aws-test",
    "MY_LLM_CREDENTIAL": "custom-provider-key",
    "AWS_REGION": "eu-west-1",
    "EDITOR": "vi",
}


def build(provider_keys: frozenset[str] = frozenset(), **settings: object) -> dict[str, str]:
    policy = ShellEnv(ShellEnvSettings.model_validate(settings), provider_keys)
    return policy.build(ENVIRON)


def test_by_default_every_secret_looking_name_and_provider_key_is_withheld() -> None:
    env = build(frozenset({"MY_LLM_CREDENTIAL"}))

    assert sorted(env) == ["AWS_REGION", "EDITOR", "HOME", "LANG", "LC_ALL", "PATH", "TERM"]


def test_the_opentelemetry_exporters_headers_are_withheld_they_carry_a_token() -> None:
    environ = {
        "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer otel-test-token",
        "OTEL_EXPORTER_OTLP_LOGS_HEADERS": "x-honeycomb-team=otel-test-team",
        "otel_exporter_otlp_metrics_headers": "api=otel-test-api",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
    }
    policy = ShellEnv()

    assert policy.build(environ) == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    assert {policy.withholds(name) for name in environ if "HEADERS" in name.upper()} == {
        "secret name"
    }
    assert "OTEL_EXPORTER_OTLP_HEADERS" in ShellEnv(
        ShellEnvSettings(ignore_default_excludes=True)
    ).build(environ)


def test_names_match_case_insensitively() -> None:
    assert "gh_token" not in build()
    assert "EDITOR" not in build(exclude=["edit*"])


def test_inherit_core_keeps_path_home_locale_and_terminal_only() -> None:
    assert sorted(build(inherit="core")) == ["HOME", "LANG", "LC_ALL", "PATH", "TERM"]


def test_inherit_none_passes_only_set() -> None:
    assert build(inherit="none", set={"CI": "1"}) == {"CI": "1"}


def test_exclude_withholds_more() -> None:
    env = build(exclude=["AWS_*"])

    assert "AWS_REGION" not in env
    assert "EDITOR" in env


def test_include_only_keeps_just_the_names_it_matches_secrets_still_withheld() -> None:
    env = build(include_only=["PATH", "LC_*", "*_API_KEY"])

    assert sorted(env) == ["LC_ALL", "PATH"]


def test_set_always_passes_even_a_secret_name_and_wins_over_the_inherited_value() -> None:
    env = build(include_only=["PATH"], set={"GH_TOKEN": "read-only", "PATH": "/opt/bin"})

    assert env == {"PATH": "/opt/bin", "GH_TOKEN": "read-only"}


def test_ignore_default_excludes_passes_secret_names_and_provider_keys() -> None:
    env = build(frozenset({"MY_LLM_CREDENTIAL"}), ignore_default_excludes=True)

    assert env["ANTHROPIC_API_KEY"] == FAKE_KEY
    assert env["MY_LLM_CREDENTIAL"] == "custom-provider-key"


def test_explain_names_what_is_passed_and_what_is_withheld_and_why() -> None:
    policy = ShellEnv(
        ShellEnvSettings(exclude=["EDITOR"], set={"DB_PASSWORD": "x"}),
        frozenset({"MY_LLM_CREDENTIAL"}),
    )

    passed, withheld = policy.explain(ENVIRON)

    assert "DB_PASSWORD" in passed  # set on purpose: passed, not withheld
    assert withheld == [
        Withheld("ANTHROPIC_API_KEY", "secret name"),
        Withheld("AWS_SECRET_ACCESS_KEY", "secret name"),
        Withheld("EDITOR", "exclude"),
        Withheld("MY_LLM_CREDENTIAL", "provider key"),
        Withheld("gh_token", "secret name"),
    ]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"inherit": "some"}, "inherit"),
        ({"exclude": [" "]}, "empty pattern"),
        ({"set": {"A=B": "1"}}, "not a variable name"),
        ({"set": {"A": "x\0y"}}, "NUL"),
        ({"excludes": []}, "excludes"),
    ],
)
def test_bad_settings_are_refused_with_what_was_wrong(
    settings: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        ShellEnvSettings.model_validate(settings)


PROBE = 'echo "key=${ANTHROPIC_API_KEY:-unset} region=${AWS_REGION:-unset} ci=${CI:-unset}"; env'


@pytest.mark.parametrize("mode", [SandboxMode.WORKSPACE_WRITE, SandboxMode.OFF])
def test_run_command_does_not_see_the_provider_key(
    mode: SandboxMode, make_harness: MakeHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    sandbox = Sandbox.create(
        SandboxSettings(mode=mode), env=ShellEnv(ShellEnvSettings(set={"CI": "1"}))
    )
    harness = make_harness(sandbox=sandbox)

    result = asyncio.run(harness.run("run_command", command=PROBE))

    assert not result.is_error, result.content
    assert "key=unset region=eu-west-1 ci=1" in result.content
    assert "ANTHROPIC_API_KEY" not in result.content
    assert FAKE_KEY not in result.content


def test_run_command_does_not_see_the_telemetry_collectors_token(
    make_harness: MakeHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer otel-test-token")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=otel-test-traces")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    harness = make_harness(sandbox=Sandbox.create(SandboxSettings(), env=ShellEnv()))

    result = asyncio.run(harness.run("run_command", command="env"))

    assert not result.is_error, result.content
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318" in result.content
    assert "otel-test-token" not in result.content
    assert "otel-test-traces" not in result.content


def test_run_command_under_inherit_none_still_finds_its_programs(
    make_harness: MakeHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    sandbox = Sandbox.create(
        SandboxSettings(), env=ShellEnv(ShellEnvSettings(inherit="none", set={"CI": "1"}))
    )
    harness = make_harness(sandbox=sandbox)

    result = asyncio.run(harness.run("run_command", command=PROBE))

    assert not result.is_error, result.content
    assert "key=unset region=unset ci=1" in result.content
