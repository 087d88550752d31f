"""Hooks wired into a real ``agent -p`` run: PreToolUse vetoes, UserPromptSubmit adds context,
SessionStart and SessionEnd fire, and a deny holds under --yes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.fakes.cli import run_agent, write_person_config
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer


def _hook(tmp: Path, name: str, body: str) -> str:
    script = tmp / f"{name}.py"
    script.write_text(body)
    return f"{sys.executable} {script}"


def test_hooks_from_the_user_config_veto_add_context_and_log_the_session(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "events.jsonl"
    record = _hook(
        tmp_path,
        "record",
        "import json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')\n",
    )
    deny_push = _hook(
        tmp_path,
        "deny_push",
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "if 'git push' in data['tool_input'].get('command', ''):\n"
        "    print('pushing is not allowed here', file=sys.stderr)\n"
        "    sys.exit(2)\n",
    )
    context = _hook(
        tmp_path,
        "context",
        "import json\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit',"
        " 'additionalContext': 'The release branch is frozen.'}}))\n",
    )
    command = {"type": "command", "command": record}
    write_person_config(
        decoy_home,
        yaml.safe_dump(
            {
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": deny_push}]}
                    ],
                    "UserPromptSubmit": [
                        {"hooks": [{"type": "command", "command": context}, command]}
                    ],
                    "SessionStart": [{"hooks": [command]}],
                    "SessionEnd": [{"hooks": [command]}],
                }
            }
        ),
    )
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "git push origin main"}),
        Reply.text("I could not push."),
    )

    run = run_agent(
        "-p",
        "push it",
        "--yes",
        "--output-format",
        "json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    sent = json.dumps(fake_llm.requests[0].body["messages"])
    assert "The release branch is frozen." in sent
    refusal = json.dumps(fake_llm.requests[1].body["messages"][-1])
    assert "pushing is not allowed here" in refusal
    assert run.json()["permission_denials"][0]["tool_name"] == "run_command"
    fired = [json.loads(line)["hook_event_name"] for line in log.read_text().splitlines()]
    assert fired == ["SessionStart", "UserPromptSubmit", "SessionEnd"]


def test_a_claude_code_hook_reading_file_path_works_unchanged(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    # Claude Code's documented shape: a shell hook reading .tool_input.file_path with jq.
    script = tmp_path / "protect-lockfiles.sh"
    script.write_text(
        "#!/bin/bash\n"
        "file=$(jq -r '.tool_input.file_path // empty')\n"
        'case "$file" in\n'
        '  *.lock) echo "lockfiles are generated: $file" >&2; exit 2 ;;\n'
        "esac\n"
    )
    script.chmod(0o755)
    entry = {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": str(script)}]}
    write_person_config(decoy_home, yaml.safe_dump({"hooks": {"PreToolUse": [entry]}}))
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "poetry.lock", "content": "x"}),
        Reply.tool_call("write_file", {"path": "notes.md", "content": "y"}),
        Reply.text("Done."),
    )

    run = run_agent(
        "-p", "write them", "--yes", server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 0, run.stderr
    assert not (workspace / "poetry.lock").exists()
    assert (workspace / "notes.md").read_text() == "y"
    refusal = json.dumps(fake_llm.requests[1].body["messages"][-1])
    assert "lockfiles are generated: poetry.lock" in refusal
