"""Session store benchmarks: the cost of durable appends and of resuming long sessions.

Run: ``python benchmarks/sessions_bench.py`` (under a minute; writes only to a temp dir).

1. Append: `SessionWriter.append_message` (serialise, redaction check, write, fsync) against a
   bare loop that writes the same bytes to an O_APPEND file and fsyncs each line.
2. Resume: `SessionStore.load` (validate every record, rebuild the view, repair, check files)
   for 1k, 10k and 100k messages against reading the file and ``json.loads`` of every line
   (the garbage collector left on for both, as a program leaves it), alternately. The load is
   timed on the wall clock and in CPU seconds of this process: on a shared machine the CPU
   figure is the one to compare between two versions of the code.
3. ``agent -p --resume`` of the largest session against a fresh ``agent -p``, alternately, as
   whole processes against the local fake LLM server (tests/fakes). The session is written as
   the agent writes a long one: a compaction record every 2,000 messages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock
from sessions import Redactor, SessionStore
from tests.fakes.cli import agent_command, agent_env
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

COMPACT_EVERY = 2_000

REDACTOR = Redactor({"ANTHROPIC_API_KEY": "sk-ant-not-a-real-key-0123456789"})


def conversation(count: int) -> list[Message]:
    """A realistic mix: prompt, a tool call, its (1 KB) result, an answer; repeated."""
    messages: list[Message] = []
    for n in range(count):
        step = n % 4
        if step == 0:
            messages.append(Message.user(f"please fix the failing test number {n} in module x"))
        elif step == 1:
            call = ToolUseBlock(id=f"toolu_{n}", name="read_file", input={"path": f"src/m{n}.py"})
            messages.append(Message(role="assistant", content=[TextBlock(text="Reading."), call]))
        elif step == 2:
            body = ("def f(x):\n    return x * 2\n" * 40)[:1000]
            result = ToolResultBlock(tool_use_id=f"toolu_{n - 1}", content=body)
            messages.append(Message(role="user", content=[result]))
        else:
            messages.append(Message.assistant("Fixed: the test expected a doubled value. " * 3))
    return messages


def best_of(repeats: int, run: Callable[[], None]) -> float:
    """The fastest of ``repeats`` runs, in seconds."""
    return best_times(repeats, run)[0]


def best_times(repeats: int, run: Callable[[], None]) -> tuple[float, float]:
    """The fastest of ``repeats`` runs: wall-clock seconds and CPU seconds of this process."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def bench_append(root: Path, count: int, fsync: bool) -> tuple[float, float, int]:
    """Seconds to append ``count`` messages via the store and via bare writes; bytes written."""
    store = SessionStore(root / f"append-{fsync}", redactor=REDACTOR, fsync=fsync)
    messages = conversation(count)
    writer = store.create(cwd=root, model_chain=["anthropic:x"])
    header_size = writer.path.stat().st_size
    start = time.perf_counter()
    for message in messages:
        writer.append_message(message)
    ours = time.perf_counter() - start
    writer.close()
    lines = writer.path.read_bytes()[header_size:].splitlines(keepends=True)
    bare_path = root / f"bare-{fsync}.jsonl"
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(bare_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    start = time.perf_counter()
    for line in lines:
        os.write(fd, line)
        if fsync:
            os.fsync(fd)
    bare = time.perf_counter() - start
    os.close(fd)
    return ours, bare, sum(map(len, lines))


def bench_resume(root: Path, count: int, repeats: int) -> tuple[float, float, float, float, int]:
    """Best seconds to load a ``count``-message session and to json.loads its lines.

    Returns the load's wall and CPU seconds, json.loads' wall and CPU seconds, the file size.
    """
    store = SessionStore(root / f"resume-{count}", redactor=REDACTOR, fsync=False)
    with store.create(cwd=root, model_chain=["anthropic:x"]) as writer:
        for message in conversation(count):
            writer.append_message(message)
    path = writer.path

    def bare() -> None:
        for line in path.read_bytes().split(b"\n"):
            if line:
                json.loads(line)

    def ours() -> None:
        loaded = store.load(writer.id)
        assert len(loaded.messages) == count

    best = [float("inf")] * 4
    for _ in range(repeats):  # alternately: the machine's load hits both alike
        times = (*best_times(1, ours), *best_times(1, bare))
        best = [min(a, b) for a, b in zip(best, times, strict=True)]
    return best[0], best[1], best[2], best[3], path.stat().st_size


def compacted_session(home: Path, cwd: Path, count: int) -> str:
    """A ``count``-message session with a compaction record every `COMPACT_EVERY` messages."""
    store = SessionStore(home / ".agent", redactor=REDACTOR, fsync=False)
    with store.create(cwd=cwd, model_chain=["anthropic:claude-test"]) as writer:
        for n, message in enumerate(conversation(count), start=1):
            writer.append_message(message)
            if n % COMPACT_EVERY == 0:
                summary = Message.user(f"Summary of the {n} messages so far: tests were fixed.")
                writer.append_compaction([summary, Message.assistant("Understood.")])
    return writer.id


def bench_print_resume(root: Path, count: int, runs: int) -> tuple[float, float]:
    """Median seconds of ``agent -p --resume`` of a ``count``-message session and of a fresh one."""
    home, work = root / "print-home", root / "print-work"
    work.mkdir(parents=True)
    session_id = compacted_session(home, work, count)
    with FakeLlmServer() as server:
        env = agent_env(server, home)

        def run(*extra: str) -> float:
            server.reset()
            server.script(Reply.text("Done."))
            argv = agent_command("-p", "hi", "--model", "anthropic:claude-test", *extra)
            started = time.perf_counter()
            done = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True)
            elapsed = time.perf_counter() - started
            assert done.returncode == 0, done.stderr
            return elapsed

        resumed: list[float] = []
        fresh: list[float] = []
        for n in range(runs):  # alternately, the order swapped every other run
            if n % 2:
                fresh.append(run())
            resumed.append(run("--resume", session_id))
            if not n % 2:
                fresh.append(run())
    return statistics.median(resumed), statistics.median(fresh)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--print-runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
        root = Path(tmp)
        print(f"Append {args.appends} messages, one record each")
        print(f"{'mode':<10}{'store':>12}{'bare':>12}{'store/s':>12}{'ratio':>8}")
        for fsync in (True, False):
            # Best of three, interleaved: fsync latency swings with whatever else hits the disk.
            runs = [bench_append(root / f"run{n}", args.appends, fsync) for n in range(3)]
            ours, bare, size = min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2]
            label = "fsync" if fsync else "no fsync"
            rate = args.appends / ours
            print(f"{label:<10}{ours:>11.3f}s{bare:>11.3f}s{rate:>12,.0f}{ours / bare:>7.2f}x")
        print(f"(average record: {size / args.appends:.0f} bytes)")
        print()
        print("Resume (load) vs json.loads of every line")
        print(
            f"{'messages':>9}{'file':>9}{'load':>9}{'json':>9}{'ratio':>7}"
            f"{'load cpu':>10}{'json cpu':>10}{'ratio':>7}"
        )
        for count in args.sizes:
            # Best of several, alternately: on a shared machine one pair can differ by 1.5x.
            repeats = 5 if count <= 10_000 else 3
            ours, cpu, bare, bare_cpu, size = bench_resume(root, count, repeats)
            wall = f"{ours:>8.3f}s{bare:>8.3f}s{ours / bare:>6.2f}x"
            cpu_text = f"{cpu:>9.3f}s{bare_cpu:>9.3f}s{cpu / bare_cpu:>6.2f}x"
            print(f"{count:>9,}{size / 1e6:>7.1f}MB{wall}{cpu_text}")
        if args.print_runs:
            count = max(args.sizes)
            resumed, fresh = bench_print_resume(root, count, args.print_runs)
            print()
            print(f"agent -p (median of {args.print_runs}, alternating)   seconds")
            print(f"--resume, {count:,} messages      {resumed:8.3f}")
            print(f"fresh session                  {fresh:8.3f}")
            print(f"  ratio                        {resumed / fresh:8.2f}x")


if __name__ == "__main__":
    main()
