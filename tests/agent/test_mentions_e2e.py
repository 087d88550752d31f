"""``@path`` mentions end to end: the REPL in a pseudo-terminal and ``agent -p``."""

from __future__ import annotations

import time
from pathlib import Path

from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean


def test_tab_completes_a_mention_and_the_file_goes_with_the_prompt(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha-beta-gamma\n")
    fake_llm.script(Reply.text("It says alpha."))
    term = spawn()
    term.prompt()
    term.child.send("what is in @note")
    term.expect("notes.txt")  # the menu, computed off the input thread
    term.child.send("\t")
    # Tab's insertion is drawn as a partial redraw, with nothing whole to wait for.
    time.sleep(1.0)
    term.send_line("")
    shown = clean(term.expect("It says alpha"))
    term.prompt()
    term.exit()

    assert "Attached notes.txt" in shown
    assert "alpha-beta-gamma" in str(fake_llm.requests[-1].body)


def test_a_missing_mention_is_said_and_nothing_is_sent(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    term = spawn()
    term.prompt()
    shown = term.command("fix @src/missing.py")
    term.exit()

    assert "@src/missing.py: no such file or directory in the workspace" in shown
    assert "Nothing was sent" in shown
    assert fake_llm.requests == []


def test_mentions_work_in_print_mode_and_a_missing_one_is_a_usage_error(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "a.py").write_text("x = 41\n")
    fake_llm.script(Reply.text("x is 41."))
    model = ("--model", MODELS["anthropic"])

    run = run_agent(
        "-p", "what is x in @a.py?", *model, server=fake_llm, workspace=workspace, home=decoy_home
    )
    missing = run_agent(
        "-p", "and @lib/b.py?", *model, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 0, run.stderr
    assert "x = 41" in str(fake_llm.requests[0].body)
    assert missing.code == 2
    assert "@lib/b.py: no such file or directory" in missing.stderr
    assert len(fake_llm.requests) == 1


def test_a_name_with_a_dot_and_no_slash_is_read_and_a_missing_one_stops_the_prompt(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / "README.md").write_text("readme-words-here\n")
    (workspace / ".env").write_text("MODE=dev-mode\n")
    fake_llm.script(Reply.text("Both read."))
    term = spawn()
    term.prompt()
    missing = term.command("fix @setup.py")
    shown = term.command("compare @README.md and @.env, and mail a@b.com")
    term.exit()

    assert "@setup.py: no such file or directory in the workspace" in missing
    assert "Attached README.md, .env" in shown
    assert len(fake_llm.requests) == 1
    body = str(fake_llm.requests[0].body)
    assert "readme-words-here" in body
    assert "MODE=dev-mode" in body
