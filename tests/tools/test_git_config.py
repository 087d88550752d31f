"""Git's configuration syntax as git reads it, and includes resolved from the including file."""

from __future__ import annotations

from pathlib import Path

from tools.guard.git_config import command_words, parse, read_config
from tools.guard.protected import ProtectedSnapshot
from tools.guard.protected_scan import scan


def test_sections_values_quotes_comments_and_continuations() -> None:
    text = (
        "# comment\n"
        '[core] hooksPath = ".git hooks" ; trailing\n'
        '[includeIf "gitdir:~/w/"]\n'
        "\tpath = a.cfg\n"
        "[Filter.Lfs]\n"
        "\tclean = git-lfs \\\n"
        "  clean -- %f\n"
        "\tbare\n"
        '[alias]\n\tx = "!sh -c \\"echo #1\\""\n'
        "[broken\n"
        "garbage line\n"
    )
    assert list(parse(text)) == [
        ("core.hookspath", ".git hooks"),
        ("includeif.gitdir:~/w/.path", "a.cfg"),
        ("filter.lfs.clean", "git-lfs   clean -- %f"),  # blanks kept, as git reads it
        ("filter.lfs.bare", None),
        ("alias.x", '!sh -c "echo #1"'),
    ]


def test_includes_are_read_from_the_including_files_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "main.cfg").write_text("[include]\n\tpath = sub/one.cfg\n")
    (tmp_path / "sub" / "one.cfg").write_text("[include]\n\tpath = two.cfg\n[a]\n\tb = 1\n")
    (tmp_path / "sub" / "two.cfg").write_text("[include]\n\tpath = ../main.cfg\n[c]\n\td = 2\n")

    keys = [(entry.key, entry.value) for entry in read_config(tmp_path / "main.cfg", None)]

    assert ("a.b", "1") in keys
    assert ("c.d", "2") in keys  # and the cycle back to main.cfg ends


def test_command_words_split_like_a_shell() -> None:
    assert command_words("bash 'hooks/a b.sh'&&./x.sh | tee log") == [
        "bash",
        "hooks/a b.sh",
        "./x.sh",
        "tee",
        "log",
    ]


def test_a_dot_git_file_pointing_anywhere_in_the_workspace_protects_that_git_dir(
    workspace: Path,
) -> None:
    evil = workspace / "innocent"
    (evil / "hooks").mkdir(parents=True)
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    (evil / "config").write_text("[core]\n\thooksPath = ../tools\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".git").write_text("gitdir: ../innocent\n")
    (workspace / "tools").mkdir()

    found = scan(workspace)

    for rel in ("sub/.git", "innocent/config", "innocent/hooks/post-checkout", "tools/x"):
        assert found.reason(rel), rel
    assert "innocent" in found.git_dirs
    assert found.reason("innocent/objects/ab") is None


def test_a_linked_worktree_in_the_workspace_is_found_from_git_metadata(workspace: Path) -> None:
    meta = workspace / ".git" / "worktrees" / "wt"
    meta.mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (meta / "gitdir").write_text(f"{workspace / 'deep' / 'wt' / '.git'}\n")
    (meta / "config.worktree").write_text("[core]\n\thooksPath = .hooks\n")
    (workspace / "deep" / "wt").mkdir(parents=True)
    (workspace / "deep" / "wt" / ".git").write_text(f"gitdir: {meta}\n")

    found = scan(workspace, budget=3)  # the walk does not get there: the metadata does

    assert found.reason("deep/wt/.git")
    assert found.reason("deep/wt/.hooks/pre-commit")


def test_a_workspace_inside_a_repository_protects_what_that_repository_runs(
    tmp_path: Path, decoy_home: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "config").write_text("[core]\n\thooksPath = app/hooks\n")
    workspace = repo / "app"
    (workspace / "hooks").mkdir(parents=True)

    found = scan(workspace)

    assert found.reason("hooks/pre-commit")
    assert found.reason("src/x.py") is None


def test_a_git_directory_behind_a_symlink_is_followed_only_inside(
    workspace: Path, tmp_path: Path
) -> None:
    for target in (workspace / "data", tmp_path / "elsewhere"):
        (target / "hooks").mkdir(parents=True)
        (target / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".git").symlink_to(workspace / "data")
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".git").symlink_to(tmp_path / "elsewhere")

    found = scan(workspace)

    assert found.reason(".git")
    assert found.reason("data/hooks/pre-commit")
    assert found.reason("sub/.git")  # the link itself; what it points to is outside
    assert all(not root.rel.startswith("..") for root in found.roots)


def test_husky_nine_protects_the_scripts_its_hooks_run(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".git" / "config").write_text("[core]\n\thooksPath = .husky/_\n")
    (workspace / ".husky" / "_").mkdir(parents=True)

    found = scan(workspace)

    assert found.reason(".husky/_/pre-commit")
    assert found.reason(".husky/pre-commit")  # what .husky/_/pre-commit runs


def test_a_change_to_a_git_dir_a_dot_git_file_points_to_is_put_back(workspace: Path) -> None:
    evil = workspace / "innocent"
    (evil / "hooks").mkdir(parents=True)
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    (evil / "config").write_text("[core]\n\tbare = false\n")
    (workspace / ".git").write_text("gitdir: innocent\n")
    snapshot = ProtectedSnapshot.take(workspace)
    (evil / "config").write_text("[core]\n\tfsmonitor = touch PWNED\n")
    (evil / "hooks" / "pre-commit").write_text("touch PWNED\n")

    assert snapshot.restore() == ["innocent/config", "innocent/hooks/pre-commit"]
    assert (evil / "config").read_text() == "[core]\n\tbare = false\n"
    assert not (evil / "hooks" / "pre-commit").exists()
