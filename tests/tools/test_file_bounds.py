"""File tools never hang and never read more than asked: FIFOs, sockets, huge files, timeouts."""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from providers.messages import MAX_INPUT_DEPTH, TOO_DEEP, ToolUseBlock
from tests.tools.conftest import Harness, MakeHarness
from tools import Tool, ToolContext, ToolOutput, ToolSettings, fileio
from tools.blocking import in_worker
from tools.fileio import MAX_LINE_BYTES

# A bound far above what these calls take, far below the 30 s default a hang would cost.
QUICK = ToolSettings(file_tool_timeout=10)


@pytest.fixture
def fifo(workspace: Path) -> Path:
    path = workspace / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"old_string": "a", "new_string": "b"}),
    ],
)
async def test_a_fifo_is_refused_without_blocking(
    make_harness: MakeHarness, fifo: Path, tool: str, arguments: dict[str, str]
) -> None:
    harness = make_harness(settings=QUICK)
    result = await harness.run(tool, path="pipe", **arguments)
    assert result.is_error
    assert "pipe is a named pipe (FIFO), not a regular file" in result.content
    assert not harness.of_type("tool_timed_out")
    assert not harness.of_type("checkpoint_recorded")  # a checkpoint would read it too


async def test_search_reports_a_fifo_as_unreadable(make_harness: MakeHarness, fifo: Path) -> None:
    (fifo.parent / "ok.txt").write_text("needle\n")
    harness = make_harness(settings=QUICK)
    result = await harness.run("search", pattern="needle")
    assert "ok.txt:1: needle" in result.content
    assert "could not be read: pipe" in result.content
    assert not harness.of_type("tool_timed_out")


async def test_a_socket_is_refused(make_harness: MakeHarness, workspace: Path) -> None:
    harness = make_harness(settings=QUICK)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("sock")  # relative to the workspace (the cwd): socket paths must be short
        result = await harness.run("write_file", path="sock", content="x")
    finally:
        server.close()
    assert result.is_error
    assert "sock is a socket, not a regular file" in result.content
    assert (workspace / "sock").exists()


async def test_read_of_a_huge_sparse_file_reads_only_the_lines_asked_for(
    harness: Harness, workspace: Path
) -> None:
    big = workspace / "big.log"
    with big.open("wb") as handle:
        handle.write(b"".join(b"line %d %s\n" % (n, b"." * 100) for n in range(1, 201)))
        handle.truncate(3 * 1024**3)  # 3 GB, almost all of it a hole: cheap to make
    result = await harness.run("read_file", path="big.log", offset=3, limit=5)
    assert not result.is_error
    lines = result.content.splitlines()
    assert lines[0].startswith("     3\tline 3 ")
    assert lines[4].startswith("     7\tline 7 ")
    assert lines[5] == "[lines 3-7; use offset=8 for more]"  # the total is not counted


async def test_a_binary_file_is_described_by_its_size_without_reading_it(
    harness: Harness, workspace: Path
) -> None:
    with (workspace / "disk.img").open("wb") as handle:
        handle.truncate(3 * 1024**3)
    result = await harness.run("read_file", path="disk.img", limit=5)
    assert "binary file (binary data, 3,221,225,472 bytes)" in result.content


async def test_very_long_lines_are_cut_and_numbering_goes_on(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "min.js").write_text("a" * 100_000 + "\nsecond\n")
    result = await harness.run("read_file", path="min.js")
    first, second = result.content.splitlines()
    assert first == f"     1\t{'a' * MAX_LINE_BYTES} [... line cut at {MAX_LINE_BYTES:,} bytes]"
    assert second == "     2\tsecond"


async def test_paging_reports_the_total_when_the_end_is_near(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("".join(f"l{n}\n" for n in range(1, 11)) + "last")
    result = await harness.run("read_file", path="a.txt", limit=4)
    assert result.content.splitlines()[-1] == "[lines 1-4 of 11; use offset=5 for more]"
    result = await harness.run("read_file", path="a.txt", offset=12)
    assert "offset 12 is past the end of a.txt (11 lines)" in result.content


class _Blocked(BaseModel):
    pass


class BlockingRead(Tool[_Blocked]):
    """A read stuck in the kernel (a hung mount), played by a thread waiting on an event."""

    name = "blocking_read"
    description = "blocks"
    input_model = _Blocked
    idempotent = True

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    async def run(self, args: _Blocked, ctx: ToolContext) -> ToolOutput:
        self.calls += 1
        await in_worker(self.release.wait)
        return ToolOutput("read")


async def test_a_stuck_read_times_out_once_and_the_loop_stays_free(
    make_harness: MakeHarness,
) -> None:
    tool = BlockingRead()
    harness = make_harness(tools=[tool], settings=ToolSettings(file_tool_timeout=0.2))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    running = asyncio.create_task(ticker())
    try:
        result = await harness.run("blocking_read")
    finally:
        running.cancel()
        tool.release.set()
    assert result.is_error
    assert "timed out after 0.2s" in result.content
    assert tool.calls == 1  # not retried: a retry would wait the whole timeout again
    assert ticks >= 5  # the event loop kept running while the read was stuck


async def test_in_worker_passes_results_and_exceptions() -> None:
    assert await in_worker(sum, [1, 2, 3]) == 6
    with pytest.raises(ZeroDivisionError):
        await in_worker(lambda: 1 / 0)


async def test_an_abandoned_worker_cannot_keep_the_agent_from_exiting() -> None:
    release = threading.Event()
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(in_worker(release.wait), 0.05)
        stuck = [t for t in threading.enumerate() if t.name == "agent-io-wait"]
        assert stuck
        assert all(t.daemon for t in stuck)  # interpreter exit does not join daemon threads
    finally:
        release.set()


async def test_a_worker_serves_the_next_call_and_a_stuck_one_holds_up_nothing() -> None:
    await in_worker(int)  # leaves at least one worker idle
    threads = threading.active_count()
    for _ in range(5):
        await in_worker(int)
    assert threading.active_count() == threads  # idle workers served them, none was started
    release = threading.Event()
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(in_worker(release.wait), 0.05)
        assert await in_worker(lambda: "served") == "served"  # by another thread
    finally:
        release.set()


async def test_a_nul_byte_in_a_path_is_a_tool_error(harness: Harness) -> None:
    for tool, extra in [("read_file", {}), ("write_file", {"content": "x"})]:
        result = await harness.run(tool, path="a\x00b", **extra)
        assert result.is_error
        assert "contains a NUL byte" in result.content


async def test_arguments_nested_too_deep_are_a_tool_error(harness: Harness) -> None:
    value: object = "x"
    for _ in range(500):
        value = {"a": value}
    call = ToolUseBlock(id="deep", name="read_file", input={"path": value})
    assert call.model_dump_json()  # cut to a depth that can be serialised
    result = await harness.executor.execute(call)
    assert result.is_error
    assert f"nested more than {MAX_INPUT_DEPTH} levels deep" in result.content
    assert "path (string, required)" in result.content


def test_tool_input_is_cut_at_the_depth_limit() -> None:
    value: object = "x"
    for _ in range(100_000):  # deeper than the recursion limit: cutting must not recurse into it
        value = [value]
    call = ToolUseBlock(id="deep", name="x", input={"v": value})
    level = call.input["v"]
    for _ in range(MAX_INPUT_DEPTH - 1):
        level = level[0]
    assert level == TOO_DEEP


_LINE_BYTES = st.sampled_from([b"x", b"\r", b"\n", b"\r\n", b"\xff", b"\xc3\xa9", b" ", b"\x0c"])


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pieces=st.lists(_LINE_BYTES, max_size=60),
    long_line=st.integers(min_value=0, max_value=3),
    offset=st.integers(min_value=1, max_value=12),
    limit=st.integers(min_value=1, max_value=12),
)
def test_a_small_file_split_whole_reads_as_line_by_line(
    tmp_path: Path, pieces: list[bytes], long_line: int, offset: int, limit: int
) -> None:
    # Files up to 256 KiB are read whole and split; the window must be the one the
    # line-by-line reader gives, with CRLF, bad UTF-8, no final newline and long lines.
    data = b"".join(pieces)
    if long_line:
        data += b"\n" + b"y" * (fileio.MAX_LINE_BYTES + long_line - 2) + b"\n" + data
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    with path.open("rb") as handle:
        by_line = fileio._stream_window(handle, offset, limit, len(data))
    whole = fileio._split_window(data, offset, limit, len(data))
    too_long = long_line == 3  # a line of MAX_LINE_BYTES + 1: only the line reader cuts it
    assert whole == (None if too_long else by_line)
    read = fileio.read_window(path, "f.txt", offset, limit)
    assert replace(read, seen=None) == by_line
    # Read whole, it says what it read; the file's hash is what the session keeps of it.
    assert read.seen is None or read.seen.sha256 == hashlib.sha256(data).hexdigest()
    assert (read.seen is None) == too_long
