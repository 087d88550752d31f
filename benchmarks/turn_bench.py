"""Per-step benchmark: the agent's own cost per model call + tool call, against a bare SDK loop.

Run: ``python benchmarks/turn_bench.py`` (about a minute; ``--steps N --runs N``;
``--telemetry`` adds a third side, the agent with OpenTelemetry export on, to a collector
that is down, so the per-step cost of telemetry on and off shows in one run). The sides
run in this process against the same local fake server (tests/fakes/llm_server.py, Anthropic
protocol, streamed) in a process of its own, as a model server always is: in this one, its
threads would take the interpreter's lock from ours. It answers each turn with ``--steps``
``read_file`` calls and then a final text (``--in-process`` runs it here, for comparison):

- *agent*: `agent.app.Agent` as ``agent -p`` wires it (recovery, tool executor with its safety
  policy, session file with fsync, events, logs), one turn of ``--steps`` steps.
- *bare*: ``anthropic.AsyncAnthropic().messages.create(stream=True)`` in a loop that gathers
  the raw events, reads the file and sends the result back: no session, no logs, no checks,
  but the same system prompt and tool schemas, so both send the same requests.

The two alternate, best of ``--runs`` each; ``paired`` is the median of the ratios of each
agent run to the bare run after it, steadier on a machine whose speed drifts (``quartiles``
gives their spread; garbage is collected before each timed turn, on both sides). The ratio is
agent/bare per step; what it measures
is everything the agent adds to a step (the fake server answers at once, so no model time
hides it). Wall-clock time is what a person waits; this process's CPU time (the server's is
not in it) is the steadier figure on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console

from agent.app import build_agent
from agent.engine.system_prompt import build_system_prompt
from agent.setup.startup import Options, load, secret_redactor, start_logging
from agent.terminal.ui import ConsoleUI
from tests.fakes.cli import Endpoints, agent_env
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest, Responder
from tools import ToolExecutor, ToolSettings
from tools.settings import BUILTIN_TOOL_NAMES

MODEL = "claude-test"
FILE_TEXT = "def f(x):\n    return x * 2\n" * 20
PROMPT = "read the code files one by one"
BREAKPOINT = {"type": "ephemeral"}


WARM_UP = "warm up"


def responder(steps: int) -> Responder:
    """Answers a turn's prompt with ``steps`` ``read_file`` calls (one for the warm-up turn),
    a different file each (the same call with the same result would be stopped as a loop),
    then a text; worked out from the request alone, so it serves any number of turns."""

    def reply(request: RecordedRequest) -> Reply:
        messages = request.body["messages"]
        prompt = max(i for i, m in enumerate(messages) if m["role"] == "user" and _text(m))
        done = sum(1 for m in messages[prompt + 1 :] if m["role"] == "user")
        wanted = 1 if _text(messages[prompt]) == WARM_UP else steps
        if done < wanted:
            return Reply.tool_call("read_file", {"path": f"code{done}.py"})
        return Reply.text("Read it.")

    return reply


def _text(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")


@dataclass(frozen=True)
class Remote:
    """A fake server running in another process."""

    anthropic_url: str
    openai_url: str


@contextmanager
def server_process(steps: int) -> Iterator[Remote]:
    """The fake server in a child process, until the block ends."""
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--steps", str(steps)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        anthropic_url, openai_url = child.stdout.readline().split()
        yield Remote(anthropic_url, openai_url)
    finally:
        child.kill()
        child.wait()


def serve(steps: int) -> None:
    """``--serve``: run the fake server, print its URLs, stop when stdin closes."""
    with FakeLlmServer() as server:
        server.respond_with(responder(steps))
        print(server.anthropic_url, server.openai_url, flush=True)
        sys.stdin.read()


Timing = tuple[float, float]
"""(wall-clock seconds, CPU seconds of this process) of one measured turn."""


TELEMETRY = {
    "AGENT_ENABLE_TELEMETRY": "1",
    "OTEL_METRICS_EXPORTER": "otlp",
    "OTEL_LOGS_EXPORTER": "otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",  # nothing listens: exports fail
    "OTEL_METRIC_EXPORT_INTERVAL": "1000",
    "OTEL_LOGS_EXPORT_INTERVAL": "1000",
}
"""``--telemetry``: on, exporting every second to a collector that is down (the worst case)."""


async def agent_turn(
    server: Endpoints, home: Path, work: Path, steps: int, telemetry: bool = False
) -> Timing:
    """Wall and CPU seconds of one turn of ``steps`` tool steps (plus the final answer)
    through `Agent`."""
    environ = agent_env(server, home, TELEMETRY if telemetry else {"AGENT_ENABLE_TELEMETRY": "0"})
    options = Options(
        workspace=work,
        overrides={
            "model": f"anthropic:{MODEL}",
            "max_steps": steps + 1,
            "approval": "full-auto",
            # The bare loop's tools: the built-in ones (not task, web_fetch or skills), so both
            # sides send the same requests and only the per-step work differs.
            "tools": {"enabled": list(BUILTIN_TOOL_NAMES)},
        },
    )
    config = load(options, environ)
    redactor = secret_redactor(config, environ)
    start_logging(options, environ, redactor)
    out = Console(file=io.StringIO())
    agent = build_agent(
        config,
        options,
        face=ConsoleUI(out, out, stream=False),
        approver=None,
        environ=environ,
        redactor=redactor,
    )
    await agent.run_turn(WARM_UP)  # the SDK import and first connection are not per-step
    gc.collect()  # the garbage of setting up is not the turn's
    started, cpu = time.perf_counter(), time.process_time()
    result = await agent.run_turn(PROMPT)
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    agent.close()
    assert result.error is None, result.error
    assert result.steps == steps + 1, result.steps
    return elapsed


async def bare_turn(server: Endpoints, work: Path, steps: int) -> Timing:
    """Seconds for the same turn in a plain loop over the Anthropic SDK."""
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="sk-ant-test", base_url=server.anthropic_url)
    # The same request content as the agent's: its system prompt, its tools' schemas, its
    # prompt-cache breakpoints, the warm-up turn in the history and numbered file lines.
    system = [{"type": "text", "text": build_system_prompt(work), "cache_control": BREAKPOINT}]
    executor = ToolExecutor(
        workspace=work, settings=ToolSettings(), approval="full-auto", approver=None
    )
    tools: list[Any] = [
        {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
        for spec in executor.specs()
    ]
    messages: list[Any] = []
    await _bare_loop(client, system, tools, work, messages, WARM_UP)
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    done = await _bare_loop(client, system, tools, work, messages, PROMPT)
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    assert done == steps + 1
    return elapsed


async def _bare_loop(
    client: Any, system: Any, tools: list[Any], work: Path, messages: list[Any], prompt: str
) -> int:
    messages.append({"role": "user", "content": [{"type": "text", "text": prompt}]})
    for step in range(1, 10_000):
        content = await _bare_request(client, system, _marked(messages), tools)
        messages.append({"role": "assistant", "content": content})
        calls = [block for block in content if block["type"] == "tool_use"]
        if not calls:
            return step
        results = [
            {
                "type": "tool_result",
                "tool_use_id": call["id"],
                "content": _numbered((work / call["input"]["path"]).read_text()),
                "is_error": False,
            }
            for call in calls
        ]
        messages.append({"role": "user", "content": results})
    raise AssertionError("the script never ended")


def _marked(messages: list[Any]) -> list[Any]:
    """Breakpoints on the last message and on the user message before it, as the agent sends."""
    marked = list(messages)
    users = [index for index, message in enumerate(marked) if message["role"] == "user"]
    for index in {len(marked) - 1, *users[-2:-1]}:
        *rest, last = marked[index]["content"]
        marked[index] = marked[index] | {"content": [*rest, last | {"cache_control": BREAKPOINT}]}
    return marked


def _numbered(text: str) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.splitlines(), start=1))


async def _bare_request(
    client: Any, system: str, messages: list[Any], tools: list[Any]
) -> list[Any]:
    """One streamed request, its raw events gathered into content blocks (as our adapter does;
    the SDK's ``messages.stream`` helper, which also builds a snapshot per event, is slower)."""
    stream = await client.messages.create(
        model=MODEL, max_tokens=8192, system=system, messages=messages, tools=tools, stream=True
    )
    blocks: list[dict[str, Any]] = []
    arguments: list[str] = []
    async for event in stream:
        if event.type == "content_block_start":
            blocks.append(event.content_block.model_dump(exclude_none=True))
            arguments.append("")
        elif event.type == "content_block_delta":
            if event.delta.type == "text_delta":
                blocks[event.index]["text"] += event.delta.text
            elif event.delta.type == "input_json_delta":
                arguments[event.index] += event.delta.partial_json
    for block, raw in zip(blocks, arguments, strict=True):
        if block["type"] == "tool_use":
            block["input"] = json.loads(raw or "{}")
    return blocks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--in-process", action="store_true", help="run the fake server here")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--telemetry",
        action="store_true",
        help="also the agent with telemetry on (a collector that is down)",
    )
    args = parser.parse_args()
    if args.telemetry:
        os.environ.update(TELEMETRY)  # the OpenTelemetry SDK reads its settings from here
    if args.serve:
        serve(args.steps)
        return
    with tempfile.TemporaryDirectory() as tmp, _server(args.steps, args.in_process) as server:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        for n in range(args.steps):
            (work / f"code{n}.py").write_text(FILE_TEXT)
        ours: list[Timing] = []
        bare: list[Timing] = []
        told: list[Timing] = []  # the agent with telemetry on
        for _ in range(args.runs):  # interleaved: the machine's load hits every side alike
            ours.append(asyncio.run(agent_turn(server, home, work, args.steps)))
            bare.append(asyncio.run(bare_turn(server, work, args.steps)))
            if args.telemetry:
                told.append(asyncio.run(agent_turn(server, home, work, args.steps, True)))
    _report(args, ours, bare, told)


def _report(
    args: argparse.Namespace, ours: list[Timing], bare: list[Timing], told: list[Timing]
) -> None:
    per_step = args.steps + 1
    where = "in this process" if args.in_process else "in its own process"
    print(f"Per step ({args.steps} read_file calls + the answer; best of {args.runs})")
    print(f"(the fake server runs {where})")
    print(f"{'':<22}{'wall':>10}{'CPU':>10}")
    sides = [("agent", ours), ("bare SDK", bare)]
    sides += [("agent, telemetry on", told)] if told else []
    for name, timings in sides:
        wall, cpu = (min(t[i] for t in timings) / per_step * 1000 for i in (0, 1))
        print(f"{name:<22}{wall:>7.2f} ms{cpu:>7.2f} ms")
    wall_ratio, cpu_ratio = (min(t[i] for t in ours) / min(t[i] for t in bare) for i in (0, 1))
    own = (min(t[0] for t in ours) - min(t[0] for t in bare)) / per_step * 1000
    print(f"{'ratio':<22}{wall_ratio:>9.2f}x{cpu_ratio:>9.2f}x")
    # Each agent run against the bare run right after it: the machine's speed drifts over a
    # minute far more than between two neighbouring runs.
    _paired("paired", ours, bare)
    if told:
        _paired("telemetry on / bare", told, bare)
        _paired("telemetry on / off", told, ours)
        added = (min(t[0] for t in told) - min(t[0] for t in ours)) / per_step * 1000
        print(f"telemetry on adds {added:.2f} ms/step (wall, best runs)")
    print(f"the agent's own work: {own:.2f} ms/step (wall)")


def _paired(name: str, these: list[Timing], those: list[Timing]) -> None:
    """The median (and quartiles) of the run-by-run ratios of ``these`` to ``those``."""
    pairs = [sorted(a[i] / b[i] for a, b in zip(these, those, strict=True)) for i in (0, 1)]
    paired = [median(ratios) for ratios in pairs]
    quartiles = [f"{r[len(r) // 4]:.2f}-{r[(3 * len(r)) // 4]:.2f}x" for r in pairs]
    print(f"{name:<22}{paired[0]:>9.2f}x{paired[1]:>9.2f}x  (median of run-by-run ratios)")
    print(f"{'  quartiles':<22}{quartiles[0]:>10}{quartiles[1]:>12}")


@contextmanager
def _server(steps: int, in_process: bool) -> Iterator[Endpoints]:
    if not in_process:
        with server_process(steps) as remote:
            yield remote
        return
    with FakeLlmServer() as server:
        server.respond_with(responder(steps))
        yield server


if __name__ == "__main__":
    main()
