"""Imports run one way, down the layers written in ARCHITECTURE.md ("Layers").

An AST pass over every module of the package, module-level and function-level
imports alike (a lazy import still couples two modules), checks:

1. no import reaches a higher layer (the message names file, line, both layers);
2. no private name (``_x``), and no private module, is imported across packages;
3. imports of a sibling module (same package) sit at module level, where the
   graph is visible; lazy imports are for third-party weight only.

Known exceptions in modules other owners are changing are listed with their
owner; an entry that no longer matches anything fails too, so the lists only
shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bayescal"

#: The layer order of ARCHITECTURE.md, lowest first. A module may import its own
#: layer or lower ones. ``api`` is the top-level facade ``bayescal/__init__.py``.
LAYERS = (
    "foundation",
    "data",
    "summaries",
    "scale",
    "channels",
    "bayes",
    "metrics",
    "recal",
    "ambiguity",
    "plotting",
    "report",
    "api",
    "cli",
    "bench",
)
RANK = {name: i for i, name in enumerate(LAYERS)}

FOUNDATION = {"errors", "dims", "_random", "_json", "_typing", "_blas", "base", "flags", "display"}
FOUNDATION |= {"interrupts", "progress", "options"}
DATA = {"data", "examples", "simulate"}
SAME_NAME = {"summaries", "scale", "channels", "bayes", "metrics", "recal", "ambiguity"}
SAME_NAME |= {"plotting", "bench"}

#: Sibling imports inside functions, kept for now: (file, imported module) -> owner.
LAZY_SIBLING_EXCEPTIONS = {
    # issue 24 (fast start): the audit's stages pull SciPy, numba and the sampler; a refused
    # --out, --priors or data file is answered before they are imported
    ("report/cli_run.py", "bayescal.report.audit"): "late import: argument errors answer fast",
}

#: Upward imports kept for now: (file, imported module) -> owner and the fix.
UPWARD_EXCEPTIONS = {}

#: Private names imported across packages, kept for now: (file, module, name) -> owner.
PRIVATE_EXCEPTIONS = {}


def layer_of(module: str) -> str:
    """The layer of a dotted module name inside the package."""
    parts = module.split(".")
    if parts == ["bayescal"]:
        return "api"
    top = parts[1]
    if top in ("cli", "__main__") or (top == "report" and len(parts) > 2 and "cli" in parts[2]):
        return "cli"
    if top in FOUNDATION:
        return "foundation"
    if top in DATA:
        return "data"
    if top in SAME_NAME or top == "report":
        return top
    raise AssertionError(f"module {module} has no layer: add it to tests/test_layers.py")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").exists() or (PACKAGE.parent / rel).is_dir()


#: The imports of each file of the package as read from disk, parsed once per session: the
#: per-module checks, the exception lists and the import graph all walk every module (three
#: AST passes of the whole package were about 8 CPU s).
_IMPORTS_OF_FILE: dict[Path, list[tuple[int, str, str | None, bool]]] = {}


def imports(path: Path, text: str | None = None) -> list[tuple[int, str, str | None, bool]]:
    """(line, imported module, imported name or None, at module level) per bayescal import.

    Module level means outside every function (an ``if`` or ``try`` at module level counts).
    A file read from disk (no ``text``) is parsed once; given text is always parsed.
    """
    if text is not None:
        return list(_parse_imports(path, text))
    if path not in _IMPORTS_OF_FILE:
        _IMPORTS_OF_FILE[path] = list(_parse_imports(path, path.read_text(encoding="utf-8")))
    return _IMPORTS_OF_FILE[path]


def _parse_imports(path: Path, text: str):
    tree = ast.parse(text, filename=str(path))
    in_function = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for inner in ast.walk(node)
    }
    here = module_name(path)
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "bayescal":
                    yield node.lineno, alias.name, None, id(node) not in in_function
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".") if is_package else here.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "bayescal":
                continue
            for alias in node.names:
                # ``from bayescal import data`` imports a subpackage, not the facade
                sub = f"{source}.{alias.name}"
                target = sub if _is_module(sub) else source
                yield node.lineno, target, alias.name, id(node) not in in_function


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def check_file(path: Path, text: str | None = None) -> list[str]:
    """Every violation in one file (its text may be given), as readable lines."""
    rel = path.relative_to(PACKAGE).as_posix()
    here = module_name(path)
    mine = layer_of(here)
    problems = []
    for line, target, name, at_top in imports(path, text):
        theirs = layer_of(target)
        allowed_version = target == "bayescal" and name == "__version__"
        upward = RANK[theirs] > RANK[mine] and (rel, target) not in UPWARD_EXCEPTIONS
        if here != "bayescal" and not allowed_version and upward:
            problems.append(
                f"bayescal/{rel}:{line}: layer '{mine}' imports {target} from the higher layer "
                f"'{theirs}' (layers run {' -> '.join(LAYERS)}; move the code or invert the call)"
            )
        leaf = target.split(".")[-1]
        cross = package_of(target) != package_of(here)
        if cross and name and name.startswith("_") and name != "__version__":
            key = (rel, target, name)
            if key not in PRIVATE_EXCEPTIONS:
                problems.append(
                    f"bayescal/{rel}:{line}: imports the private name {name} from {target} "
                    "across packages; make it public or keep it inside its package"
                )
        if cross and leaf.startswith("_") and leaf not in FOUNDATION and leaf != "__init__":
            problems.append(
                f"bayescal/{rel}:{line}: imports the private module {target} across packages"
            )
        if (
            not at_top
            and package_of(target) == package_of(here)
            and target != here
            and (rel, target) not in LAZY_SIBLING_EXCEPTIONS
        ):
            problems.append(
                f"bayescal/{rel}:{line}: imports its sibling {target} inside a function; "
                "sibling imports belong at module level (lazy imports are for third-party weight)"
            )
    return problems


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_imports_follow_the_layers(path):
    problems = check_file(path)
    assert not problems, "\n".join(problems)


def test_exception_lists_are_still_needed():
    """An exception nobody needs any more must be deleted (the lists only shrink)."""
    lazy_seen, private_seen, upward_seen = set(), set(), set()
    for path in MODULES:
        rel = path.relative_to(PACKAGE).as_posix()
        here = module_name(path)
        for _, target, name, at_top in imports(path):
            if not at_top and package_of(target) == package_of(here):
                lazy_seen.add((rel, target))
            private_seen.add((rel, target, name))
            if RANK[layer_of(target)] > RANK[layer_of(here)] and name != "__version__":
                upward_seen.add((rel, target))
    stale = [k for k in LAZY_SIBLING_EXCEPTIONS if k not in lazy_seen]
    stale += [k for k in PRIVATE_EXCEPTIONS if k not in private_seen]
    stale += [k for k in UPWARD_EXCEPTIONS if k not in upward_seen]
    assert not stale, f"stale exceptions in tests/test_layers.py: {stale}"


def test_every_module_has_a_layer_and_the_order_is_documented():
    for path in MODULES:
        layer_of(module_name(path))
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for name in ("foundation", "summaries", "scale", "plotting", "report", "cli", "bench"):
        assert name in text


def test_the_checker_catches_an_upward_import():
    """The checker itself: a data-layer module importing the report is named, with the line."""
    source = "import numpy\n\n\ndef f():\n    from bayescal.report.core import Report\n"
    problems = check_file(PACKAGE / "data" / "container.py", source)
    assert problems == [
        "bayescal/data/container.py:5: layer 'data' imports bayescal.report.core from the "
        f"higher layer 'report' (layers run {' -> '.join(LAYERS)}; move the code or invert "
        "the call)"
    ]
    private = (
        "from bayescal.scale._deps import require\nfrom bayescal.recal.base import _FIT_HINT\n"
    )
    problems = check_file(PACKAGE / "report" / "core.py", private)
    assert len(problems) == 2 and "private module bayescal.scale._deps" in problems[0]
    assert "private name _FIT_HINT" in problems[1]
    lazy = "def f():\n    from bayescal.report.figures import figure\n"
    (problem,) = check_file(PACKAGE / "report" / "core.py", lazy)
    assert "sibling bayescal.report.figures inside a function" in problem


#: Import cycles kept for now: the modules of one cycle -> owner and the fix. Listed cycles must
#: still exist (test below), so the list only shrinks.
CYCLE_EXCEPTIONS: dict[frozenset[str], str] = {}


def import_graph() -> dict[str, set[str]]:
    """Module -> modules it imports (module-level and inside functions alike).

    The facade ``bayescal/__init__.py`` is left out: it imports nothing at run time (its
    imports sit under ``TYPE_CHECKING``), and ``from bayescal import __version__`` reads
    only the facade.
    """
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        here = module_name(path)
        if here == "bayescal":
            continue
        targets = graph.setdefault(here, set())
        for _, target, _, _ in imports(path):
            if target not in (here, "bayescal"):
                targets.add(target)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in graph), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(frozenset(component))
    return cycles


def test_import_cycles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_cycles(graph) == [frozenset({"a", "b", "c"})]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    """No two modules import each other, directly or around a loop (issue 21)."""
    cycles = import_cycles(import_graph())
    new = [sorted(c) for c in cycles if c not in CYCLE_EXCEPTIONS]
    assert not new, "import cycles (break them by moving the shared code down a layer): " + str(new)
    stale = [sorted(c) for c in CYCLE_EXCEPTIONS if c not in cycles]
    assert not stale, f"stale cycle exceptions in tests/test_layers.py: {stale}"
