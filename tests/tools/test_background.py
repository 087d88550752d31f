"""Background commands run for real, in the decoy workspace and HOME, through the sandbox."""

from __future__ import annotations

import re
import time
from pathlib import Path

from providers.events import Event
from tests.tools.conftest import Harness, MakeHarness
from tests.tools.test_run_command import running, wait_until_gone
from tools.background import BackgroundShells, lost_commands
from tools.builtin import builtin_tools
from tools.guard.sandbox import Sandbox


def _shell_id(content: str) -> str:
    found = re.search(r"\b(bash_\d+)\b", content)
    assert found, content
    return found.group(1)


async def _until(harness: Harness, shell: str, text: str, tries: int = 100) -> str:
    """Read ``shell`` until ``text`` shows (real time: the command runs on its own)."""
    seen = ""
    for _ in range(tries):
        result = await harness.run("command_output", shell_id=shell)
        seen += result.content
        if text in seen:
            return seen
        time.sleep(0.1)  # real time: the test loop's clock may be virtual
    raise AssertionError(f"{text!r} never came: {seen!r}")


def _harness(make_harness: MakeHarness, sandbox: Sandbox) -> tuple[Harness, BackgroundShells]:
    shells = BackgroundShells()
    return make_harness(tools=builtin_tools(sandbox, shells), sandbox=sandbox), shells


async def test_a_loop_keeps_running_and_each_read_returns_only_new_lines(
    make_harness: MakeHarness, sandbox: Sandbox, workspace: Path
) -> None:
    harness, shells = _harness(make_harness, sandbox)
    # A counter the test drives: each line appears when a file says so.
    script = (
        "echo first; i=0; while true; do "
        'if [ -e go ]; then i=$((i+1)); echo "line $i"; rm go; fi; sleep 0.05; done'
    )
    started = await harness.run("run_command", command=script, run_in_background=True)
    assert not started.is_error, started.content
    assert "first" in started.content  # the first output comes with the start
    shell = _shell_id(started.content)
    (workspace / "go").write_text("")
    first = await _until(harness, shell, "line 1")
    assert "first" not in first
    assert "[bash_1: running]" in first
    (workspace / "go").write_text("")
    second = await _until(harness, shell, "line 2")
    assert "line 1" not in second  # only what is new since the last read
    killed = await harness.run("kill_command", shell_id=shell)
    assert "stopped by kill_command" in killed.content
    after = await harness.run("command_output", shell_id=shell)
    assert "stopped by kill_command" in after.content
    assert shells.running_count == 0


async def test_kill_command_ends_the_whole_process_group(
    make_harness: MakeHarness, sandbox: Sandbox
) -> None:
    harness, _shells = _harness(make_harness, sandbox)
    started = await harness.run(
        "run_command", command="sleep 300.43 & sleep 300.44; echo never", run_in_background=True
    )
    shell = _shell_id(started.content)
    for _ in range(100):
        if running("sleep 300.43") and running("sleep 300.44"):
            break
        time.sleep(0.05)
    assert running("sleep 300.43")
    assert running("sleep 300.44")
    await harness.run("kill_command", shell_id=shell)
    assert wait_until_gone("sleep 300.4") == []
    assert "never" not in (await harness.run("command_output", shell_id=shell)).content


async def test_close_stops_every_command_and_records_the_ends(
    make_harness: MakeHarness, sandbox: Sandbox
) -> None:
    harness, shells = _harness(make_harness, sandbox)
    for n in (5, 6):
        await harness.run("run_command", command=f"sleep 300.4{n}", run_in_background=True)
    assert shells.running_count == 2
    shells.close()
    assert wait_until_gone("sleep 300.4") == []
    ends = [e for e in harness.events if e.type == "background_ended"]
    assert [e.model_dump()["status"] for e in ends] == ["stopped by the session's end"] * 2


async def test_an_end_is_announced_once_and_output_is_filtered_and_redacted(
    make_harness: MakeHarness, sandbox: Sandbox
) -> None:
    shells = BackgroundShells()
    harness = make_harness(
        tools=builtin_tools(sandbox, shells),
        sandbox=sandbox,
        redact=lambda text: text.replace("sk-secret", "[redacted]"),
    )
    started = await harness.run(
        "run_command",
        command="sleep 2; echo 'key sk-secret'; echo noise; echo 'key two'; exit 4",
        run_in_background=True,
    )
    shell = _shell_id(started.content)
    found = shells.get(shell)
    assert found is not None
    found.process.wait(30)
    news = shells.news()
    assert news is not None
    assert f"{shell} (`sleep 2" in news
    assert "exited with code 4" in news
    assert shells.news() is None  # once
    result = await harness.run("command_output", shell_id=shell, filter="^key")
    assert result.content.splitlines() == [
        "key [redacted]",
        "key two",
        f"[{shell}: exited with code 4]",
    ]


async def test_bad_ids_and_filters_are_clear_errors(harness: Harness) -> None:
    missing = await harness.run("command_output", shell_id="bash_9")
    assert missing.is_error
    assert "no background command 'bash_9'" in missing.content
    killed = await harness.run("kill_command", shell_id="nope")
    assert killed.is_error
    assert "started ones: none" in killed.content
    started = await harness.run("run_command", command="echo hi", run_in_background=True)
    assert not started.is_error
    assert started.content.startswith("bash_1 ended at once: exited with code 0.\nhi\n")
    bad = await harness.run("command_output", shell_id=_shell_id(started.content), filter="(")
    assert bad.is_error
    assert "not a valid regular expression" in bad.content


def test_a_resumed_session_knows_which_commands_it_lost(tmp_path: Path) -> None:
    events = [
        {"type": "background_started", "shell_id": "bash_1", "command": "npm run dev"},
        {"type": "background_started", "shell_id": "bash_2", "command": "sleep 1"},
        {"type": "background_ended", "shell_id": "bash_2", "status": "exited with code 0"},
        {"type": "background_started", "shell_id": 7, "command": "junk"},
    ]
    lost = lost_commands(events)
    assert lost == {"bash_1": "npm run dev"}
    told: list[Event] = []
    shells = BackgroundShells(told.append, lost=lost)
    news = shells.news()
    assert news is not None
    assert "bash_1 (`npm run dev`)" in news
    assert "restarted" in news
    assert shells.news() is None
    recorded = [event.model_dump() for event in told]
    assert recorded == [
        {"type": "background_ended", "shell_id": "bash_1", "status": "lost with a restart"}
    ]
    assert lost_commands([*events, *recorded]) == {}  # the next resume has nothing to tell
