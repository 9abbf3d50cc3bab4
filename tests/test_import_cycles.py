"""No import cycle between the modules of the package.

The graph: an edge A -> B for every import statement of module A that names module B, at module level or
inside a function (``from B import name`` names the submodule B.name when there is one, else B), except
those under ``if TYPE_CHECKING:``, which never run.  A cycle is a set of modules that reach each other.
The estimators' ``save`` and ``summary``, the one import allowed upward (docs/design.md), are edges like
any other: they form no cycle, since ``srtopt.persistence`` and ``srtopt.export`` import no module that
imports them (``persistence`` names the estimator classes by module and imports them with importlib when
it loads a model, and the package's public names are imported so on first use: importlib's imports are
not statements, and not edges)."""

from pathlib import Path

from .test_layers import PACKAGE, imports


def module_of(name: str, modules) -> str:
    """The module of the package that an imported ``name`` is or lies in: the longest prefix of it in
    ``modules``."""
    while name not in modules:
        name = name.rsplit(".", 1)[0]
    return name


def import_graph(package: Path = PACKAGE) -> dict[str, dict[str, list[int]]]:
    """{module: {module it imports: [lines]}} of every module of ``package``."""
    found = dict(imports(path, package.parent, runtime=True) for path in sorted(package.rglob("*.py")))
    graph = {module: {} for module in found}
    for module, targets in found.items():
        for target, line, _ in targets:
            graph[module].setdefault(module_of(target, found), []).append(line)
    return graph


def reachable(graph, start: str) -> set[str]:
    """The modules ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def cycles(graph) -> list[tuple[str, ...]]:
    """The import cycles of ``graph``: each set of modules that import each other (a module that imports
    itself too), sorted."""
    reach = {module: reachable(graph, module) for module in graph}
    return sorted({tuple(sorted(other for other in reach[module] if module in reach[other]))
                   for module in graph if module in reach[module]})


def test_no_module_imports_itself_through_others():
    graph = import_graph()
    found = cycles(graph)
    edges = [f"{a} -> {b} (line {', '.join(map(str, graph[a][b]))})" for cycle in found for a in cycle
             for b in cycle if b in graph[a]]
    assert found == [], "import cycles:\n" + "\n".join(edges)


def test_the_estimators_forwarders_are_edges_of_the_graph():
    """save and summary import layer 7 inside the method: counted, and no cycle runs through them."""
    graph = import_graph()
    assert "srtopt.persistence" in graph["srtopt.estimators.reading"]
    assert "srtopt.export" in graph["srtopt.estimators.soft_tree"]


def test_the_checker_finds_a_cycle_through_a_function_and_ignores_type_checking(tmp_path):
    package = tmp_path / "srtopt"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("from . import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from .c import thing\n")
    (package / "sub" / "c.py").write_text("from srtopt.sub.a import x\n")
    (package / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .e import y\n"
                                  "else:\n    from .sub import a\n")
    (package / "e.py").write_text("from .d import z\n")
    graph = import_graph(package)
    assert graph["srtopt.sub.b"] == {"srtopt.sub.c": [2]} and graph["srtopt.d"] == {"srtopt.sub.a": [5]}
    assert cycles(graph) == [("srtopt.sub.a", "srtopt.sub.b", "srtopt.sub.c")]
