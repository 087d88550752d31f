"""A scripted model calls a tool on a missing file, reads the error and recovers.

The loop is not used: a few lines below play its part (send, run the tool calls, append
the results), so this checks what the model would see from the executor.
"""

from __future__ import annotations

from pathlib import Path

from providers import ChatRequest, Message, StopReason
from providers.testing import ScriptedProvider, text, tool_call
from tests.tools.conftest import Harness
from tools import UndoReport


async def _drive(provider: ScriptedProvider, harness: Harness, prompt: str) -> str:
    messages = [Message.user(prompt)]
    specs = harness.executor.specs()
    while True:
        response = await provider.chat(ChatRequest(messages=messages, tools=specs))
        messages.append(response.message)
        if response.stop_reason is not StopReason.TOOL_USE:
            return response.message.text
        results = [await harness.executor.execute(c) for c in response.message.tool_uses]
        messages.append(Message(role="user", content=list(results)))


async def test_model_recovers_from_a_missing_file(harness: Harness, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("GREETING = 'helo'\n")
    provider = ScriptedProvider(
        [
            tool_call("read_file", path="app.py"),
            tool_call("list_files", pattern="**/app.py"),
            tool_call("edit_file", path="src/app.py", old_string="helo", new_string="hello"),
            text("Fixed the typo in src/app.py."),
        ]
    )
    answer = await _drive(provider, harness, "fix the typo in app.py")

    assert answer == "Fixed the typo in src/app.py."
    assert (workspace / "src" / "app.py").read_text() == "GREETING = 'hello'\n"
    [error] = provider.requests[1].messages[-1].tool_results
    assert error.is_error
    assert "file not found: app.py" in error.content
    assert "list_files" in error.content
    [listing] = provider.requests[2].messages[-1].tool_results
    assert listing.content == "src/app.py"

    report = harness.executor.undo_last_turn()
    assert isinstance(report, UndoReport)
    assert report.describe(workspace) == "Undid turn 1: 1 file put back.\n  src/app.py: restored"
    assert (workspace / "src" / "app.py").read_text() == "GREETING = 'helo'\n"
