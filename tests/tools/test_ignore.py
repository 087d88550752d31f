from __future__ import annotations

from pathlib import Path

from tools.ignore import GitIgnore


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")


def _walk(root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in GitIgnore(root).walk(root)]


def test_gitignore_rules(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        [
            ".git/config",
            "a.py",
            "a.pyc",
            "build/out.txt",
            "src/build/keep.txt",
            "src/m.py",
            "logs/x.log",
            "logs/important.log",
            "docs/only_root.md",
            "only_root.md",
            "sub/.gitignore",
            "sub/secret.txt",
            "sub/deep/secret.txt",
        ],
    )
    (tmp_path / ".gitignore").write_text(
        "# comment\n*.pyc\n/build/\nlogs/*.log\n!logs/important.log\n/only_root.md\n"
    )
    (tmp_path / "sub" / ".gitignore").write_text("secret.txt\n")
    assert _walk(tmp_path) == [
        ".gitignore",
        "a.py",
        "docs/only_root.md",
        "logs/important.log",
        "src/m.py",
        "src/build/keep.txt",
        "sub/.gitignore",
    ]


def test_double_star_and_dir_only(tmp_path: Path) -> None:
    _tree(tmp_path, ["a/node_modules/x.js", "node_modules/y.js", "cache", "d/cache/z"])
    (tmp_path / ".gitignore").write_text("**/node_modules\ncache/\n")
    assert _walk(tmp_path) == [".gitignore", "cache"]


def test_the_scanners_relative_question_agrees_with_the_path_one(tmp_path: Path) -> None:
    _tree(tmp_path, ["sub/.gitignore", "sub/x.log", "x.log", "sub/deep/keep.txt"])
    (tmp_path / ".gitignore").write_text("*.log\n!sub/x.log\n")
    (tmp_path / "sub" / ".gitignore").write_text("deep/\n")
    rules = GitIgnore(tmp_path)
    is_dir_of = {
        "x.log": False,
        "sub/x.log": False,
        "sub/deep": True,
        "sub/deep/keep.txt": False,
        "sub": True,
        ".git": True,
        ".": False,
    }
    for rel, is_dir in is_dir_of.items():
        assert rules.is_ignored_relative(rel, is_dir) == rules.is_ignored(tmp_path / rel, is_dir)
    assert rules.is_ignored_relative("x.log", is_dir=False)
    assert not rules.is_ignored_relative("sub/x.log", is_dir=False)
    assert rules.is_ignored_relative("sub/deep", is_dir=True)
    assert not rules.is_ignored_relative(".", is_dir=True)
