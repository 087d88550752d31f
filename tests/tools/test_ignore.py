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
