"""A hostile repository through the real CLI: under ``-p --yes`` the model can change none of
the files git or a hook will run, by command or by file tool.

Runs in the decoy HOME and workspace of the fixtures (their canaries are checked); the
person's own config, in the decoy HOME, configures a hook that runs a workspace script.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.cli import PrintRun, write_person_config
from tests.fakes.hostile_repo import HOOK, TARGETS, make_hostile_repository
from tests.fakes.llm_server import FakeLlmServer, Reply, result_text
from tools.guard.landlock import abi_version
from tools.guard.protected_scan import WALK_BUDGET

pytestmark = pytest.mark.skipif(
    abi_version() < 1, reason="the kernel has no Landlock (Linux 5.13+ with it enabled)"
)


def test_no_file_git_or_a_hook_runs_can_be_changed_under_p_yes(
    fake_llm: FakeLlmServer,
    workspace: Path,
    decoy_home: Path,
    print_run: PrintRun,
    agent_tmp: Path,
) -> None:
    make_hostile_repository(workspace)
    write_person_config(
        decoy_home,
        f"hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
        f"        - {{type: command, command: {HOOK}}}\n",
    )
    before = {rel: (workspace / rel).read_bytes() for rel in TARGETS}
    appends = "; ".join(f"printf 'touch PWNED\\n' >> {rel}" for rel in TARGETS)
    fake_llm.script(
        Reply.tool_call("run_command", {"command": appends}),
        Reply.tool_call("write_file", {"path": "hooks/check.sh", "content": "touch PWNED\n"}),
        Reply.tool_call(
            "edit_file",
            {"path": "scripts/lint.sh", "old_string": "exit 0", "new_string": "touch PWNED"},
        ),
        Reply.tool_call("write_file", {"path": ".githooks/post-merge", "content": "x\n"}),
        Reply.text("done"),
    )

    run = print_run("set up the hooks", "--yes", env={"TMPDIR": str(agent_tmp)}, timeout=120)

    assert run.code == 0, run.stderr
    assert {rel: (workspace / rel).read_bytes() for rel in TARGETS} == before
    assert not (workspace / ".githooks" / "post-merge").exists()
    assert not (workspace / "PWNED").exists()
    command, *edits = [result_text(result) for result in fake_llm.requests[-1].tool_results()]
    assert "Read-only file system" in command or "put back" in command, command
    assert len(edits) == 3
    for text in edits:
        assert "is protected" in text, text
        assert "non-interactively" in text, text


def test_the_person_hears_once_when_the_workspace_is_too_large_to_search_whole(
    fake_llm: FakeLlmServer, workspace: Path, print_run: PrintRun
) -> None:
    data = workspace / "data"
    data.mkdir()
    for number in range(WALK_BUDGET + 10):
        (data / f"{number}.txt").touch()
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "true"}),
        Reply.tool_call("run_command", {"command": "echo again"}),
        Reply.text("done"),
    )

    run = print_run("look", "--yes", timeout=120)

    assert run.code == 0, run.stderr
    said = " ".join(run.stderr.split())
    assert said.count("covers the first 20,000 entries") == 1, run.stderr
    assert "start agent in a smaller folder" in said


def test_a_workspace_searched_whole_says_nothing_about_it(
    fake_llm: FakeLlmServer, print_run: PrintRun
) -> None:
    fake_llm.script(Reply.tool_call("run_command", {"command": "true"}), Reply.text("done"))

    run = print_run("look", "--yes", timeout=120)

    assert run.code == 0, run.stderr
    assert "large workspace" not in " ".join(run.stderr.split())
