"""Exception hierarchy of ``functional_strides``.

Every error the library raises on bad input derives from :class:`LayoutError`, which is a
``ValueError``; a dimension or index out of range also derives from ``IndexError`` so that
code written for PyTorch or NumPy (``except IndexError``) keeps working.
"""

from __future__ import annotations

__all__ = [
    "LayoutError",
    "OutOfRangeError",
    "OverlapError",
    "StorageError",
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
