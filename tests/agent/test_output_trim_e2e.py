"""End to end through the real ``agent -p``: a flood of command output reaches the model cut
once, with the true count of what was left out and the file that holds all of it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like ``value`` (a request body)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def test_seq_100000_reaches_the_model_with_an_honest_note(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.tool_call("run_command", {"command": "seq 1 100000"}))
    asked: list[str] = []

    def read_the_saved_part(request: RecordedRequest) -> Reply:
        # The model reads the lines it was not shown from the file the note names.
        if asked:
            return Reply.text("Counted.")
        [note] = [t for t in strings(request.body) if "[exit code 0]" in t]
        command = re.findall(r"\(sed -n '(\d+),(\d+)p' FILE", note)[0]
        path = re.findall(r"saved in (\S+\.txt)", note)[0]
        asked.append(f"sed -n '{command[0]},{int(command[0]) + 2}p' {path}")
        return Reply.tool_call("run_command", {"command": asked[0]})

    fake_llm.respond_with(read_the_saved_part)

    run = run_agent("-p", "count", "--yes", server=fake_llm, workspace=workspace, home=decoy_home)

    assert run.code == 0, run.stderr
    [sent] = [text for text in strings(fake_llm.requests[1].body) if "[exit code 0]" in text]
    notes = re.findall(r"\[\.\.\. ([\d,]+) lines \(([\d,]+) bytes\) cut[^\]]*\]", sent)
    assert len(notes) == 1, notes  # one cut, one note
    lines, size = (int(value.replace(",", "")) for value in notes[0])
    shown = {int(line) for line in sent.splitlines() if line.isdigit()}
    assert lines == 100_000 - len(shown)  # every line is either shown or counted
    assert size == sum(len(f"{n}\n") for n in range(1, 100_001) if n not in shown)
    [saved] = re.findall(r"saved in (\S+\.txt)", sent)
    assert Path(saved).is_relative_to(decoy_home / ".agent" / "outputs")
    assert Path(saved).read_text() == "".join(f"{n}\n" for n in range(1, 100_001))
    first = min(n for n in range(1, 100_001) if n not in shown)
    read_back = [t for t in strings(fake_llm.requests[-1].body) if t.startswith(f"{first}\n")]
    assert read_back == [f"{first}\n{first + 1}\n{first + 2}\n[exit code 0]"]  # sandboxed
