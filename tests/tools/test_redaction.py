"""The executor redacts tool text before anything cuts it: the trim, event excerpts, quotes."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from sessions import Redactor
from tests.tools.conftest import MakeHarness
from tools import Tool, ToolContext, ToolOutput, ToolSettings

KEY = "Zq8w4Lk2Vn7Rt5Yp1Hm9Xc3Bd6Fg0JsQe"  # no known key shape: found only as a known value
REDACT = Redactor({"DEPLOY_TOKEN": KEY}).text


def fragments(text: str, key: str = KEY, size: int = 8) -> list[str]:
    """Every piece of ``key`` of ``size`` characters that appears in ``text``."""
    return [key[i : i + size] for i in range(len(key) - size + 1) if key[i : i + size] in text]


class _NoInput(BaseModel):
    pass


class Printing(Tool[_NoInput]):
    name = "printing"
    description = "prints"
    input_model = _NoInput

    def __init__(self, text: str, *, is_error: bool = False) -> None:
        self.text = text
        self.is_error = is_error

    async def run(self, args: _NoInput, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(self.text, is_error=self.is_error)


async def test_a_key_straddling_the_trim_is_fully_masked(make_harness: MakeHarness) -> None:
    output = "A" * 25_000 + KEY + "B" * 9_971
    harness = make_harness(tools=[Printing(output)], redact=REDACT)
    result = await harness.run("printing")
    assert "cut from the middle" in result.content
    assert fragments(result.content) == []


async def test_run_command_redacts_before_its_own_trim(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / ".env").write_text(KEY)
    harness = make_harness(redact=REDACT, settings=ToolSettings(max_output_chars=1_000))
    command = "printf 'A%.0s' $(seq 650); cat .env; printf 'B%.0s' $(seq 320)"
    result = await harness.run("run_command", command=command)
    assert "[exit code 0]" in result.content
    assert fragments(result.content) == []


async def test_event_excerpts_of_a_failure_hold_no_key_fragment(
    make_harness: MakeHarness,
) -> None:
    # ToolFailed keeps the last 200 characters: the cut falls inside the key.
    output = "x" * 500 + KEY + "y" * (200 - len(KEY) // 2)
    harness = make_harness(tools=[Printing(output, is_error=True)], redact=REDACT)
    await harness.run("printing")
    [failed] = harness.of_type("tool_failed")
    assert fragments(failed.model_dump_json()) == []


async def test_a_key_in_bad_arguments_is_not_quoted_half(make_harness: MakeHarness) -> None:
    harness = make_harness(redact=REDACT)
    result = await harness.run("read_file", path=["docs", "a" * 60 + KEY])
    assert "invalid arguments for read_file" in result.content
    assert fragments(result.content) == []
