"""The pure core imports no jax: the modules that define semantics (the layout record, the
view algebra, the canonical form, overlap analysis, CuTe's algebra, the oracle) are plain
Python and NumPy, and import only each other. Their imports are read from the source with
``ast`` (``sys.modules`` cannot tell, since the package's ``__init__`` imports jax)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "functional_strides"
PURE = (
    "_canonical", "_checks", "_cute_divide", "_cute_int_tuple", "_cute_layout", "_cute_swizzle",
    "_dfs", "_docs", "_errors", "_lattice", "_layout", "_memory_format", "_numpy_views",
    "_caches", "_overlap", "_strategies", "_typing", "oracle", "views",
)
# C extensions of the pure core (source ``<name>.c``; they include only Python's and C's headers)
PURE_NATIVE = ("_dfs_native",)


def _imports(module: str) -> list[tuple[int, str]]:
    """Every module ``module`` imports, at any depth of its code: ``(level, name)``, where a
    relative import has ``level >= 1`` and names the sibling module it imports from."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level and not node.module:  # from . import x, y
                found += [(node.level, alias.name) for alias in node.names]
            else:
                found.append((node.level, node.module or ""))
    return found


@pytest.mark.parametrize("module", PURE)
def test_pure_modules_import_no_jax_and_only_pure_siblings(module):
    imports = _imports(module)
    jax = [name for level, name in imports if level == 0 and name.split(".")[0] in ("jax", "jaxlib")]
    assert not jax, f"{module}.py imports {jax}"
    siblings = {name.split(".")[0] for level, name in imports if level == 1}
    allowed = set(PURE + PURE_NATIVE)
    assert siblings <= allowed, f"{module}.py imports {sorted(siblings - allowed)} from the array layer"


def test_the_list_of_pure_modules_is_current():
    assert all((PACKAGE / f"{module}.py").exists() for module in PURE)
    for module in PURE_NATIVE:
        includes = re.findall(r'^#include\s+[<"]([^>"]+)', (PACKAGE / f"{module}.c").read_text(), re.M)
        assert includes and set(includes) <= {"Python.h", "math.h", "stdint.h", "string.h"}, includes
