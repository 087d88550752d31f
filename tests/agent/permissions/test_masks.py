"""Path deny rules as the command sandbox masks them: the same paths the rules match, and a
denied ``.env`` that no command can read, through the real CLI under ``-p --yes``."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agent.permissions.listing import listed_rules
from agent.permissions.masks import command_coverage, denied_patterns, path_pattern
from agent.permissions.rules import Call, RuleSet, parse_rule
from agent.terminal.permissions_view import permissions_table
from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tools.guard.landlock import abi_version
from tools.guard.sandbox import namespaces_missing

SPECS = [
    "./.env",
    ".env",
    "/config/prod.yaml",
    "*.pem",
    "secrets/",
    "src/**/*.key",
    "//WORKSPACE/abs.txt",
    "~/inside/home.txt",
]
PATHS = [
    ".env",
    "a/.env",
    ".env.local",
    "config/prod.yaml",
    "x/config/prod.yaml",
    "k.pem",
    "deep/k.pem",
    "secrets/a",
    "secrets/deep/b",
    "src/a/b/c.key",
    "src/c.key",
    "other/c.key",
    "abs.txt",
    "inside/home.txt",
]


@pytest.mark.parametrize("spec", SPECS)
def test_a_pattern_matches_what_the_rule_matches(tmp_path: Path, spec: str) -> None:
    workspace = tmp_path / "ws"
    home = workspace  # so a ~/ rule can name a path inside the workspace
    spec = spec.replace("/WORKSPACE", str(workspace))
    rule = parse_rule(f"Read({spec})")
    pattern = path_pattern(spec, workspace, home)
    assert pattern is not None
    for rel in PATHS:
        call = Call("read_file", "read", paths=(workspace / rel,), workspace=workspace, home=home)
        assert bool(re.fullmatch(pattern, rel)) == rule.matches(call), (spec, rel)


def test_a_directory_rule_masks_the_directory_itself_and_broad_rules_mask_nothing(
    tmp_path: Path,
) -> None:
    rules = RuleSet.of(
        ["Read(./secrets/**)", "Read", "Read(**)", "Read(//elsewhere/x)", "Edit(./locked)"],
        [],
        ["Read(./.env)"],
    )
    found = denied_patterns(rules, tmp_path, tmp_path / "home")
    [secrets] = found.read
    assert re.fullmatch(secrets, "secrets")
    assert re.fullmatch(secrets, "secrets/a/b")
    assert not re.fullmatch(secrets, "secretsx")
    assert [bool(re.fullmatch(p, "locked")) for p in found.edit] == [True]


@pytest.mark.skipif(abi_version() < 1, reason="the kernel has no Landlock")
def test_a_denied_env_file_is_hidden_from_every_command(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    missing = namespaces_missing()
    if missing:
        pytest.skip(f"no namespaces here ({missing}): commands are checked by name only")
    (workspace / ".env").write_text("TOKEN=sk-live-hunter2\n")
    settings = {"permissions": {"deny": ["Read(./.env)"]}}
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(json.dumps(settings))
    reader = f"{sys.executable} -c \"print(open('.env').read())\""
    fake_llm.script(
        Reply.tool_call("run_command", {"command": reader}),
        Reply.tool_call("run_command", {"command": "n=.en; cat ./${n}v | base64"}),
        Reply.text("nothing there"),
    )

    run = run_agent(
        "-p",
        "what is in .env?",
        "--yes",
        "--model",
        MODELS["anthropic"],
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    sent = json.dumps([request.body for request in fake_llm.requests])
    assert "hunter2" not in sent
    assert "c2stbGl2ZS1odW50ZXIy" not in sent  # base64 of the secret's start
    assert (workspace / ".env").read_text() == "TOKEN=sk-live-hunter2\n"


def test_permissions_says_how_far_path_rules_reach_into_commands() -> None:
    rules = RuleSet.of(["Read(./.env)"], [], [])
    without = command_coverage(rules, False, "the kernel refused unprivileged user namespaces")
    assert without is not None
    assert "covered by name only (the kernel refused" in without
    shown = Console(file=io.StringIO(), width=200)
    shown.print(
        permissions_table(listed_rules(rules, lambda kind, text: ""), commands_note=without)
    )
    assert "Commands are covered by name only" in shown.file.getvalue()  # type: ignore[attr-defined]
    masked = command_coverage(rules, True, "")
    assert masked is not None
    assert "hidden (Read)" in masked
    assert command_coverage(RuleSet.of(["Bash(rm:*)", "Read"], [], []), False, "x") is None
