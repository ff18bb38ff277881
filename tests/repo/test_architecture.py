"""The tree shows the architecture, and the imports keep to it.

Every import of every module under ``functional_strides/`` is read from the source with
``ast`` (``sys.modules`` cannot tell: the package's ``__init__`` imports jax), at any depth of
the code (imports inside functions count) except under ``if TYPE_CHECKING:``. Then:

* ``_src/core/`` and ``_src/cute/`` (the pure core, whatever files are added to them) import
  no ``jax``; neither does the oracle, which imports nothing of the library but the core.
* The areas of ``_src/`` are layers: a module imports only from its own area and from the
  areas below it (:data:`LAYERS`), never from a public front end (``functional_strides.views``,
  ...), which only re-export.
* No import circle anywhere in the package.
* The example (``functional_strides/examples/``) uses the public API only.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "functional_strides"
SRC = PACKAGE / "_src"

#: The areas of ``_src/`` from the bottom up: each may import from those before it.
LAYERS = ("core", "cute", "oracle", "native", "lowering", "sharding", "array", "explain", "caches", "testing")
#: Areas that must not import jax.
PURE = ("core", "cute", "oracle")
#: Headers the pure core's C search may include.
PURE_HEADERS = {"Python.h", "math.h", "stdint.h", "string.h", "stdlib.h"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def imports_of(name: str) -> set[str]:
    """The absolute names of the modules (or packages) that module ``name`` imports."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    skip = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from pkg import mod`` imports the module ``pkg.mod`` where one exists
            subs = {f"{module}.{alias.name}" for alias in node.names} & MODULES.keys()
            found |= subs or {module}
    return found


def _library_imports(name: str) -> set[str]:
    return {m for m in imports_of(name) if m.split(".")[0] == "functional_strides" and m != name}


def _area(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "_src" else None


SRC_MODULES = sorted(m for m in MODULES if _area(m))


def test_every_src_module_is_in_a_layer():
    assert SRC_MODULES, "no modules found under functional_strides/_src"
    assert {_area(m) for m in SRC_MODULES} <= set(LAYERS), sorted({_area(m) for m in SRC_MODULES})
    assert {p.name for p in SRC.iterdir() if p.is_dir() and p.name != "__pycache__"} | {"oracle", "caches"} \
        == set(LAYERS)


@pytest.mark.parametrize("module", [m for m in SRC_MODULES if _area(m) in PURE])
def test_the_pure_core_imports_no_jax(module):
    jax = sorted(m for m in imports_of(module) if m.split(".")[0] in ("jax", "jaxlib"))
    assert not jax, f"{module} imports {jax}"


def test_the_oracle_imports_only_the_core():
    below = {_area(m) for m in _library_imports("functional_strides._src.oracle")}
    assert below <= {"core"}, below


@pytest.mark.parametrize("module", SRC_MODULES)
def test_imports_point_down_the_layers(module):
    own = LAYERS.index(_area(module))
    bad = []
    for target in sorted(_library_imports(module)):
        area = _area(target)
        if area is None:
            bad.append(f"{target} (a public front end or the package)")
        elif LAYERS.index(area) > own:
            bad.append(f"{target} (area {area!r} is above {_area(module)!r})")
    assert not bad, f"{module} imports " + "; ".join(bad)


def test_no_import_circles():
    graph = {m: _library_imports(m) & MODULES.keys() for m in MODULES}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if n.startswith(m + "."):
                continue  # a package importing its own submodule
            if state.get(n) == 1:
                cycle = path[path.index(n):] + [n]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_example_uses_the_public_api_only():
    examples = [m for m in MODULES if m.startswith("functional_strides.examples")]
    assert examples
    for module in examples:
        private = sorted(m for m in _library_imports(module)
                         if "._" in m and not m.startswith("functional_strides.examples"))
        assert not private, f"{module} imports {private}"


def test_front_ends_only_re_export():
    """The public modules bind names from ``_src`` and define nothing of their own."""
    for front in ("views", "numpy", "cute", "ascend", "sharded", "oracle", "testing"):
        tree = ast.parse((PACKAGE / f"{front}.py").read_text())
        defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
        assert not defined, f"functional_strides.{front} defines {defined}"


def test_the_pure_c_search_includes_only_c_headers():
    for source in (SRC / "core").rglob("*.c"):
        includes = re.findall(r'^#include\s+[<"]([^>"]+)', source.read_text(), re.M)
        assert includes and set(includes) <= PURE_HEADERS, (source.name, includes)


# a measured time or ratio in a comment rots with every release; the measurements live in
# benchmarks/ and its stored results, named from the code by the table that produced them
_MEASURED = re.compile(r"\b\d+(\.\d+)?(-\d+(\.\d+)?)? ?(ns|us|µs|ms)\b|\b\d+\.\d+(-\d+\.\d+)?x\b")


def _comments(path: Path) -> list[tuple[int, str]]:
    """The comment lines of a Python, C or C++ source (Python: ``#`` comments; C and C++: ``//``
    and ``/* */``), with their line numbers."""
    text = path.read_text()
    if path.suffix == ".py":
        import io
        import tokenize

        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]
    found = [(text.count("\n", 0, m.start()) + 1, m.group(0))
             for m in re.finditer(r"//[^\n]*|/\*.*?\*/", text, re.S)]
    return [(n + k, line) for n, block in found for k, line in enumerate(block.split("\n"))]


def test_no_measured_timings_in_source_comments():
    sources = [p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".c", ".cc", ".h")
               and "examples" not in p.parts]
    assert len(sources) > 40
    bad = [f"{p.relative_to(PACKAGE)}:{n}: {c.strip()}" for p in sources for n, c in _comments(p)
           if _MEASURED.search(c)]
    assert not bad, "\n".join(bad)


def test_the_design_note_names_every_file_of_the_tree():
    # docs/design.md's tree is the map a maintainer reads first: every source file is on it
    design = (PACKAGE.parent / "docs" / "design.md").read_text()
    tree = design[design.index("```text\nfunctional_strides/"):]
    tree = tree[:tree.index("\n```", 8)]
    names = {p.name for p in SRC.rglob("*") if p.suffix in (".py", ".c", ".cc", ".h", ".md")
             and p.name != "__init__.py"}
    assert len(names) > 50
    missing = sorted(n for n in names if not re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", tree)
                     and not (n == "README.md" and "README" in tree))
    assert not missing, f"docs/design.md's tree does not name {missing}"
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert all(f"{f}/" in tree for f in folders), folders


#: The studies of internal candidates (the evidence of the lowering's thresholds), the only
#: benchmarks that may import private modules.
STUDIES = {"lowering_choices.py", "write_choices.py"}


def test_benchmarks_import_private_modules_only_where_they_say_so():
    # benchmarks time what a user runs (public names); the two studies of internal candidates
    # may import private pieces, and say so at their top
    importing = set()
    for path in sorted((PACKAGE.parent / "benchmarks").glob("*.py")):
        text = path.read_text()
        imports = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom))]
        private = [n for n in imports if "._src" in (getattr(n, "module", None) or "")
                   or any("._src" in a.name for a in n.names)]
        doc = ast.get_docstring(ast.parse(text)) or ""
        if private:
            importing.add(path.name)
            assert "functional_strides._src" in "\n\n".join(doc.split("\n\n")[:3]), path.name
    assert importing <= STUDIES, sorted(importing - STUDIES)
