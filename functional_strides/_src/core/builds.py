"""Loading the compiled extensions: an in-place build older than its source is not used.

An editable install (``pip install -e .``) or ``python setup.py build_ext --inplace`` leaves
each compiled extension beside its source, in a checkout (the package's folder next to
``setup.py``). After an edit of that source the old binary would still import and run the old
code; :func:`load_extension` compares modification times first and, where a source is newer
than the binary, warns with the command that rebuilds it and does not load it (the library
then takes its XLA or Python path, as without the extension). An installed package is not a
checkout: its files' times are those of the install, in whatever order the installer wrote
them, so nothing is compared there.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["REBUILD", "StaleBuildWarning", "in_checkout", "load_extension", "stale_sources"]

#: The commands that rebuild the extensions of a checkout in place.
REBUILD = "python -m pip install -e . (or python setup.py build_ext --inplace) in the checkout"


class StaleBuildWarning(RuntimeWarning):
    """A compiled extension is older than its source beside it: it was not loaded."""


def stale_sources(binary: str | os.PathLike, sources: Sequence[str | os.PathLike]) -> list[str]:
    """The sources (those that exist) modified after ``binary``.

    Args:
      binary: the path of the built extension (``.so``).
      sources: the paths of the files it is built from (sources and headers).
    Returns:
      The names of the existing sources newer than ``binary``, in the order given; empty when
      ``binary`` is missing or none is newer.
    Example:
      >>> stale_sources("/no/such/extension.so", ["/no/such/source.c"])
      []
    """
    try:
        built = os.stat(binary).st_mtime
    except OSError:
        return []
    newer = []
    for source in sources:
        try:
            if os.stat(source).st_mtime > built:
                newer.append(os.fspath(source))
        except OSError:
            continue
    return newer


def in_checkout(folder: str | os.PathLike) -> bool:
    """Whether ``folder``, inside a package, lies in a source checkout: the folder above the
    top-level package (the first one up without an ``__init__.py``) holds ``setup.py``.

    Example:
      >>> in_checkout("/no/such/package/folder")
      False
    """
    top = Path(folder)
    while (top / "__init__.py").is_file():
        top = top.parent
    return top != Path(folder) and (top / "setup.py").is_file()


def load_extension(module: str, sources: Sequence[str]) -> ModuleType | None:
    """Import the compiled extension ``module``, unless it is missing, or stale in a checkout.

    Args:
      module: its dotted name (``"functional_strides._src.native._copy_native"``).
      sources: file names of its sources, relative to the extension's folder.
    Returns:
      The module; None when it is not built, or when the package is a checkout
      (:func:`in_checkout`) and a source beside the extension is newer (then a
      :class:`StaleBuildWarning` names the sources and the rebuild command).
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent
    newer = stale_sources(spec.origin, [folder / name for name in sources]) if in_checkout(folder) else []
    if newer:
        warnings.warn(
            f"{module}: the built extension {spec.origin} is older than its source "
            f"({', '.join(Path(n).name for n in newer)}), so it was not loaded and the library runs "
            f"without it. Rebuild it: {REBUILD}.", StaleBuildWarning, stacklevel=3)
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
