"""The engine and the solver have no import circles, and import nothing of the service.

Imports are read from the source (not by importing it): every import statement
counts, at module level or inside a function (a lazy import does not hide a
circle), except those under ``if TYPE_CHECKING:``, which are for annotations only
and never run.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("service.engine", "service.solver")
# What each package may import besides the standard library and itself.
MAY_IMPORT = {"service.engine": (), "service.solver": ("service.engine",)}


def _modules(package: str) -> dict[str, Path]:
    base = ROOT.joinpath(*package.split("."))
    out = {}
    for path in sorted(base.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: anywhere but under ``if TYPE_CHECKING``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for other in node.orelse:
                yield from _runtime_imports(ast.Module(body=[other], type_ignores=[]))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _runtime_imports(node)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_names(module: str, path: Path) -> set[str]:
    """The absolute names ``module`` imports: ``from .x import y`` gives ``pkg.x.y``
    and ``pkg.x`` (whichever is a module is the one that counts)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            parts = parts[: len(parts) - node.level + 1]
            base = ".".join([*parts, base] if base else parts)
        names.add(base)
        names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports (a name that is not a module
    counts as its package's; a package's own ``__init__`` is not counted for its
    submodules, as Python runs it before them anyway)."""
    graph = {}
    for module, path in modules.items():
        targets = set()
        for imported in _imported_names(module, path):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != module:
                targets.add(imported)
        graph[module] = targets
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The import circles: the strongly connected components of more than one module
    (Tarjan's algorithm), each sorted, and a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_circle_through_a_lazy_import_and_ignores_type_checking(
    tmp_path,
):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("def f():\n    from . import c\n")  # lazy: still counts
    (pkg / "c.py").write_text("from pkg import a\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .e import E\n"
    )
    (pkg / "e.py").write_text("from .d import D\n")
    modules = {
        f"pkg.{p.stem}" if p.stem != "__init__" else "pkg": p for p in sorted(pkg.glob("*.py"))
    }
    assert cycles(import_graph(modules)) == [["pkg.a", "pkg.b", "pkg.c"]]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package):
    modules = {m: p for pkg in PACKAGES for m, p in _modules(pkg).items()}
    graph = import_graph(modules)
    inside = [c for c in cycles(graph) if any(m.startswith(package) for m in c)]
    assert not inside, f"import circles in {package}: {inside}"


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_only_the_standard_library_and_what_it_may(package):
    allowed = (package, *MAY_IMPORT[package])
    wrong = {}
    for module, path in _modules(package).items():
        for name in _imported_names(module, path):
            top = name.partition(".")[0]
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            if not any(name == a or name.startswith(a + ".") for a in allowed):
                wrong.setdefault(module, set()).add(name)
    assert not wrong, f"{package} imports outside the standard library and {allowed}: {wrong}"
