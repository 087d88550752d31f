"""Custom slash commands from files: where they are found and how the body is filled in."""

from __future__ import annotations

from pathlib import Path

from agent.terminal.custom_commands import find_commands


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_arguments_fill_the_body_as_in_claude_code(tmp_path: Path) -> None:
    _write(
        tmp_path / ".agent" / "commands" / "fix.md", "Fix issue #$1 with priority $2: $ARGUMENTS"
    )
    _write(tmp_path / ".agent" / "commands" / "review.md", "Review the diff.")
    commands = find_commands(tmp_path, {"HOME": str(tmp_path / "home")})

    assert commands["/fix"].render('123 high "two words"') == (
        'Fix issue #123 with priority high: 123 high "two words"'
    )
    assert commands["/fix"].render("") == "Fix issue # with priority : "
    # A body without placeholders gets the arguments appended.
    assert commands["/review"].render("focus on tests") == (
        "Review the diff.\n\nARGUMENTS: focus on tests"
    )


def test_frontmatter_gives_the_description_hint_and_allowed_tools(tmp_path: Path) -> None:
    _write(
        tmp_path / ".claude" / "commands" / "commit.md",
        "---\n"
        "description: Create a git commit\n"
        "argument-hint: [message]\n"
        "allowed-tools: Bash(git add:*), Bash(git status:*)\n"
        "---\n"
        "## Context\n\n- Status: !`git status`\n\nCommit with $ARGUMENTS\n",
    )
    command = find_commands(tmp_path, {"HOME": str(tmp_path / "home")})["/commit"]

    assert command.usage == "/commit [message]"
    assert command.summary == "Create a git commit (project)"
    assert command.allowed_tools == ["Bash(git add:*)", "Bash(git status:*)"]
    assert command.shell_lines == ["git status"]
    assert command.needs_trust
    assert command.body.startswith("## Context")


def test_frontmatter_takes_hints_that_are_not_yaml_and_tool_lists(tmp_path: Path) -> None:
    _write(
        tmp_path / ".agent" / "commands" / "pr.md",
        "---\nargument-hint: [pr-number] [priority]\nallowed-tools:\n  - Read\n  - 'Bash(gh:*)'\n"
        "---\nReview PR $1\n",
    )
    command = find_commands(tmp_path, {"HOME": str(tmp_path / "home")})["/pr"]

    assert command.usage == "/pr [pr-number] [priority]"
    assert command.allowed_tools == ["Read", "Bash(gh:*)"]


def test_project_commands_win_and_builtins_cannot_be_replaced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write(tmp_path / ".agent" / "commands" / "deploy.md", "project deploy")
    _write(home / ".config" / "agent" / "commands" / "deploy.md", "personal deploy")
    _write(home / ".claude" / "commands" / "frontend" / "component.md", "Make a component")
    _write(home / ".claude" / "commands" / "help.md", "not the help")
    commands = find_commands(tmp_path, {"HOME": str(home)}, {"/help"})

    assert commands["/deploy"].body == "project deploy"
    assert commands["/component"].summary == "Make a component (user:frontend)"
    assert not commands["/component"].needs_trust  # the person's own file
    assert "/help" not in commands


def test_xdg_config_home_is_respected(tmp_path: Path) -> None:
    _write(tmp_path / "xdg" / "agent" / "commands" / "hi.md", "hello")
    environ = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}

    assert list(find_commands(tmp_path / "ws", environ)) == ["/hi"]
