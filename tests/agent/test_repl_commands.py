"""Slash commands and multi-line input of the real REPL, in a pseudo-terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.cli import MODELS
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.side_requests import fetching, serve_long_page
from tests.fakes.terminal import Spawn, Terminal, clean
from tests.fakes.web_server import FakeWebServer


def session_records(home: Path) -> list[dict[str, Any]]:
    """The records of the only session file."""
    (path,) = (home / ".agent" / "sessions").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def user_texts(request: RecordedRequest) -> list[str]:
    """The text of each user message in a request (either wire format)."""
    texts = []
    for message in request.body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.append("".join(part.get("text", "") for part in content))
    return texts


def turn(term: Terminal, prompt: str, answer: str) -> str:
    """Send ``prompt``, wait for ``answer`` and the next prompt; returns what was shown."""
    term.send_line(prompt)
    shown = clean(term.expect(re.escape(answer)))
    term.prompt()
    return shown


def test_compact_with_a_focus_summarises_and_the_next_turn_sends_the_summary(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path
) -> None:
    # Answers longer than the summary: a summary that would grow the context is discarded.
    fake_llm.script(
        Reply.text("Parsing is in parse.py. " + "It tokenises, then builds the tree. " * 20),
        Reply.text("Tests are in tests/. " + "They run with pytest. " * 20),
        Reply.text("SUMMARY: parser lives in parse.py"),
        Reply.text("Done."),
    )
    term = spawn()
    term.prompt()
    turn(term, "where is parsing?", "parse.py")
    turn(term, "where are the tests?", "tests/")

    shown = term.command("/compact the parser")
    summary_request = fake_llm.requests[2]
    turn(term, "go on", "Done.")

    assert "Compacted: summarised older turns" in shown
    assert "focus on: the parser" in user_texts(summary_request)[0]
    assert "where is parsing?" in user_texts(summary_request)[0]
    sent = json.dumps(fake_llm.requests[3].body["messages"])
    assert "SUMMARY: parser lives in parse.py" in sent
    assert "where is parsing?" not in sent
    (compaction,) = [r for r in session_records(decoy_home) if r["type"] == "compaction"]
    assert "SUMMARY: parser lives in parse.py" in json.dumps(compaction["messages"])
    term.exit()


def test_compact_without_focus_sends_no_focus(spawn: Spawn, fake_llm: FakeLlmServer) -> None:
    fake_llm.script(Reply.text("one"), Reply.text("two"), Reply.text("SUMMARY"))
    term = spawn()
    term.prompt()
    turn(term, "first", "one")
    turn(term, "second", "two")

    term.command("/compact")

    assert len(fake_llm.requests) == 3
    assert "focus on" not in user_texts(fake_llm.requests[2])[0]
    term.exit()


def test_model_shows_the_current_model_and_switches_to_openai(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("From GPT."))
    term = spawn()
    term.prompt()

    assert MODELS["anthropic"] in term.command("/model")
    assert MODELS["openai"] in term.command(f"/model {MODELS['openai']}")
    turn(term, "hello", "From GPT.")

    (request,) = fake_llm.requests
    assert request.protocol == "openai"
    assert request.model == "gpt-test"
    switches = [r for r in session_records(decoy_home) if r["type"] == "model_switch"]
    assert [s["model"] for s in switches] == [MODELS["openai"]]
    term.exit()


def test_cost_shows_the_tokens_of_a_turn(spawn: Spawn, fake_llm: FakeLlmServer) -> None:
    fake_llm.script(Reply.text("Counted.", input_tokens=1234, output_tokens=56))
    term = spawn()
    term.prompt()
    turn(term, "count", "Counted.")

    shown = term.command("/cost")

    assert re.search(r"this run\s+1\.2k\s+56", shown), shown
    term.exit()


def test_stats_shows_a_retry_by_kind_and_the_time_waited(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    # The server says how long to wait, so the wait is not a jittered draw that may be 0.0s.
    fake_llm.script(Fault.status(500, headers={"retry-after": "1"}), Reply.text("Recovered."))
    term = spawn()
    term.prompt()
    turn(term, "hi", "Recovered.")

    shown = term.command("/stats")

    assert re.search(r"retries\s+1 \(server 1\)", shown), shown
    waited = re.search(r"time spent waiting\s+(\d+\.\d)s", shown)
    assert waited is not None, shown
    assert float(waited.group(1)) >= 1.0
    term.exit()


def test_stats_counts_small_models_requests_and_its_quiet_fallback(
    spawn: Spawn, fake_llm: FakeLlmServer, web_server: FakeWebServer, workspace: Path
) -> None:
    fetch = serve_long_page(web_server, "Which change is caching?")
    sent_to_small: list[str] = []

    def side(request: RecordedRequest) -> Step:  # small_model fails, is retried, then unknown:
        if request.model != "claude-small":  # the session's model answers for it
            return Reply.text("number 7")
        sent_to_small.append(request.model)
        if len(sent_to_small) == 1:
            return Fault.status(500, headers={"retry-after": "1"})
        return Fault.status(404, "not_found_error", message="model: claude-small")

    fake_llm.respond_with(fetching(fetch, side, Reply.text("Read the page.")))
    (workspace / "agent.yaml").write_text("small_model: anthropic:claude-small\n")
    term = spawn("--yes")
    term.prompt()
    shown = turn(term, "read it", "Read the page.")

    assert "Switched from" not in shown  # small_model's own: the session's model stays
    stats = term.command("/stats")
    assert re.search(r"model\s+anthropic:claude-test\n", stats), stats
    assert re.search(r"requests\s+5\n", stats), stats  # the turn's 2, small_model's 3
    assert re.search(r"retries\s+1 \(server 1\)", stats), stats
    assert re.search(r"fallbacks\s+1\n", stats), stats
    term.exit()


def test_stats_shows_what_the_fleet_knows(spawn: Spawn, fake_llm: FakeLlmServer) -> None:
    fake_llm.limit_capacity(rate=1.0, burst=50)
    fake_llm.script(Fault.status(429, "rate_limit_error", headers={"retry-after": "3"}))
    fake_llm.script(Reply.text("Paced."))
    term = spawn()
    term.prompt()
    turn(term, "hi", "Paced.")

    shown = term.command("/stats")

    assert re.search(r"shared state\s+agents on this machine", shown), shown
    assert re.search(r"anthropic:claude-test \[[0-9a-f]{8}\]", shown), shown
    assert re.search(r"requests \d+/50 left · retry budget \d+", shown), shown
    assert "breaker closed" in shown
    assert "in flight 0" in shown
    term.exit()


def test_clear_starts_a_new_session_without_the_old_history(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Reply.text("Noted."), Reply.text("Fresh."))
    term = spawn()
    term.prompt()
    turn(term, "remember the word zebra", "Noted.")

    shown = term.command("/clear")
    turn(term, "what word?", "Fresh.")

    new_id = re.search(r"New session (\w+)", shown)
    assert new_id is not None, shown
    assert user_texts(fake_llm.requests[1]) == ["what word?"]
    assert new_id.group(1) in clean(term.exit())


def _picker_after_one_session(spawn: Spawn, prompt: str, answer: str) -> tuple[Terminal, str]:
    """A second REPL, after a first one answered ``prompt``, showing ``/resume``'s picker."""
    first = spawn()
    first.prompt()
    turn(first, prompt, answer)
    first.exit()
    second = spawn()
    second.prompt()
    second.send_line("/resume")
    return second, clean(second.expect(r"Resume which\?"))


def test_resume_without_an_id_picks_a_session_by_number(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Reply.text("Blue whale."))
    term, picker = _picker_after_one_session(spawn, "largest animal?", "Blue whale.")

    term.send_line("1")
    shown = clean(term.expect("Blue whale"))
    term.prompt()

    assert "largest animal?" in picker
    assert "Resumed" in shown
    assert "largest animal?" in shown  # the last exchange
    term.exit()


def test_resume_picker_shows_prompts_with_brackets_as_typed(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Reply.text("Italics."))
    term, picker = _picker_after_one_session(spawn, "why is [b] closed by [/i]?", "Italics.")

    term.send_line("")
    term.prompt()

    assert "why is [b] closed by [/i]?" in picker
    term.exit()


def test_help_lists_every_command_with_its_arguments(spawn: Spawn) -> None:
    term = spawn()
    term.prompt()

    shown = term.command("/help")

    for usage in (
        "/help", "/resume [id]", "/sessions", "/compact [focus]", "/model [ref]",
        "/undo", "/stats", "/cost", "/clear", "/exit",
    ):  # fmt: skip
        assert usage in shown
    term.exit()


@pytest.mark.parametrize(
    ("keys", "sent"),
    [
        pytest.param("first line\x1b\rsecond line", "first line\nsecond line", id="esc-enter"),
        pytest.param(
            "\x1b[200~def f():\n    return 1\n\x1b[201~",
            "def f():\n    return 1",
            id="bracketed-paste",
        ),
    ],
)
def test_esc_enter_and_a_bracketed_paste_put_newlines_into_the_prompt(
    keys: str, sent: str, spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Reply.text("Got it."))
    term = spawn()
    term.prompt()
    term.child.send(keys)
    turn(term, "", "Got it.")

    assert user_texts(fake_llm.requests[0]) == [sent]
    term.exit()


def test_sessions_and_resume_survive_hostile_session_files(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Blue whale."))
    first = spawn()
    first.prompt()
    turn(first, "largest animal?", "Blue whale.")
    first.exit()
    (path,) = (decoy_home / ".agent" / "sessions").glob("*.jsonl")
    lines = path.read_bytes().split(b"\n")
    lines[2:2] = [b"[" * 100_000, b'{"ts":"yesterday","type":"message"}', b"\xff\x00"]
    path.write_bytes(b"\n".join(lines))
    session_id = path.name.removesuffix(".jsonl")

    second = spawn()
    second.prompt()
    listed = second.command("/sessions")
    second.send_line(f"/resume {session_id}")
    resumed = clean(second.expect("skipped 3 damaged lines"))
    second.prompt()
    fake_llm.script(Reply.text("Still here."))
    turn(second, "and the smallest?", "Still here.")

    assert session_id in listed
    assert "Traceback" not in listed + resumed
    assert "largest animal?" in user_texts(fake_llm.requests[-1])[0]
    second.exit()


def test_doctor_probes_each_model_and_says_what_to_fix(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(
        Reply.text("ok"),  # the primary answers the probe
        Fault.status(401, "authentication_error", message="invalid x-api-key"),
    )
    term = spawn("--model", MODELS["anthropic"], "--fallback-model", MODELS["openai"])
    term.prompt()

    shown = term.command("/doctor")

    assert re.search(r"✓ +model anthropic:claude-test +answered in \d", shown)
    assert "model openai:gpt-test" in shown
    assert "[auth]" in shown
    assert "check the API key" in shown
    assert "sandbox" in shown
    assert "shared state" in shown
    probe = fake_llm.requests[0]
    assert probe.body["max_tokens"] == 5  # one tiny request, not a turn
    term.exit()


def test_doctor_names_a_permission_file_it_could_not_read(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text('{"permissions": {"deny": [')
    fake_llm.script(Reply.text("ok"))
    term = spawn()
    term.prompt()

    shown = term.command("/doctor")

    assert re.search(r"permission rules +\.claude/settings\.json: not valid JSON", shown)
    assert "/permissions lists the rules in force" in shown
    term.exit()


def test_when_no_model_can_answer_the_repl_offers_to_wait_and_then_sends_the_turn_again(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(
        Fault.status(429, "rate_limit_error", headers={"retry-after": "2"}),
        Reply.text("Answered after the wait."),
    )
    term = spawn("--set", "recovery.max_retry_wait=1")
    term.prompt()
    term.send_line("hello")
    term.expect(re.escape("[w] wait 2s and try again"))
    term.send_line("w")

    shown = clean(term.expect(re.escape("Answered after the wait.")))

    assert re.search(r"Waiting [0-2]s", shown)
    assert len(fake_llm.requests) == 2
    assert "hello" in json.dumps(fake_llm.requests[1].body["messages"])  # the same turn, resent
    term.prompt()
    term.exit()


def test_the_wait_offered_runs_while_the_question_is_read_and_does_not_restart(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Fault.status(429, "rate_limit_error", headers={"retry-after": "600"}))
    term = spawn("--set", "recovery.max_retry_wait=1")
    term.prompt()
    term.send_line("hello")
    asked = clean(term.expect(re.escape("[s] stop (session kept)")))
    term.send_line("w")
    shown = clean(term.expect(r"Waiting \w+"))
    term.interrupt()
    term.prompt()
    term.exit()

    assert "[w] wait 10m and try again" in asked
    assert "Waiting 9m" in shown  # what is left of the server's 10 minutes, not 10 again


def test_when_no_model_can_answer_stopping_keeps_the_session(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(Fault.status(429, "rate_limit_error", headers={"retry-after": "600"}))
    term = spawn("--set", "recovery.max_retry_wait=1")
    term.prompt()
    term.send_line("hello")
    asked = clean(term.expect(re.escape("[s] stop (session kept)")))
    term.send_line("s")
    term.expect(re.escape("Stopped; the session is kept."))
    term.prompt()
    assert "[w] wait 10m and try again" in asked  # the server's own retry-after
    assert len(fake_llm.requests) == 1  # nothing was sent again
    term.exit()
