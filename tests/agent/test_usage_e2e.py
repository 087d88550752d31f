"""Every request's tokens are counted, under what it was for: ``-p``'s ``usage`` and
``usage_by_purpose``, the session log (so ``/cost`` after a resume has them too)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean

FAST_RECOVERY = """
recovery: {base_backoff: 0.01, max_backoff: 0.05}
compaction: {keep_last_tool_results: 1}
"""


def test_compaction_requests_are_counted_under_their_purpose(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(FAST_RECOVERY)
    for name in "abc":
        (workspace / f"{name}.txt").write_text(f"contents of {name} " * 50)
    turn = {"input_tokens": 10, "output_tokens": 1}
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "a.txt"}, **turn),
        Reply.tool_call("read_file", {"path": "b.txt"}, **turn),
        Reply.tool_call("read_file", {"path": "c.txt"}, **turn),
        Fault.overflow(),
        Fault.overflow(),  # snipping old results was not enough: a summary is asked for
        Reply.text("Summary: three files were read.", input_tokens=500, output_tokens=40),
        Reply.text("Read all three.", **turn),
    )

    run = run_agent(
        "-p",
        "read them",
        "--yes",
        "--output-format",
        "json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    data = run.json()
    assert data["result"] == "Read all three."
    purposes = data["usage_by_purpose"]
    assert purposes["compaction"]["input_tokens"] == 500
    assert purposes["compaction"]["output_tokens"] == 40
    assert purposes["turn"]["input_tokens"] == 40
    assert data["usage"]["input_tokens"] == 540  # every request, not only the turn's
    assert data["usage"]["output_tokens"] == 44
    [session] = (decoy_home / ".agent" / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in session.read_text().splitlines()]
    # An answer's tokens are saved in its line; the summary's, which no answer carries, alone.
    saved = [(r["type"], r["kind"], r["usage"]["input_tokens"]) for r in records if "usage" in r]
    assert sorted(saved) == [("message", "turn", 10)] * 4 + [("usage", "compaction", 500)]


def test_cost_shows_what_compaction_used(spawn: Spawn, fake_llm: FakeLlmServer) -> None:
    # Answers longer than the summary: a summary that would grow the context is discarded.
    fake_llm.script(
        Reply.text("One. " + "Words. " * 60, input_tokens=12, output_tokens=3),
        Reply.text("Two. " + "Words. " * 60, input_tokens=12, output_tokens=3),
        Reply.text("SUMMARY: two answers.", input_tokens=300, output_tokens=20),
    )
    term = spawn()
    term.prompt()
    for prompt in ("first", "second"):
        term.send_line(prompt)
        term.expect("Words")
        term.prompt()
    assert "Compacted" in clean(term.command("/compact"))
    shown = clean(term.command("/cost"))
    term.exit()

    rows = {}
    for line in shown.splitlines():
        name, _, figures = line.strip().partition("  ")
        rows[name] = figures.split()[:2]  # input, output
    assert rows["for turns"] == ["24", "6"]
    assert rows["for compaction"] == ["300", "20"]
    assert rows["this run"] == ["324", "26"]  # every request, compaction's too
