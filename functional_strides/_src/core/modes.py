"""The merge of flat modes shared by CuTe's ``coalesce``, the view rules and the canonical form
(pure Python, no ``jax``)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["coalesce_modes"]


def coalesce_modes(shape: Iterable[int], stride: Iterable[int]) -> list[tuple[int, int, tuple[int, ...]]]:
    """Merge flat modes (column-major order: mode 0 innermost) into the fewest modes with the same map.

    Mode ``j`` joins the run ending at mode ``i`` when ``shape[i'] * stride[i'] == stride[j]`` for
    the run so far; extent-1 modes never break a run and belong to no run.

    Args:
      shape, stride: flat sequences of ints of equal length.
    Returns:
      ``[(extent, stride, members), ...]``: each merged mode with the input modes it spans
      (``members`` ascending). Empty when every extent is 1.
    Example:
      >>> coalesce_modes((2, 1, 3, 4), (1, 9, 2, 12))
      [(6, 1, (0, 2)), (4, 12, (3,))]

    Semantics: the loop of CuTe ``coalesce``; PyTorch's dim merging reads it in reverse."""
    out: list[tuple[int, int, tuple[int, ...]]] = []
    for i, (n, d) in enumerate(zip(shape, stride, strict=True)):
        if n == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d:
            m, e, members = out[-1]
            out[-1] = (m * n, e, (*members, i))
        else:
            out.append((n, d, (i,)))
    return out
