"""Exception hierarchy of ``functional_strides``.

Every error the library raises on bad input derives from :class:`LayoutError`, which is a
``ValueError``; a dimension or index out of range also derives from ``IndexError`` so that
code written for PyTorch or NumPy (``except IndexError``) keeps working, and an argument of
the wrong Python type (a float size, a string dim) also derives from ``TypeError``, as in
PyTorch.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ForkError",
    "IndexTypeError",
    "LayoutError",
    "LayoutTypeError",
    "OutOfRangeError",
    "OverlapError",
    "StorageError",
    "TooHardError",
    "ViewError",
]


class LayoutError(ValueError):
    """A layout, or an operation on one, is invalid.

    Raised for malformed ``(shape, strides, offset)`` records (rank mismatch, negative or
    non-integer entries) and for every refused view op. Subclasses narrow the cause.
    """


class ViewError(LayoutError):
    """The requested view cannot alias the storage without copying (e.g. ``view`` of a
    transposed layout); ``reshape`` or ``contiguous()`` give a copy instead."""


class StorageError(LayoutError):
    """A layout addresses storage that does not exist (past the end), or the storage itself
    is malformed (not 1-D, index dtype too small)."""


class OutOfRangeError(LayoutError, IndexError):
    """A dimension or index is out of range; also an ``IndexError`` like PyTorch's."""


class OverlapError(LayoutError):
    """A write goes through a view in which several elements share one storage slot."""


class LayoutTypeError(LayoutError, TypeError):
    """An argument has the wrong Python type: a float, string, bool or ``None`` where a size,
    stride, offset, dim or step (an integer) is expected. Also a ``TypeError``, like
    PyTorch's argument-parser errors (``x.view(2.0)``, ``x.select(0, 1.5)``)."""


class IndexTypeError(LayoutTypeError, IndexError):
    """An index of a type that cannot index (a float, a string, an arbitrary object), as in
    ``x[1.5]``. Also an ``IndexError`` (PyTorch raises ``IndexError: only integers, slices
    ... are valid indices``) and a ``TypeError`` (Python's ``list[1.5]``)."""


#: NumPy's "exceeded max_work" (``numpy.exceptions.TooHardError``; ``numpy.TooHardError`` before 1.25).
_NumPyTooHardError = getattr(np, "exceptions", np).TooHardError  # pyright: ignore[reportAttributeAccessIssue]


class TooHardError(LayoutError, _NumPyTooHardError):
    """An overlap query was not decided within its ``max_work`` (``fs.overlaps(a, b,
    max_work=n)``, ``has_internal_overlap(..., max_work=n)``), or the process could not
    allocate the memory the exact search keeps under its cap. Also NumPy's
    ``numpy.exceptions.TooHardError`` (a ``RuntimeError``), which ``shares_memory`` raises in
    the same case, so that either ``except`` catches it."""


class ForkError(LayoutError):
    """A call that would run JAX in a child of ``os.fork()`` forked after JAX's runtime had
    started in the parent: JAX's threads are not in the child, so the call would hang. Worker
    processes started with the ``spawn`` or ``forkserver`` method run the library normally."""


for _cls in (LayoutError, ViewError, StorageError, OutOfRangeError, OverlapError, LayoutTypeError,
             IndexTypeError, TooHardError, ForkError):
    _cls.__module__ = "functional_strides"  # the public name, in tracebacks and reprs
del _cls
