"""Overlap analysis of layouts: does a layout address one storage slot twice?

Pure Python, no ``jax`` import. The sufficient tests here are exact in the direction they
claim (``True`` from :func:`is_non_overlapping_sufficient` proves there is no overlap).
"""

from __future__ import annotations

from .layout import Layout

__all__ = ["is_monotone", "is_non_overlapping_sufficient"]


def _live_dims(layout: Layout) -> list[tuple[int, int]]:
    """(extent, stride) of dims with extent > 1, in the layout's dim order."""
    return [(n, s) for n, s in zip(layout.shape, layout.strides) if n > 1]


def is_monotone(layout: Layout) -> bool:
    """True when the storage indices, read in row-major order, never decrease.

    Holds iff every dim's stride is at least the span of all later dims (size-1 dims
    ignored). Used to tell XLA's gather that its indices are sorted."""
    tail = 0
    for n, s in reversed(_live_dims(layout)):
        if s < tail:
            return False
        tail += (n - 1) * s
    return True


def is_non_overlapping_sufficient(layout: Layout) -> bool:
    """Fast proof of no internal overlap (``False`` means "not proven", not "overlaps").

    Sort the dims of extent > 1 by stride; each stride must exceed the largest index
    reachable with the smaller-stride dims. Empty layouts never overlap.

    Semantics: the sufficient test of PyTorch's historical MemoryOverlap note."""
    if layout.is_empty:
        return True
    reach = 0
    for n, s in sorted(_live_dims(layout), key=lambda p: p[1]):
        if s <= reach:
            return False
        reach += (n - 1) * s
    return True
