"""What reading the tree of a long command costs, by way of reading it.

Run: ``python benchmarks/command_tree.py`` (about 10 s; reads and writes nothing).

On the worst case of ``command_analysis.py`` (1,500 lines of pipelines and lists, 7,500
simple commands, about 50,000 nodes), CPU time of the fastest of seven runs, each on a tree
parsed afresh:

1. the grammar's parse;
2. the walk's skeleton in Python: pop each node that can hold a command, push its children;
3. a ``TreeCursor`` over every node, reading each one's kind;
4. a tree-sitter query capturing only the ``command`` nodes (the query runs in C);
5. fetching the children of every node;
6. the least a walk can do: a cursor that splits each command of plain words into a
   ``SimpleCommand`` and reads nothing else (no files, wrappers, pipelines, substitutions);
7. the whole analysis.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: this checkout's code
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.command_analysis import _big
from tools.shell_reading.kinds import AMP, COMMAND, LEAF, TOKEN, kinds_of
from tools.shell_reading.model import SimpleCommand
from tools.shell_reading.reading import _parse, read_at

_PLAIN = re.compile(r"[^\w./,:@%+ \t-]", re.ASCII)
_SKIPPED = (COMMAND, LEAF, TOKEN, AMP)


def _fastest(run: Callable[[Any], object], source: bytes, runs: int = 7) -> float:
    best = float("inf")
    for _ in range(runs):
        tree = _parse(source)
        start = time.process_time()
        run(tree)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    import tree_sitter

    text = _big()["1,500 lines of pipelines"]
    source = text.encode()
    language = _parse(source).language
    roles = kinds_of(language).roles
    commands_only = tree_sitter.Query(language, "(command) @command")

    def skeleton(tree: Any) -> None:
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if roles[node.kind_id] != COMMAND:
                stack += [c for c in node.children if roles.get(c.kind_id) not in _SKIPPED]

    def cursor(tree: Any) -> None:
        walker = tree.walk()
        while True:
            roles.get(walker.node.kind_id)
            if walker.goto_first_child():
                continue
            while not walker.goto_next_sibling():
                if not walker.goto_parent():
                    return

    def query(tree: Any) -> None:
        tree_sitter.QueryCursor(commands_only).captures(tree.root_node)

    def children(tree: Any) -> None:
        stack = [tree.root_node]
        while stack:
            stack += stack.pop().children

    def least(tree: Any) -> None:
        commands: list[SimpleCommand] = []
        walker = tree.walk()
        while True:
            node = walker.node
            role = roles.get(node.kind_id)
            descend = role not in _SKIPPED
            if role == COMMAND:
                written = text[node.start_byte : node.end_byte]
                if _PLAIN.search(written) is None:
                    words = written.split()
                    name = words[0].rpartition("/")[2]
                    literal = (True,) * len(words)
                    argv = tuple(words)
                    commands.append(SimpleCommand(name, argv, " ".join(words), literal=literal))
                else:
                    descend = True
            if descend and walker.goto_first_child():
                continue
            while not walker.goto_next_sibling():
                if not walker.goto_parent():
                    return

    print(f"{len(text) // 1000} kB, 7,500 simple commands; CPU, fastest of 7")
    parse = _fastest(lambda _tree: _parse(source), source)
    print(f"  {parse * 1e3:6.1f} ms  the grammar's parse")
    for name, way in (
        ("the walk's skeleton in Python", skeleton),
        ("a TreeCursor over every node, reading its kind", cursor),
        ("a query capturing the command nodes", query),
        ("fetching the children of every node", children),
        ("the least a walk can do (plain commands split, nothing read)", least),
    ):
        print(f"  {_fastest(way, source) * 1e3:6.1f} ms  {name}")
    whole = _fastest(lambda _tree: read_at(text, 0), source) - parse
    print(f"  {whole * 1e3:6.1f} ms  the whole analysis, its parse aside")


if __name__ == "__main__":
    main()
