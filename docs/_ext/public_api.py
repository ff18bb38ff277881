"""The public names of ``functional_strides``, as a user reaches them.

Every name of ``functional_strides.__all__`` and of the front-end modules' ``__all__``
(``functional_strides.views``, ``.numpy``, ``.cute``, ``.ascend``, ``.sharded``,
``.oracle``), and the methods and properties of ``functional_strides.StridedArray``, inherited
ones (the in-place methods) included. The API
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
#: Special methods that are part of a class's public surface (indexing, item assignment, calling,
#: and the augmented operators that write in place through a view of a ref).
PUBLIC_SPECIALS = ("__getitem__", "__setitem__", "__call__",
                   "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__")


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
    """(name, kind) of a class's public members: methods, properties and attributes (slots and
    dataclass fields), its own in definition order, then those it inherits from the package's
    classes (``StridedArray``'s in-place methods, ``copy_``, ``add_``, ``x[i] = v``, come from a
    mixin), in method resolution order; nothing from ``object`` or other libraries."""
    out, seen = [], set()
    for klass in cls.__mro__:
        if klass is not cls and not klass.__module__.startswith(PACKAGE):
            continue
        for name, value in vars(klass).items():
            if name in seen or (name.startswith("_") and name not in PUBLIC_SPECIALS):
                continue
            kind = _member_kind(cls, name, value)
            if kind is not None:
                seen.add(name)
                out.append((name, kind))
    return out


def _member_kind(cls: type, name: str, value: Any) -> str | None:
    if isinstance(value, property):
        return "property"
    if isinstance(value, (staticmethod, classmethod)) or inspect.isfunction(value):
        return "method"
    if type(value).__name__ in ("member_descriptor", "getset_descriptor"):
        return "attribute"
    if hasattr(value, "__get__") and inspect.isfunction(getattr(cls, name, None)):
        return "method"  # a descriptor that gives the class its function (the ref-only methods)
    return None


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
