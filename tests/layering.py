"""Read our packages' imports with `ast` and check the shape docs/ARCHITECTURE.md promises.

`read_tree` finds every import of one of our modules: at module level and inside functions
(Python runs those too, so they close cycles all the same), with relative imports resolved,
and without the ``if TYPE_CHECKING:`` blocks, which never run (``type_checking=True`` reads
them too: a cycle hidden behind one is still two modules that need each other, and the
cycle check runs on that reading as well). Four checks read the result,
each returning one actionable message per problem, naming the file and line:

- `arrow_problems`: an import that points up the layers, or sideways between the middle
  packages along an arrow that is not allowed;
- `cycle_problems`: modules that import each other, directly or around a loop;
- `shape_problems`: too many modules directly in ``agent/``, or a module over the size limit;
- `private_problems`: a private name (leading underscore) taken from another package.

`tests/test_layers.py` runs them on the real tree and on small synthetic ones.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

LAYERS: Mapping[str, int] = {
    "providers": 0,
    "tools": 1,
    "recovery": 1,
    "compaction": 1,
    "sessions": 1,
    "agent": 2,
}
"""Our top-level packages and their height: an import may point to a lower layer only."""

MAX_LINES = 400
MAX_AGENT_ENTRY_POINTS = 8
"""Modules directly in ``agent/`` besides ``__init__`` and ``__main__``: the entry points."""


@dataclass(frozen=True)
class Import:
    """One arrow from a module of ours to another, as one import statement draws it."""

    source: str
    """The importing module, dotted (``tools.files``)."""
    file: str
    """The importing file, relative to the root (``tools/files.py``)."""
    line: int
    target: str
    """The module imported, or the one holding the name imported."""
    imported: str
    """What the statement names, resolved (``from .files import _x`` names ``tools.files._x``)."""
    type_checking: bool = False
    """Inside an ``if TYPE_CHECKING:`` block: for the type checker only, never run."""

    @property
    def where(self) -> str:
        """``file:line``, for messages."""
        return f"{self.file}:{self.line}"

    @property
    def source_package(self) -> str:
        """The importing module's top-level package."""
        return self.source.partition(".")[0]

    @property
    def target_package(self) -> str:
        """The imported module's top-level package."""
        return self.target.partition(".")[0]


@dataclass(frozen=True)
class Tree:
    """Our modules under one root and every import between them."""

    root: Path
    modules: Mapping[str, Path]
    imports: list[Import]


def read_tree(root: Path, packages: Iterable[str] = LAYERS, *, type_checking: bool = False) -> Tree:
    """Find the modules of ``packages`` under ``root`` and read their imports (with
    ``type_checking``, those in ``if TYPE_CHECKING:`` blocks too)."""
    modules = _find_modules(root, packages)
    imports: list[Import] = []
    for module, path in modules.items():
        reader = _ImportReader(module, path, root, modules, type_checking=type_checking)
        reader.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        imports.extend(reader.found)
    imports.sort(key=lambda imp: (imp.file, imp.line, imp.target))
    return Tree(root=root, modules=modules, imports=imports)


def _find_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package in packages:
        if not (root / package / "__init__.py").is_file():
            continue
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _ImportReader(ast.NodeVisitor):
    """Collects the imports of our modules in one file, at any depth."""

    def __init__(
        self,
        module: str,
        path: Path,
        root: Path,
        modules: Mapping[str, Path],
        *,
        type_checking: bool = False,
    ) -> None:
        self._module = module
        self._read_type_checking = type_checking
        self._in_type_checking = False
        self._file = path.relative_to(root).as_posix()
        self._modules = modules
        parts = module.split(".")
        self._package = parts if path.name == "__init__.py" else parts[:-1]
        self.found: list[Import] = []

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            # Only for the type checker: never runs, so it is neither an arrow nor a cycle
            # at run time (read only when asked, marked as such).
            if self._read_type_checking:
                outer, self._in_type_checking = self._in_type_checking, True
                for statement in node.body:
                    self.visit(statement)
                self._in_type_checking = outer
            for statement in node.orelse:
                self.visit(statement)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.module, node.level)
        if base is None:
            return
        for alias in node.names:
            if alias.name == "*":
                self._add(base, base, node.lineno)
                continue
            full = f"{base}.{alias.name}"
            self._add(full if full in self._modules else base, full, node.lineno)

    def _absolute(self, module: str | None, level: int) -> str | None:
        if level == 0:
            return module
        drop = level - 1
        if drop >= len(self._package):
            return None  # beyond the top-level package: Python refuses it too
        anchor = self._package[: len(self._package) - drop]
        return ".".join([*anchor, module] if module else anchor)

    def _add(self, name: str, imported: str, line: int) -> None:
        parts = name.split(".")
        if parts[0] not in LAYERS:
            return
        while parts and ".".join(parts) not in self._modules:
            parts.pop()
        target = ".".join(parts)
        if target and target != self._module:
            self.found.append(
                Import(self._module, self._file, line, target, imported, self._in_type_checking)
            )


def arrow_problems(
    tree: Tree, allowed_sideways: Iterable[tuple[str, str]] = frozenset()
) -> list[str]:
    """Imports that point up the layers, or sideways along an arrow not in ``allowed_sideways``."""
    allowed = set(allowed_sideways)
    problems: list[str] = []
    for imp in tree.imports:
        source, target = imp.source_package, imp.target_package
        if source == target or LAYERS[target] < LAYERS[source]:
            continue
        said = f"{imp.where} imports {imp.target}: {source} must not import {target}"
        if source == "providers":
            problems.append(
                f"{said}; providers is the floor and imports none of our other packages: move "
                "what it needs down into providers, or pass the value in as an argument"
            )
        elif LAYERS[target] > LAYERS[source]:
            problems.append(f"{said}; pass the value in as an argument")
        elif (source, target) not in allowed:
            problems.append(
                f"{said} (they stand side by side on providers, and {source} -> {target} is not "
                "an allowed arrow); move the shared piece down into providers, or let "
                "agent.app pass it in"
            )
    return problems


def cycle_problems(tree: Tree) -> list[str]:
    """One message per group of modules that import each other, with one line per arrow."""
    first: dict[tuple[str, str], Import] = {}
    for imp in tree.imports:
        first.setdefault((imp.source, imp.target), imp)
    graph: dict[str, set[str]] = {module: set() for module in tree.modules}
    for source, target in first:
        graph[source].add(target)
    problems: list[str] = []
    for group in strongly_connected(graph):
        if len(group) < 2:
            continue
        arrows = [
            f"    {imp.where} imports {imp.target}"
            + (" (under TYPE_CHECKING)" if imp.type_checking else "")
            for (source, target), imp in sorted(first.items())
            if source in group and target in group
        ]
        problems.append(
            f"import cycle among {', '.join(sorted(group))}:\n"
            + "\n".join(arrows)
            + "\n  break it: move what they share into a module both can import, or pass it in"
            " (an import inside a function closes the loop too, and one under TYPE_CHECKING"
            " still ties the modules together)"
        )
    return problems


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` (Tarjan), in no particular order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph.get(node, ()):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component: set[str] = set()
            while not component or node not in component:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
            components.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return components


def shape_problems(tree: Tree, oversized: Mapping[str, int] | None = None) -> list[str]:
    """Too many modules directly in ``agent/``; modules over `MAX_LINES`.

    ``oversized`` lets a named file keep, but not grow past, the lines it has today (a
    ratchet); an entry for a file back under the limit is reported, so it gets removed.
    """
    oversized = oversized or {}
    problems: list[str] = []
    flat = sorted(
        path.name
        for path in (tree.root / "agent").glob("*.py")
        if path.name not in {"__init__.py", "__main__.py"}
    )
    if len(flat) > MAX_AGENT_ENTRY_POINTS:
        problems.append(
            f"agent/ holds {len(flat)} modules directly ({', '.join(flat)}); at most "
            f"{MAX_AGENT_ENTRY_POINTS} entry points belong there: move the rest into a wing "
            "(agent/engine, agent/setup, agent/terminal) or down into the package that owns the job"
        )
    for path in tree.modules.values():
        file = path.relative_to(tree.root).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        allowed = max(MAX_LINES, oversized.get(file, 0))
        if lines > allowed:
            grandfathered = f"; it may keep its {allowed} until split" if file in oversized else ""
            problems.append(
                f"{file} has {lines} lines (at most {MAX_LINES}{grandfathered}): split it where "
                "it does more than one job, into modules that each do one"
            )
        elif file in oversized and lines <= MAX_LINES:
            problems.append(
                f"{file} is down to {lines} lines: remove it from the oversized allowance, "
                "so it cannot grow back"
            )
    return problems


def private_problems(tree: Tree) -> list[str]:
    """Private names (a leading underscore) taken from another top-level package."""
    problems: list[str] = []
    for imp in tree.imports:
        if imp.source_package == imp.target_package:
            continue
        private = [part for part in imp.imported.split(".") if _is_private(part)]
        if private:
            problems.append(
                f"{imp.where} imports {imp.imported}: {private[0]} is private to "
                f"{imp.target_package}; make it public there (no underscore, in __all__), or "
                f"keep the code that needs it inside {imp.target_package}"
            )
    return problems


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
