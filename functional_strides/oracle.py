"""Reference semantics in pure NumPy, written from the definitions (no ``jax`` import).

A layout ``(shape, strides, offset)`` reads ``out[i_0..i_k] = storage[offset + sum_d i_d *
strides[d]]`` (strides in elements). Tests compare every JAX result against these
functions, which enumerate indices explicitly and share no code with the lowering.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

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
    return tuple(int(n) for n in shape), tuple(int(s) for s in strides), int(offset)


def element_indices(layout: Any) -> np.ndarray:
    """Storage index of every element, in row-major order of the view (1-D int64)."""
    shape, strides, offset = _parts(layout)
    out = [offset + sum(i * s for i, s in zip(coord, strides, strict=False))
           for coord in itertools.product(*(range(n) for n in shape))]
    return np.asarray(out, dtype=np.int64)


def materialize(storage: np.ndarray, layout: Any) -> np.ndarray:
    """Dense array of shape ``layout.shape`` read from 1-D ``storage`` through ``layout``.

    Raises:
      IndexError: an element's storage index is outside ``[0, len(storage))``."""
    storage = np.asarray(storage)
    if storage.ndim != 1:
        raise ValueError(f"oracle.materialize: storage must be 1-D, got shape {storage.shape}")
    shape, _, _ = _parts(layout)
    idx = element_indices(layout)
    if idx.size and (idx.min() < 0 or idx.max() >= storage.shape[0]):
        raise IndexError(f"oracle.materialize: index {int(idx.max())} outside storage of "
                         f"{storage.shape[0]} elements")
    return storage[idx].reshape(shape)


def has_internal_overlap(layout: Any) -> bool:
    """True when two elements of the layout address the same storage index (brute force)."""
    idx = element_indices(layout)
    return len(np.unique(idx)) != len(idx)


def overlaps(a: Any, b: Any) -> bool:
    """True when two layouts over one storage share a storage index (brute force)."""
    return bool(np.intersect1d(element_indices(a), element_indices(b)).size)


def scatter(storage: np.ndarray, layout: Any, src: np.ndarray, mode: str = "set") -> np.ndarray:
    """New storage after writing ``src`` (broadcast to the view's shape) through ``layout``.

    ``mode="set"``: elements are written one by one in row-major order of the view, so where
    several address one slot the last one wins (PyTorch's CPU result). ``mode="add"``:
    every element adds its value (overlap-add). ``"mul"``, ``"min"``, ``"max"`` likewise
    combine every contribution."""
    out = np.array(storage, copy=True)
    shape, _, _ = _parts(layout)
    values = np.broadcast_to(np.asarray(src), shape).reshape(-1)
    for i, v in zip(element_indices(layout), values, strict=False):
        if mode == "set":
            out[i] = v
        elif mode == "add":
            out[i] = out[i] + v
        elif mode == "mul":
            out[i] = out[i] * v
        elif mode == "min":
            out[i] = min(out[i], v)
        elif mode == "max":
            out[i] = max(out[i], v)
        else:
            raise ValueError(f"oracle.scatter: unknown mode {mode!r}")
    return out
