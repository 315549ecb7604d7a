"""Write the API reference's pages from the public modules' ``__all__`` (a Sphinx extension).

The reference follows what the package exports, not a hand-kept module list: private modules
are merged and renamed while the public names stay. On ``config-inited`` (before Sphinx lists
the sources and autosummary writes its stub pages) this writes ``docs/api/generated/``:

- ``index.rst``: one row per public module with its summary line;
- one page per public module: its docstring, then autosummary tables of its classes,
  exceptions, functions and constants. A name is documented once, on the page of the
  public module it belongs to (the longest public prefix of where it is defined); other
  modules that re-export it (``bayescal.Annotations`` is ``bayescal.data.Annotations``)
  list it in a table that links there. A name bound to an object another name of the same
  module already documents (``MulticlassAnnotations = Annotations``) is listed as an alias.

Cross-references in docstrings name objects the way users import them (``bayescal.summarize``,
``bayescal.data.files.read_csv``, ``Report.save``). On ``missing-reference`` a Python
reference that Sphinx could not resolve is looked up by importing it: an object this reference
documents links to its page (under the name it is documented by), an object that exists but is
not part of the public API (a private helper or constant) is shown as code without a link, and a
name that does not exist stays unresolved, so the ``-W`` build fails on it.

Public modules: ``bayescal`` and every module or package directly under it whose name does
not start with ``_``, that defines ``__all__``, and that is not part of the command line's
own machinery (:data:`APPLICATION`).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer

PACKAGE = "bayescal"

#: Modules that serve the command line (argument handling, terminal display, signals,
#: benchmarks); users reach them through ``bayescal ...`` on the command line, not by import.
APPLICATION = frozenset({"cli", "bench", "display", "interrupts", "progress"})

#: Constants whose ``repr`` is longer than this are shown by their keys (mappings) or not at all.
MAX_VALUE_REPR = 70

KINDS = ("Classes", "Exceptions", "Functions", "Constants")


@dataclass(eq=False)
class Entry:
    """One name of a module's ``__all__`` and where it is documented."""

    name: str
    obj: object
    kind: str
    home: str  # full name of the page that documents the object
    alias_of: str | None = None


@dataclass
class ModulePage:
    module: ModuleType
    entries: list[Entry] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.module.__name__


def public_modules() -> list[ModuleType]:
    """``bayescal`` first, then its public modules in alphabetical order."""
    package = importlib.import_module(PACKAGE)
    modules = [package]
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in APPLICATION:
            continue
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        if hasattr(module, "__all__"):
            modules.append(module)
    return modules


def exported(module: ModuleType) -> list[tuple[str, object]]:
    return [(name, getattr(module, name)) for name in module.__all__ if not name.startswith("__")]


def kind_of(obj: object) -> str:
    if inspect.isclass(obj):
        return "Exceptions" if issubclass(obj, BaseException) else "Classes"
    if callable(obj):
        return "Functions"
    return "Constants"


def documented_identity(obj: object) -> bool:
    """Classes and functions are the same object wherever exported; constants (small ints,
    strings) may be equal by accident, so each module documents its own."""
    return inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj)


def home_of(obj: object, exporters: list[str]) -> str:
    """The exporting public module that is the longest prefix of where ``obj`` is defined."""
    defined_in = getattr(obj, "__module__", "") or ""
    candidates = [
        m for m in exporters if m != PACKAGE and (defined_in == m or defined_in.startswith(m + "."))
    ]
    if candidates:
        return max(candidates, key=len)
    non_root = [m for m in exporters if m != PACKAGE]
    return non_root[0] if non_root else exporters[0]


def collect(modules: list[ModuleType]) -> list[ModulePage]:
    exporters: dict[int, list[str]] = {}
    for module in modules:
        for _, obj in exported(module):
            if documented_identity(obj):
                exporters.setdefault(id(obj), []).append(module.__name__)
    pages = []
    documented: dict[int, str] = {}  # id -> full name of its documentation
    for module in modules:
        page = ModulePage(module)
        for name, obj in exported(module):
            kind = kind_of(obj)
            if not documented_identity(obj):
                page.entries.append(Entry(name, obj, kind, module.__name__))
                continue
            home = home_of(obj, exporters[id(obj)])
            entry = Entry(name, obj, kind, home)
            if home == module.__name__:
                first = documented.setdefault(id(obj), f"{home}.{name}")
                if first != f"{home}.{name}":
                    entry.alias_of = first
            page.entries.append(entry)
        pages.append(page)
    # Re-exports link to the name their home module documents the object under.
    for page in pages:
        for entry in page.entries:
            if entry.home != page.name and documented_identity(entry.obj):
                entry.alias_of = documented.get(id(entry.obj))
    return pages


def summary_line(module: ModuleType) -> str:
    doc = inspect.getdoc(module) or ""
    return doc.split("\n\n")[0].replace("\n", " ").strip()


def constant_source(module: ModuleType, name: str) -> str:
    """The module a package's ``__init__`` imports ``name`` from (for its ``#:`` comment)."""
    path = getattr(module, "__file__", None)
    if path:
        for node in ast.walk(ast.parse(Path(path).read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                if any((alias.asname or alias.name) == name for alias in node.names):
                    return node.module
    return module.__name__


def constant_block(module: ModuleType, entry: Entry) -> list[str]:
    try:
        docs = ModuleAnalyzer.for_module(constant_source(module, entry.name)).find_attr_docs()
    except PycodeError:  # no source to read the ``#:`` comment from
        docs = {}
    comment = docs.get(("", entry.name))
    lines = [f".. py:data:: {entry.name}"]
    value = entry.obj
    if len(repr(value)) <= MAX_VALUE_REPR:
        lines.append(f"   :value: {value!r}")
    lines.append("")
    if comment:
        lines += [f"   {line}" if line else "" for line in comment]
    if isinstance(value, dict) and len(repr(value)) > MAX_VALUE_REPR:
        keys = ", ".join(f"``{key!r}``" for key in value)
        lines += ["", f"   A mapping with the keys {keys}."]
    return lines + [""]


def heading(text: str, char: str) -> list[str]:
    return [text, char * len(text), ""]


def module_page(page: ModulePage) -> str:
    lines = heading(page.name, "=")
    lines += [f".. automodule:: {page.name}", "   :no-members:", ""]
    lines += [f".. currentmodule:: {page.name}", ""]
    for kind in KINDS:
        entries = [e for e in page.entries if e.kind == kind]
        if not entries:
            continue
        lines += heading(kind, "-")
        if kind == "Constants":
            for entry in entries:
                lines += constant_block(page.module, entry)
            continue
        own = [e for e in entries if e in own_entries(page)]
        linked = [e for e in entries if e not in own]
        # Re-exports under the documented name: a table linking to their page.
        same = [e for e in linked if e.alias_of and e.alias_of.rsplit(".", 1)[1] == e.name]
        aliases = [e for e in linked if e not in same]
        if own:
            # stub pages from docs/_templates/autosummary/<class|exception|function>.rst
            lines += [".. autosummary::", "   :toctree: .", ""]
            lines += [f"   {e.name}" for e in own] + [""]
        if same:
            # names below the current module are written relative to it (autosummary's rule)
            prefix = page.name + "."
            lines += [".. autosummary::", ""]
            lines += [f"   ~{e.alias_of.removeprefix(prefix)}" for e in same if e.alias_of] + [""]
        if aliases:
            lines += ["Other names:", "", ".. list-table::", "   :widths: 30 70", ""]
            for entry in aliases:
                role = "func" if kind == "Functions" else "class"
                lines += [f"   * - ``{entry.name}``", f"     - alias of :{role}:`{entry.alias_of}`"]
            lines.append("")
    return "\n".join(lines)


def index_page(pages: list[ModulePage]) -> str:
    lines = heading("API reference", "=")
    lines += [
        "Every public name of the package, from the docstrings. ``import bayescal as bc``",
        "gives the names of the first page; the modules below hold the rest.",
        "",
        ".. list-table::",
        "   :widths: 30 70",
        "",
    ]
    for page in pages:
        lines += [f"   * - :doc:`{page.name}`", f"     - {summary_line(page.module)}"]
    lines += ["", ".. toctree::", "   :hidden:", ""]
    lines += [f"   {page.name}" for page in pages]
    return "\n".join(lines) + "\n"


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def own_entries(page: ModulePage) -> list[Entry]:
    """The entries this page documents (autosummary writes one stub page for each)."""
    return [
        e for e in page.entries if e.kind != "Constants" and e.home == page.name and not e.alias_of
    ]


def index_objects() -> list[ModulePage]:
    """The public modules' pages; fills :data:`CANONICAL` and :data:`PUBLIC_MODULES`."""
    pages = collect(public_modules())
    PUBLIC_MODULES.clear()
    PUBLIC_MODULES.update(page.name for page in pages)
    CANONICAL.clear()
    CANONICAL.update(
        (id(e.obj), f"{page.name}.{e.name}") for page in pages for e in own_entries(page)
    )
    return pages


def generate(app: Sphinx, config: object = None) -> None:
    out = Path(app.srcdir) / "api" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    pages = index_objects()
    texts = {"index.rst": index_page(pages)}
    texts.update({f"{page.name}.rst": module_page(page) for page in pages})
    stubs = {f"{page.name}.{e.name}.rst" for page in pages for e in own_entries(page)}
    # Pages of names no longer exported would be orphans (a -W error): the folder holds
    # exactly what the current __all__ lists.
    for path in out.iterdir():
        if path.name not in texts and path.name not in stubs:
            path.unlink()
    for name, text in texts.items():
        write_if_changed(out / name, text)


#: id of each documented class or function -> the full name its page documents it under
CANONICAL: dict[int, str] = {}
#: names of the public modules (each has a page)
PUBLIC_MODULES: set[str] = set()
_MISSING = object()


def lookup(path: str) -> object:
    """The object a dotted path names (modules imported as needed), or ``_MISSING``."""
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            fields = getattr(obj, "__dataclass_fields__", {})
            if hasattr(obj, name):
                obj = getattr(obj, name)
            elif inspect.isclass(obj) and (name in fields or name in obj.__annotations__):
                obj = None  # an instance attribute declared on the class
            else:
                return _MISSING
        return obj
    return _MISSING


@functools.cache
def all_modules() -> list[str]:
    package = importlib.import_module(PACKAGE)
    return [
        m.name
        for m in pkgutil.walk_packages(package.__path__, f"{PACKAGE}.")
        if not m.name.endswith("__main__")
    ]


def locate(target: str, module: str | None, cls: str | None) -> str | None:
    """The full path of what ``target`` names from a docstring in ``module`` / ``cls``."""
    candidates = [target]
    if module and cls:
        candidates.append(f"{module}.{cls}.{target}")
    if module:
        candidates.append(f"{module}.{target}")
    for candidate in candidates:
        if candidate.split(".")[0] == PACKAGE and lookup(candidate) is not _MISSING:
            return candidate
    # A short name (``design_flags``, ``Report.save``): the one object of that name anywhere
    # in the package, if exactly one exists.
    found: dict[int, str] = {}
    for name in all_modules():
        obj = lookup(f"{name}.{target}")
        if obj is not _MISSING:
            found.setdefault(id(obj), f"{name}.{target}")
    return next(iter(found.values())) if len(found) == 1 else None


def documented_name(path: str) -> str | None:
    """The name this reference documents ``path`` under, if it documents it."""
    parts = path.split(".")
    if path in PUBLIC_MODULES:
        return path
    for split in range(len(parts), 0, -1):
        home = CANONICAL.get(id(lookup(".".join(parts[:split]))))
        if home is not None:
            return ".".join([home, *parts[split:]])
    return None


def resolve_missing(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    if node.get("refdomain") != "py":
        return None
    path = locate(node["reftarget"].lstrip("."), node.get("py:module"), node.get("py:class"))
    if path is None:
        return None  # unresolved: a warning, an error under -W
    name = documented_name(path)
    if name is not None:
        domain = env.get_domain("py")
        role = "mod" if name in PUBLIC_MODULES else "obj"
        ref = domain.resolve_xref(env, node["refdoc"], app.builder, role, name, node, contnode)
        if ref is not None:
            return ref
    return contnode  # exists but is not public: shown as code, without a link


def setup(app: Sphinx) -> dict:
    # On config-inited: before Sphinx lists the source files, so these pages are found and
    # autosummary (on builder-inited) writes the stub pages of the names they list.
    app.connect("config-inited", generate)
    app.connect("missing-reference", resolve_missing)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
