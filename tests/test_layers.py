"""The layering of docs/design.md: a module imports only from its own layer and the layers below.
The estimators' ``save`` and ``summary`` forward to the reading layer inside the method (so
importing an estimator never loads it): those two are the only imports allowed upward."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "srtopt"
LAYERS = {"_spec": 0, "_io": 0, "_version": 0, "_announce": 0, "_stack": 0, "tree": 1, "view": 1, "kernels": 2,
          "routing": 2, "bases": 2, "leaf_model": 2, "linalg": 2, "encoding": 2, "inputs": 2, "models": 3, "solvers": 4, "training": 5, "milo": 5, "estimators": 6}  # anything else: 7, reading and tools
FORWARDERS = {"save", "summary"}


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], 7) if len(parts) > 1 else 7


def imports(path: Path, root: Path = PACKAGE.parent, runtime: bool = False):
    """(module name, [(imported name, line, enclosing function or None)]) for every import of srtopt in
    ``path``, a file of the package under ``root``: ``import a.b`` names a.b, ``from a import b`` a.b (a
    submodule or a name of a; :func:`tests.test_import_cycles.module_of` tells which).  ``runtime``: without
    the imports under ``if TYPE_CHECKING:``, which never run."""
    name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if runtime and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from visit(ast.Module(child.orelse, []), function)  # only an else branch runs
                continue
            if isinstance(child, ast.Import):
                yield from ((a.name, child.lineno, function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - child.level + 1] + ([base] if base else []))
                yield from ((f"{base}.{a.name}", child.lineno, function) for a in child.names)
            yield from visit(child, inner)

    return name, [(t, line, f) for t, line, f in visit(ast.parse(path.read_text()), None)
                  if t == "srtopt" or t.startswith("srtopt.")]


def test_no_import_runs_back_up_the_layers():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, found = imports(path)
        for target, line, function in found:
            if layer(target) > layer(module) and not (module.startswith("srtopt.estimators") and function in FORWARDERS):
                upward.append(f"{module}:{line} imports {target}")
    assert upward == []


def test_the_checker_resolves_relative_imports_inside_functions(tmp_path):
    source = tmp_path / "srtopt" / "models" / "thing.py"
    source.parent.mkdir(parents=True)
    source.write_text("from ..tree import Tree\n\ndef f():\n    from ..export import summary\n")
    name, found = imports(source, tmp_path)
    assert name == "srtopt.models.thing"
    assert found == [("srtopt.tree.Tree", 1, None), ("srtopt.export.summary", 4, "f")]
    assert [layer(t) for t, _, _ in found] == [1, 7] and layer(name) == 3
