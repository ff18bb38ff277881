"""The public names of ``functional_strides``, as a user reaches them.

Every name of ``functional_strides.__all__`` and of the front-end modules' ``__all__``
(``functional_strides.views``, ``.numpy``, ``.cute``, ``.ascend``, ``.sharded``,
``.oracle``), and the methods and properties of ``functional_strides.StridedArray``. The API
reference has one page per entry (``docs/_ext/api_pages.py``), titled by its public name;
the tests of the site check that every entry is in a group of ``docs/api.md``.

Imports nothing from Sphinx, so the tests can use it without the ``docs`` extra.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path
from typing import Any

PACKAGE = "functional_strides"
#: The front-end modules, each documented by its own ``__all__``.
FRONT_ENDS = ("views", "numpy", "cute", "ascend", "sharded", "oracle", "testing")
#: Classes whose members get a page each (the rest are documented on their class's page).
MEMBER_PAGES = ("StridedArray",)
#: Special methods that are part of a class's public surface (indexing, calling).
PUBLIC_SPECIALS = ("__getitem__", "__call__")


@dataclasses.dataclass(frozen=True)
class Entry:
    """One public object: ``name`` is its public full name, ``kind`` one of ``"module"``,
    ``"class"``, ``"exception"``, ``"function"``, ``"method"``, ``"property"``,
    ``"attribute"`` or ``"data"``; ``origin`` is ``(module, name)`` where a data object is
    bound in the source (its ``#:`` comment is its docstring)."""

    name: str
    kind: str
    obj: Any = dataclasses.field(compare=False, repr=False)
    origin: tuple[str, str] | None = None

    @property
    def module(self) -> str:
        """The public module the entry is reached from (for a member, its class's module)."""
        parts = self.name.split(".")
        return ".".join(parts[:-2] if self.kind in ("method", "property", "attribute") else parts[:-1])

    @property
    def short(self) -> str:
        """The name relative to :attr:`module` (``unfold``, ``StridedArray.unfold``)."""
        return self.name[len(self.module) + 1:]


def modules() -> dict[str, Any]:
    """Public module name -> module: the package and its front ends."""
    out = {PACKAGE: importlib.import_module(PACKAGE)}
    for name in FRONT_ENDS:
        out[f"{PACKAGE}.{name}"] = importlib.import_module(f"{PACKAGE}.{name}")
    return out


def _origins(module: Any) -> dict[str, tuple[str, str]]:
    """Public name -> (source module, name) from the ``from X import a as b`` lines of a front end."""
    tree = ast.parse(Path(module.__file__).read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level:
            base = module.__name__ if module.__file__.endswith("__init__.py") else module.__package__
            parts = base.split(".")
            parent = ".".join(parts[: len(parts) - node.level + 1])
            source = f"{parent}.{node.module}" if node.module else parent
            for alias in node.names:
                out[alias.asname or alias.name] = (source, alias.name)
    return out


def _kind(obj: Any) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj):
        return "function"
    return "data"


def class_members(cls: type) -> list[tuple[str, str]]:
    """(name, kind) of a class's own public members in definition order: methods,
    properties and attributes (slots and dataclass fields); no inherited ones."""
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_") and name not in PUBLIC_SPECIALS:
            continue
        if isinstance(value, property):
            out.append((name, "property"))
        elif isinstance(value, (staticmethod, classmethod)) or inspect.isfunction(value):
            out.append((name, "method"))
        elif type(value).__name__ in ("member_descriptor", "getset_descriptor"):
            out.append((name, "attribute"))
    return out


def entries() -> list[Entry]:
    """Every public entry, modules first, then each module's names in ``__all__`` order."""
    out = []
    for modname, module in modules().items():
        if modname != PACKAGE:
            out.append(Entry(modname, "module", module))
        origins = _origins(module)
        for name in module.__all__:
            obj = getattr(module, name)
            kind = _kind(obj)
            if kind == "module":
                continue  # the front ends are entries of their own
            out.append(Entry(f"{modname}.{name}", kind, obj, origins.get(name)))
            if modname == PACKAGE and name in MEMBER_PAGES:
                for member, mkind in class_members(obj):
                    out.append(Entry(f"{modname}.{name}.{member}", mkind, getattr(obj, member)))
    return out


def names() -> list[str]:
    """The public full names of :func:`entries`."""
    return [e.name for e in entries()]
