"""run_command executes for real, but only in the decoy workspace and HOME fixtures."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.tools.conftest import Harness, MakeHarness
from tools import ToolSettings


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def running(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``, seen from outside any sandbox.

    A pid a command prints is its own PID namespace's number; this finds the process by what
    it runs instead (give it an argument no other process has, e.g. ``sleep 300.17``).
    """
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        if entry.isdigit() and marker in line and _alive(int(entry)):
            found.append(int(entry))
    return found


def wait_until_gone(marker: str, seconds: float = 10) -> list[int]:
    """`running` after waiting up to ``seconds`` for it to become empty."""
    deadline = time.monotonic() + seconds
    while (left := running(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


async def test_output_and_exit_code(harness: Harness, workspace: Path) -> None:
    result = await harness.run("run_command", command="echo out; echo err >&2; pwd")
    assert not result.is_error
    assert result.content.splitlines() == ["out", "err", str(workspace.resolve()), "[exit code 0]"]


async def test_nonzero_exit_is_an_error_with_the_code(harness: Harness) -> None:
    result = await harness.run("run_command", command="echo failing; exit 3")
    assert result.is_error
    assert result.content.endswith("failing\n[exit code 3]")
    assert harness.of_type("tool_failed")


async def test_stdin_is_closed(harness: Harness) -> None:
    result = await harness.run("run_command", command="cat; echo done")
    assert result.content.splitlines() == ["done", "[exit code 0]"]


async def test_non_utf8_output_is_replaced(harness: Harness) -> None:
    result = await harness.run("run_command", command="printf 'caf\\351\\n'")
    assert "caf\ufffd" in result.content


async def test_timeout_kills_the_group_including_a_child_that_outlives_it(
    harness: Harness, workspace: Path
) -> None:
    # The child ignores SIGTERM and would sleep far past the timeout.
    command = "echo started; (trap '' TERM; sleep 300.41) & wait"
    started = time.monotonic()
    result = await harness.run("run_command", command=command, timeout=1)
    assert time.monotonic() - started < 30
    assert result.is_error
    assert result.content.startswith("started")
    assert "timed out after 1s" in result.content
    assert wait_until_gone("sleep 300.41", 5) == []


async def test_background_child_is_killed_when_the_command_ends(
    harness: Harness, workspace: Path
) -> None:
    result = await harness.run("run_command", command="sleep 300.42 & echo ok")
    assert result.content.splitlines()[0] == "ok"
    assert wait_until_gone("sleep 300.42", 5) == []


async def test_flood_of_output_is_trimmed(make_harness: MakeHarness) -> None:
    harness = make_harness(settings=ToolSettings(max_output_chars=5_000))
    result = await harness.run("run_command", command="seq 1 200000")
    assert result.content.startswith("1\n2\n")
    assert "200000\n[exit code 0]" in result.content
    assert "cut" in result.content
    assert len(result.content) < 6_000


async def test_a_flood_is_cut_once_and_the_note_counts_every_line_left_out(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    # 100,000 lines (588,895 bytes): more than the capture keeps in memory, so two cuts
    # happen (the capture's and the limit's); the model must see one note with their sum.
    outputs = tmp_path / "outputs"
    harness = make_harness(outputs=outputs)
    result = await harness.run("run_command", command="seq 1 100000")

    lines = result.content.splitlines()
    [note] = [line for line in lines if line.startswith("[...")]
    shown = [int(line) for line in lines if line.isdigit()]
    head = [n for n in shown if n < 50_000]
    tail = [n for n in shown if n >= 50_000]
    assert head == list(range(1, len(head) + 1))  # whole lines, in order
    assert tail == list(range(tail[0], 100_001))
    left_out = tail[0] - len(head) - 1
    left_bytes = sum(len(f"{n}\n") for n in range(len(head) + 1, tail[0]))
    assert f"{left_out:,} lines ({left_bytes:,} bytes) cut" in note
    assert f"lines {len(head) + 1:,}-{tail[0] - 1:,}" in note
    assert lines[-1] == "[exit code 0]"
    assert len(result.content) < 31_000

    [saved] = list(outputs.iterdir())
    assert str(saved) in note
    assert saved.read_text() == "".join(f"{n}\n" for n in range(1, 100_001))
    assert saved.stat().st_mode & 0o777 == 0o600
    assert outputs.stat().st_mode & 0o777 == 0o700


async def test_an_output_that_fits_is_not_cut_and_not_kept(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    outputs = tmp_path / "outputs"
    harness = make_harness(outputs=outputs, settings=ToolSettings(max_output_chars=5_000))
    result = await harness.run("run_command", command="seq 1 1000")  # 3,893 bytes
    assert "cut" not in result.content
    assert not list(outputs.glob("*"))
    result = await harness.run("run_command", command="seq 1 2000")
    assert "cut from the middle" in result.content
    assert len(list(outputs.glob("*"))) == 1


async def test_the_saved_output_is_redacted(make_harness: MakeHarness, tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    harness = make_harness(
        outputs=outputs,
        settings=ToolSettings(max_output_chars=1_000),
        redact=lambda text: text.replace("hunter2", "[REDACTED]"),
    )
    await harness.run("run_command", command="for i in $(seq 300); do echo pw=hunter2; done")
    [saved] = list(outputs.iterdir())
    assert "hunter2" not in saved.read_text()
    assert saved.read_text().count("pw=[REDACTED]") == 300


@pytest.mark.parametrize(
    "command",
    ["rm -rf ~", "rm  -rf  $HOME/", '"rm" -r -f ~/', "bash -c 'rm -rf \"$HOME\"'", "rm -rf ."],
)
async def test_dangerous_command_is_refused_and_nothing_is_deleted(
    harness: Harness, workspace: Path, decoy_home: Path, command: str
) -> None:
    (workspace / "keep.txt").write_text("keep")
    result = await harness.run("run_command", command=command)
    assert result.is_error
    assert result.content.startswith("Refused:")
    assert not result.content.lower().startswith("refused: refused")
    assert "Instead:" in result.content
    assert (decoy_home / "CANARY").read_text() == "do not delete"
    assert (workspace / "keep.txt").exists()
    assert harness.of_type("tool_refused")
