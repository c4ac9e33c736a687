"""No import circle in service/ or protocol/ (README.md, Testing: "no import circle in
`service/` or `protocol/`").

A circle of module-level imports works only in the order someone happened to import
the modules in, and hides which module is built on which. This reads the sources
(nothing is imported): an edge ``a -> b`` is an import of ``b`` that runs when ``a``
is imported. Imports inside functions and under ``if TYPE_CHECKING:`` run later or
never, so they are not edges of that graph, but each has a test of its own: moved
there, an import still closes the circle it hides. Importing ``pkg.mod`` from outside
``pkg`` also runs ``pkg/__init__.py``, so it is an edge to ``pkg`` too.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("service", "protocol")


def module_names() -> dict[str, Path]:
    """Every module of PACKAGES by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _run_at_import(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of a module body that run when it is imported."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _run_at_import(node.body)
            yield from _run_at_import(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _run_at_import(block)
        elif isinstance(node, ast.With):
            yield from _run_at_import(node.body)


def _all_imports(body: list[ast.stmt], type_checking: bool = False
                 ) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module body, those inside functions too (those under
    ``if TYPE_CHECKING:`` only if ``type_checking``)."""
    for node in body:
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_checking:
            yield from _all_imports(node.orelse)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        else:
            inner = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
            yield from _all_imports(inner, type_checking)


def _with_packages(importer: str, target: str, modules: dict[str, Path]) -> Iterator[str]:
    """``target`` and the packages above it that importing it runs first (those that
    do not already hold ``importer``)."""
    parts = target.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if name in modules and not (importer == name or importer.startswith(name + ".")):
            yield name


def imports_of(name: str, path: Path, modules: dict[str, Path], deferred: bool = False,
               type_checking: bool = False) -> set[str]:
    """The modules of PACKAGES that importing ``name`` imports (``deferred``: or that
    its functions import when they run; ``type_checking``: or that a type checker
    imports for it, under ``if TYPE_CHECKING:``)."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    body = ast.parse(path.read_text(), str(path)).body
    every = deferred or type_checking
    for node in (_all_imports(body, type_checking) if every else _run_at_import(body)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                if not is_package:
                    anchor = anchor[:-1]
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in modules else base)
        for target in targets:
            out.update(_with_packages(name, target, modules))
    out.discard(name)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def import_graph(deferred: bool = False, type_checking: bool = False) -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, modules, deferred, type_checking)
            for name, path in modules.items()}


def describe(graph: dict[str, set[str]], found: list[list[str]]) -> str:
    def line(module: str, circle: list[str]) -> str:
        return f"{module} imports {', '.join(sorted(graph[module] & set(circle)))}"

    return "\n\n  ".join("\n  ".join(line(m, c) for m in c) for c in found)


def test_the_import_graph_sees_the_imports_it_should() -> None:
    graph = import_graph()
    assert "service.store.keys" in graph["service.store.games"]
    assert "protocol.codec" in graph["protocol"]  # a relative import
    assert "service.engine" in graph["service.domain.games"]  # a package, through its __init__


def test_circles_are_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_service_or_protocol_imports_itself_back() -> None:
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles:\n  " + describe(graph, found)


def test_no_import_inside_a_function_closes_a_circle() -> None:
    # An import moved into a function to dodge a circle only hides it.
    graph = import_graph(deferred=True)
    found = circles(graph)
    assert not found, ("import circles through imports inside functions:\n  "
                       + describe(graph, found))


def test_no_import_for_the_type_checker_closes_a_circle() -> None:
    # A circle through ``if TYPE_CHECKING:`` still says that each module is built on the
    # other: the types they share belong in a module both can import.
    graph = import_graph(deferred=True, type_checking=True)
    found = circles(graph)
    assert not found, ("import circles through imports under TYPE_CHECKING:\n  "
                       + describe(graph, found))


def test_the_import_graph_sees_the_imports_for_the_type_checker() -> None:
    # position.py imports the commands only for its annotations.
    assert "service.engine.commands" not in import_graph(deferred=True)["service.engine.position"]
    assert "service.engine.commands" in import_graph(type_checking=True)["service.engine.position"]


# The pure parts: what each may import besides the standard library and itself.
PURE = {"service.engine": (), "service.solver": ("service.engine",)}


def absolute_imports(name: str, path: Path, type_checking: bool = False) -> set[str]:
    """Every name ``name`` imports, anywhere in it (under ``if TYPE_CHECKING:`` too only if
    ``type_checking``)."""
    anchor = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in _all_imports(ast.parse(path.read_text(), str(path)).body, type_checking):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif node.level:
            base = anchor[:len(anchor) - (node.level - 1)]
            out.add(".".join([*base, node.module] if node.module else base))
        else:
            out.add(node.module or "")
    return out


def test_the_engine_and_the_solver_import_only_the_standard_library_and_what_they_may() -> None:
    wrong: dict[str, set[str]] = {}
    for package, may in PURE.items():
        allowed = (package, *may)
        for name, path in module_names().items():
            if not (name == package or name.startswith(package + ".")):
                continue
            for imported in absolute_imports(name, path):
                top = imported.partition(".")[0]
                if top in sys.stdlib_module_names or top == "__future__" or any(
                        imported == a or imported.startswith(a + ".") for a in allowed):
                    continue
                wrong.setdefault(name, set()).add(imported)
    assert not wrong, f"the pure parts import outside the standard library: {wrong}"


# The wings of service/ (README.md, "The code"): what each may never import, anywhere in it,
# for the type checker too. The domain and the store know nothing of HTTP or sockets; the
# HTTP and socket sides reach the store only through the domain.
NEVER = {
    "service.domain": ("aiohttp", "service.web", "service.socket"),
    "service.store": ("aiohttp", "service.web", "service.socket", "service.domain"),
    "service.web": ("service.store",),
    "service.socket": ("service.store",),
}


def crossings(never: dict[str, tuple[str, ...]]) -> dict[str, set[str]]:
    """For each module of a wing, what it imports that its wing may never import."""
    wrong: dict[str, set[str]] = {}
    for name, path in module_names().items():
        for wing, banned in never.items():
            if name == wing or name.startswith(wing + "."):
                for imported in absolute_imports(name, path, type_checking=True):
                    if any(imported == b or imported.startswith(b + ".") for b in banned):
                        wrong.setdefault(name, set()).add(imported)
    return wrong


def test_the_wings_import_only_across_the_lines_the_readme_draws() -> None:
    wrong = crossings(NEVER)
    assert not wrong, "imports across the wings' lines:\n  " + "\n  ".join(
        f"{module} imports {', '.join(sorted(names))}" for module, names in sorted(wrong.items()))


def test_the_wings_rule_sees_a_crossing() -> None:
    # The handlers do import aiohttp, and the domain imports the store: banned for the test's
    # sake, each is seen.
    found = crossings({"service.web.rest": ("aiohttp",),
                       "service.domain.games": ("service.store",)})
    assert "aiohttp" in found["service.web.rest"]
    assert any(n.startswith("service.store") for n in found["service.domain.games"])
