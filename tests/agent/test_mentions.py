"""``@path`` mentions: what goes with the prompt, what is refused, and completion."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from agent.permissions import PermissionCheck, PermissionSettings
from agent.terminal.mention_completion import MentionCompleter, ranked, scan
from agent.terminal.mentions import expand_now, looks_like_a_file, mentioned


def test_a_mentioned_file_goes_with_the_prompt_with_its_path(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('hi')\n")

    result = expand_now("explain @src/app.py, please", tmp_path)

    assert result.problems == []
    assert result.attached == ["src/app.py"]
    assert result.prompt.startswith("explain @src/app.py, please\n\n")
    assert "<file path=\"src/app.py\">\nprint('hi')\n</file>" in result.prompt


def test_a_directory_mention_lists_it_without_ignored_entries(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "pkg" / "a.pyc").write_text("")
    (tmp_path / ".gitignore").write_text("*.pyc\n")

    result = expand_now("look at @pkg/", tmp_path)

    assert '<directory path="pkg/">\na.py\nsub/\n</directory>' in result.prompt


def test_missing_and_outside_paths_are_problems_and_code_decorators_are_text(
    tmp_path: Path,
) -> None:
    result = expand_now("see @src/nope.py and @../etc/passwd; @dataclass stays", tmp_path)

    assert result.problems == [
        "@src/nope.py: no such file or directory in the workspace",
        f"@../etc/passwd: outside the workspace; mention files inside {tmp_path.resolve()}",
    ]
    assert result.unknown == []
    assert mentioned("mail me@example.com") == []


def test_binary_files_are_described_and_each_file_goes_once(tmp_path: Path) -> None:
    # Not named as an image (an image is sent as one: test_images_e2e).
    (tmp_path / "logo.dat").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))

    result = expand_now("@logo.dat and @./logo.dat", tmp_path)

    assert result.attached == ["logo.dat"]
    assert result.prompt.count("<file") == 1
    assert "PNG" in result.prompt


def test_a_read_deny_rule_holds_for_mentions(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("KEY=secret\n")
    settings = PermissionSettings(deny=["Read(./.env)"])
    check = PermissionCheck(settings, None, workspace=tmp_path, home=tmp_path)

    result = expand_now("what is in @.env", tmp_path, check.refuses_read)

    assert result.problems == ["@.env: refused by the permission rule deny: Read(./.env)"]
    assert "secret" not in result.prompt


def test_completion_offers_workspace_paths_respecting_gitignore(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "main.py").write_text("")
    (tmp_path / ".gitignore").write_text("build/\n")
    completer = MentionCompleter(tmp_path)

    def complete(text: str) -> list[str]:
        document = Document(text, len(text))
        return [c.text for c in completer.get_completions(document, CompleteEvent())]

    assert scan(tmp_path) == ["src/", ".gitignore", "src/main.py"]  # directories first
    assert complete("read @sr") == ["src/", "src/main.py"]
    assert complete("read @main") == ["src/main.py"]
    assert complete("no mention") == []


def test_ranking_puts_prefixes_before_names_before_substrings() -> None:
    paths = ["docs/readme.md", "readme.md", "src/thread.py"]
    assert ranked(paths, "read") == ["readme.md", "docs/readme.md", "src/thread.py"]


def test_a_missing_mention_that_looks_like_code_is_said_and_sent_as_text(tmp_path: Path) -> None:
    result = expand_now('@app.get("/x") and @pytest.fixture and @user, thanks', tmp_path)

    assert result.problems == []
    assert result.unknown == ["pytest.fixture"]
    assert result.prompt == '@app.get("/x") and @pytest.fixture and @user, thanks'
    assert ("@pytest.fixture: no such file; sent as text", "yellow") in result.notes()


def test_a_missing_mention_with_a_file_extension_or_a_leading_dot_stops_the_prompt(
    tmp_path: Path,
) -> None:
    result = expand_now("fix @nope.py. and @.envrc and @Makefile.MK", tmp_path)

    assert result.problems == [
        "@nope.py: no such file or directory in the workspace",
        "@.envrc: no such file or directory in the workspace",
        "@Makefile.MK: no such file or directory in the workspace",
    ]


def test_names_with_a_dot_and_no_slash_are_read_as_files(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Title\n")
    (tmp_path / "setup.py").write_text("setup()\n")
    (tmp_path / ".env").write_text("MODE=dev\n")

    result = expand_now("compare @README.md, @setup.py and @.env.", tmp_path)

    assert result.problems == []
    assert result.attached == ["README.md", "setup.py", ".env"]
    assert '<file path=".env">\nMODE=dev\n</file>' in result.prompt


def test_an_email_address_or_a_handle_is_no_mention_even_when_a_file_has_that_name(
    tmp_path: Path,
) -> None:
    (tmp_path / "b.com").write_text("not me\n")
    (tmp_path / "user").write_text("a file named user\n")

    assert mentioned("write to a@b.com") == []
    result = expand_now("write to a@b.com and ask @user", tmp_path)

    assert result.attached == ["user"]  # at a word start and it exists: a mention
    assert "not me" not in result.prompt


@pytest.mark.parametrize(
    ("name", "is_file"),
    [
        ("setup.py", True),
        ("docs/x", True),
        (".env", True),
        ("notes.TXT", True),
        ("pytest.fixture", False),
        ("app.get", False),
        ("user", False),
        ("..", False),
        (".py", True),
        ('app.get("/x")', False),
    ],
)
def test_what_looks_like_a_file(name: str, is_file: bool) -> None:
    assert looks_like_a_file(name) is is_file
