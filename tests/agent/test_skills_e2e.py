"""Skills end to end: loaded on demand under ``agent -p`` against the fake model server,
their allowed-tools (a project's only once allowed), and ``/skills`` in a pseudo-terminal."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean

MODEL = ("--model", MODELS["anthropic"])


def write_skill(folder: Path, name: str, description: str, body: str, extra: str = "") -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n")
    return path


def test_print_mode_loads_a_skill_on_demand_and_then_a_file_beside_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    skill = write_skill(
        decoy_home / ".claude/skills",
        "review",
        "Review a change against the team checklist.",
        "BODY-MARKER: walk through checklist.md item by item.",
    )
    (skill.parent / "checklist.md").write_text("CHECKLIST-MARKER: tests pass\n")
    broken = workspace / ".claude/skills/broken/SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nname: broken\ndescription: [oops\n---\nbody\n")
    fake_llm.script(
        Reply.tool_call("skill", {"name": "review"}),
        Reply.tool_call("skill", {"name": "review", "file": "checklist.md"}),
        Reply.text("Reviewed."),
    )

    run = run_agent(
        "-p", "review my change", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 0, run.stderr
    assert "Reviewed." in run.stdout
    assert f"{broken}:" in run.stderr
    assert "not valid YAML" in run.stderr
    first, second, third = (request.body for request in fake_llm.requests)
    system = str(first["system"])
    assert "- review: Review a change against the team checklist." in system
    assert "BODY-MARKER" not in str(first)
    assert "skill" in [tool["name"] for tool in first["tools"]]
    assert "BODY-MARKER" in str(second["messages"][-1])
    assert "checklist.md" in str(second["messages"][-1])
    assert "CHECKLIST-MARKER" in str(third["messages"][-1])


def test_allowed_tools_hold_for_a_users_skill_and_not_for_an_unallowed_projects(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    allows = "allowed-tools: Bash(touch made)\n"
    write_skill(decoy_home / ".claude/skills", "mine", "Make things.", "Touch made.", allows)
    write_skill(workspace / ".agent/skills", "theirs", "Make things.", "Touch made.", allows)

    def attempt(name: str) -> str:
        fake_llm.reset()
        fake_llm.script(
            Reply.tool_call("skill", {"name": name}),
            Reply.tool_call("run_command", {"command": "touch made"}),
            Reply.text("Tried."),
        )
        run = run_agent(
            "-p", "make it", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home
        )
        assert run.code == 0, run.stderr
        return str(fake_llm.requests[1].body["messages"][-1])

    refused = attempt("theirs")
    assert not (workspace / "made").exists()
    assert "allowed-tools are not in force" in refused

    allowed = attempt("mine")
    assert (workspace / "made").exists()
    assert "hold until this turn ends: Bash(touch made)" in allowed


def test_skills_lists_each_with_where_it_came_from_and_allows_a_projects(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_skill(decoy_home / ".claude/skills", "notes", "Write meeting notes.", "Notes.")
    write_skill(
        workspace / ".claude/skills",
        "lint",
        "Lint the code.",
        "Run ruff.",
        "allowed-tools: Bash(ruff check:*)\n",
    )
    broken = workspace / ".agent/skills/nameless/SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\ndescription: no name\n---\nbody\n")
    term = spawn()
    start = "".join(clean(term.prompt()).split())  # long paths wrap
    assert "nameless/SKILL.md" in start
    assert "namemustbe" in start

    listing = clean(term.command("/skills"))
    assert "lint" in listing
    assert "notes" in listing
    assert "project:" in listing
    assert "user:" in listing
    assert "Lint the code." in listing
    assert "/skills allow lint" in listing
    assert "nameless/SKILL.md" in "".join(listing.split())

    term.send_line("/skills allow lint")
    term.expect("Allow it in this project")
    term.send_line("y")
    assert "lint allowed" in clean(term.prompt())
    assert "/skills allow lint" not in clean(term.command("/skills"))
    fake_llm.script(Reply.tool_call("skill", {"name": "lint"}), Reply.text("Linted."))
    term.send_line("lint my code")
    term.expect("Linted.")
    term.prompt()
    term.exit()

    loaded = str(fake_llm.requests[1].body["messages"][-1])
    assert "Run ruff." in loaded
    assert "hold until this turn ends: Bash(ruff check:*)" in loaded
