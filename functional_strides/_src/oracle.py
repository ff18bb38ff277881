"""The implementation of :mod:`functional_strides.oracle` (its public names are documented there)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .core.errors import LayoutError, StorageError

__all__ = [
    "element_indices",
    "has_internal_overlap",
    "materialize",
    "overlaps",
    "scatter",
]


def _parts(layout: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    if isinstance(layout, tuple):
        shape, strides, offset = layout
    else:
        shape, strides, offset = layout.shape, layout.strides, layout.offset
    shape, strides = tuple(int(n) for n in shape), tuple(int(s) for s in strides)
    if len(shape) != len(strides):
        raise LayoutError(f"oracle: shape {shape} and strides {strides} differ in length; give one "
                          "stride per dim.")
    return shape, strides, int(offset)


def _in_bounds(op: str, idx: np.ndarray, n: int) -> None:
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise StorageError(f"oracle.{op}: the view addresses storage indices {int(idx.min())} to "
                           f"{int(idx.max())}, outside a storage of {n} elements (indices 0 to {n - 1}).")


def element_indices(layout: Any) -> np.ndarray:
    """Storage index of every element of a view, in row-major order of the view.

    Element ``(i_0, ..., i_k)`` of the view lies at storage index ``offset + sum_d i_d *
    strides[d]`` (strides and offset in elements), enumerated one coordinate at a time.

    Args:
      layout: a :class:`functional_strides.Layout` or a tuple ``(shape, strides, offset)``
        of ints (a concrete offset; no bounds are checked).
    Returns:
      A 1-D ``int64`` array of ``prod(shape)`` storage indices (empty for a size-0 dim;
      one index, the offset, for rank 0).
    Raises:
      LayoutError: strides and shape of different lengths. A tuple that does not unpack
        into three parts raises Python's ``ValueError``, and an entry that ``int()`` refuses
        its ``TypeError``/``ValueError``.
    Example:
      >>> element_indices(((2, 3), (1, 2), 1)).tolist()
      [1, 3, 5, 2, 4, 6]
      >>> element_indices(fs.Layout((2, 0), (3, 1))).tolist()
      []

    Semantics: the addressing of ``torch.as_strided(storage, shape, strides, offset)``,
    written out from the definition."""
    shape, strides, offset = _parts(layout)
    out = [offset + sum(i * s for i, s in zip(coord, strides, strict=True))
           for coord in itertools.product(*(range(n) for n in shape))]
    return np.asarray(out, dtype=np.int64)


def materialize(storage: np.ndarray, layout: Any) -> np.ndarray:
    """Dense array of shape ``layout.shape`` read from 1-D ``storage`` through ``layout``.

    ``out[i_0, ..., i_k] = storage[offset + sum_d i_d * strides[d]]`` (elements), gathered
    with the indices of :func:`element_indices`.

    Args:
      storage: a 1-D array (any dtype) of ``n`` elements.
      layout: a :class:`functional_strides.Layout` or a tuple ``(shape, strides, offset)``.
    Returns:
      A new NumPy array of shape ``layout.shape`` and the dtype of ``storage``.
    Raises:
      ValueError: ``storage`` is not 1-D (the message gives its shape).
      StorageError: an element's storage index is outside ``[0, n)`` (the message names the
        lowest and the highest index the view addresses).
      LayoutError: strides and shape of different lengths.
    Example:
      >>> materialize(np.arange(6.0), ((2, 2), (1, 2), 1)).tolist()
      [[1.0, 3.0], [2.0, 4.0]]
      >>> materialize(np.arange(6.0), ((2, 2), (1, 2), 3))
      Traceback (most recent call last):
      ...
      functional_strides.StorageError: oracle.materialize: the view addresses storage indices 3 to 6, ...

    Semantics: ``torch.as_strided(storage, shape, strides, offset)`` (values, copied), with
    the bounds check PyTorch makes; ``numpy.lib.stride_tricks.as_strided`` reads the same
    elements without one."""
    storage = np.asarray(storage)
    if storage.ndim != 1:
        raise ValueError(f"oracle.materialize: storage must be 1-D, got shape {storage.shape}")
    shape, _, _ = _parts(layout)
    idx = element_indices(layout)
    _in_bounds("materialize", idx, storage.shape[0])
    return storage[idx].reshape(shape)


def has_internal_overlap(layout: Any) -> bool:
    """True when two elements of the layout address the same storage index (brute force).

    Enumerates every storage index (:func:`element_indices`) and looks for a repeat: exact,
    whatever the strides (0, negative, interleaved), in time and memory linear in
    ``prod(shape)``.

    Args:
      layout: a :class:`functional_strides.Layout` or a tuple ``(shape, strides, offset)``.
    Returns:
      ``bool``: ``False`` for a view of at most one element.
    Raises:
      Nothing of its own: the errors of :func:`element_indices` for a malformed layout.
    Example:
      >>> has_internal_overlap(((2, 3), (1, 1), 0)), has_internal_overlap(((2, 3), (3, 1), 0))
      (True, False)

    Semantics: the exact answer to PyTorch's internal-overlap check
    (``at::has_internal_overlap``, which may answer "too hard" where this enumerates)."""
    idx = element_indices(layout)
    return len(np.unique(idx)) != len(idx)


def overlaps(a: Any, b: Any) -> bool:
    """True when two layouts over one storage share a storage index (brute force).

    Intersects the storage indices of both views (:func:`element_indices`): exact, in time
    and memory linear in the two element counts.

    Args:
      a: a :class:`functional_strides.Layout` or a tuple ``(shape, strides, offset)``
        (strides and offset in elements).
      b: another, over the same storage, likewise.
    Returns:
      ``bool``: ``False`` when either view is empty.
    Raises:
      Nothing of its own: the errors of :func:`element_indices` for a malformed layout.
    Example:
      >>> evens, odds = ((3,), (2,), 0), ((3,), (2,), 1)
      >>> overlaps(evens, odds), overlaps(evens, ((2,), (1,), 3))
      (False, True)

    Semantics: ``numpy.shares_memory`` (exact) for two views of one buffer."""
    return bool(np.intersect1d(element_indices(a), element_indices(b)).size)


def scatter(storage: np.ndarray, layout: Any, src: np.ndarray, mode: str = "set") -> np.ndarray:
    """New storage after writing ``src`` (broadcast to the view's shape) through ``layout``.

    ``mode="set"``: elements are written one by one in row-major order of the view, so where
    several address one slot the last one wins (PyTorch's CPU result). ``mode="add"``:
    every element adds its value (overlap-add). ``"mul"``, ``"min"``, ``"max"`` likewise
    combine every contribution.

    Args:
      storage: a 1-D array of ``n`` elements; not modified.
      layout: a :class:`functional_strides.Layout` or a tuple ``(shape, strides, offset)``
        whose storage indices lie in ``[0, n)``.
      src: values broadcastable to ``layout.shape`` (NumPy's rules), cast on assignment to
        the storage dtype (a float into an int storage truncates, as NumPy assigns).
      mode: ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"``.
    Returns:
      A new NumPy array: a copy of ``storage`` (same shape and dtype) with the writes applied.
    Raises:
      LayoutError: an unknown ``mode``, or strides and shape of different lengths.
      StorageError: the view addresses an index outside ``[0, n)`` (both ends named).
      ValueError: ``src`` that does not broadcast to ``layout.shape`` (NumPy's message).
    Example:
      >>> scatter(np.zeros(4), ((3,), (0,), 1), np.array([1.0, 2.0, 3.0])).tolist()   # last wins
      [0.0, 3.0, 0.0, 0.0]
      >>> scatter(np.zeros(4), ((2, 2), (1, 1), 0), 1.0, mode="add").tolist()          # overlap-add
      [1.0, 2.0, 1.0, 0.0]

    Semantics: ``mode="set"``: ``torch.as_strided(storage, ...).copy_(src)`` on CPU (the
    last element in row-major order wins); ``"add"``/``"mul"``/``"min"``/``"max"``:
    ``numpy.add.at``/``multiply.at``/``minimum.at``/``maximum.at`` at the view's indices."""
    if mode not in ("set", "add", "mul", "min", "max"):
        raise LayoutError(f"oracle.scatter: unknown mode {mode!r}; use 'set', 'add', 'mul', 'min' or 'max'.")
    out = np.array(storage, copy=True)
    shape, _, _ = _parts(layout)
    values = np.broadcast_to(np.asarray(src), shape).reshape(-1)
    idx = element_indices(layout)
    _in_bounds("scatter", idx, out.shape[0])
    for i, v in zip(idx, values, strict=True):
        if mode == "set":
            out[i] = v
        elif mode == "add":
            out[i] = out[i] + v
        elif mode == "mul":
            out[i] = out[i] * v
        elif mode == "min":
            out[i] = min(out[i], v)
        else:
            out[i] = max(out[i], v)
    return out
