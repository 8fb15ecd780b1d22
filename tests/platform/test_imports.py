"""Imports run one way: no module of the apps imports a module that imports it back.

The graph is read from the source with ``ast``, so it includes imports inside functions (the
usual way a cycle is hidden) and imports under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("platform", "courses", "notebook", "newsletter")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    """Every Python module of the apps, by dotted name."""
    return {
        _module_name(path): path
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def _targets(node: ast.AST, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The project modules one import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return {_nearest(name, known) for name in names} - {""}
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    found = set()
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        found.add(submodule if submodule in known else _nearest(base, known))
    return found - {""}


def _nearest(name: str, known: set[str]) -> str:
    """The module ``name`` names, or its closest known parent; "" outside the project."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= _targets(node, name, is_package, known)
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_import_graph_reads_function_level_and_relative_imports():
    graph = import_graph()
    # tasks import their services at the top; the admin starts tasks from inside a method.
    assert "newsletter.services.sending" in graph["newsletter.tasks"]
    assert "notebook.tasks" in graph["notebook.admin"]
    # `from .. import x` in a template tag library resolves to the app's module.
    assert "newsletter.services.subscriptions" in graph["newsletter.templatetags.newsletter_tags"]


def test_import_graph_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_import_graph_of_the_apps_has_no_cycles():
    assert cycles(import_graph()) == []
