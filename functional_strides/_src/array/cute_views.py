"""CuTe's tiled views of a ``StridedArray`` (:func:`logical_divide`, :func:`tile`)."""

from __future__ import annotations

from typing import Any

from ..core.errors import LayoutError
from ..cute import divide as _divide
from ..cute.flat import from_layout, to_layout
from ..cute.int_tuple import is_int, is_tuple
from ..cute.layout import Layout, make_layout, size
from .strided import StridedArray

__all__ = ["logical_divide", "tile"]


def _divided(x: Any, tiler: Any, op: str) -> tuple[StridedArray, Layout]:
    if not isinstance(x, StridedArray):
        raise LayoutError(f"{op}: x must be a StridedArray (got {type(x).__name__}); use "
                          "functional_strides.from_array(x) first.")
    if x.layout.is_empty:
        raise LayoutError(f"{op}: array of shape {x.shape} is empty; there is nothing to tile.")
    if is_int(tiler) or isinstance(tiler, Layout):
        tiler = (tiler,)
    if isinstance(tiler, list):
        tiler = tuple(tiler)
    if not is_tuple(tiler) or len(tiler) > x.ndim or len(tiler) == 0:
        raise LayoutError(f"{op}: tiler must give one tile (an int or a cute.Layout) for each of the first "
                          f"1..{x.ndim} dims (got tiler={tiler!r} for shape {x.shape}).")
    modes = from_layout(x.layout)
    divided = _divide.logical_divide(modes, tiler)
    for d, t in enumerate(tiler):
        if size(divided[d]) != x.shape[d]:
            raise LayoutError(
                f"{op}: tile {t!r} does not divide dim {d} of extent {x.shape[d]} (layout {x.layout}); the "
                f"tiles would cover {size(divided[d])} elements. Pick tiles whose size divides the extent, "
                "or narrow()/pad the array first.")
    return x, divided


def logical_divide(x: Any, tiler: Any) -> Any:
    """CuTe's ``logical_divide``: of two layouts, the algebra; of a ``StridedArray``, a tiled view.

    For a ``StridedArray`` ``x`` and a tiler with one entry per leading dim (an int ``t``
    meaning the tile ``t:1``, or a CuTe Layout), dim ``d`` becomes the dims ``(tile_d,
    rest_d)`` (each flattened): for int tiles, ``y[a, i, b, j] == x[i*t0 + a, j*t1 + b]``.
    Dims past the tiler are kept.

    Args:
      x: a ``StridedArray`` (or a CuTe Layout; then ``tiler`` is ``layoutB``).
      tiler: an int, a Layout, or a tuple of them (one per leading dim / mode).
    Returns:
      A view sharing ``x``'s storage and offset (a Layout for Layout input).
    Raises:
      LayoutError: the tile does not divide the dim (message gives extent and tile), an
        empty array, a tiler longer than the rank, or the algebra's errors.
    Example:
      >>> import numpy as np, functional_strides as fs
      >>> x = fs.from_array(np.arange(24).reshape(4, 6))
      >>> y = logical_divide(x, (2, 3))
      >>> y.shape, y.stride(), int(np.asarray(y)[1, 1, 2, 1])   # x[1*2 + 1, 1*3 + 2]
      ((2, 2, 3, 2), (6, 12, 1, 3), 23)

    Semantics: CuTe ``logical_divide(tensor, tiler)``; ``pycute.logical_divide`` for layouts."""
    if not isinstance(x, StridedArray):
        return _divide.logical_divide(x, tiler)
    x, divided = _divided(x, tiler, "logical_divide")
    return x._view(to_layout(divided, x.layout.offset))


def tile(x: StridedArray, tiler: Any) -> StridedArray:
    """Blocked view of ``x``: the tile index dims first, then the dims inside one tile.

    With int tiles ``(t0, t1)`` on an ``(M, N)`` array the view has shape
    ``(M // t0, N // t1, t0, t1)`` and ``y[i, j]`` is the ``(i, j)``-th block
    ``x[i*t0:(i+1)*t0, j*t1:(j+1)*t1]``. CuTe Layout tiles give strided or permuted tiles.
    Dims past the tiler join the tile-index dims.

    Args:
      x: a ``StridedArray``.
      tiler: an int, a CuTe Layout or a tuple of them, one per
        leading dim.
    Returns:
      A view (no copy) of rank ``rest dims + tile dims``: CuTe's ``zipped_divide`` with its two
      halves swapped, flattened.
    Raises:
      LayoutError: as :func:`logical_divide`.
    Example:
      >>> import numpy as np, functional_strides as fs
      >>> x = fs.from_array(np.arange(16).reshape(4, 4))
      >>> np.asarray(tile(x, (2, 2))[1, 0]).tolist()
      [[8, 9], [12, 13]]

    Semantics: CuTe ``zipped_divide(tensor, tiler)``; ``tile(x, t)[i, j] == local_tile(x, t, (i, j))``."""
    x, divided = _divided(x, tiler, "tile")
    r = len(_as_tuple(tiler))
    tiles = [divided[d][0] for d in range(r)]
    rests = [divided[d][1] for d in range(r)]
    kept = [divided[d] for d in range(r, len(divided))]
    return x._view(to_layout(make_layout(*rests, *kept, *tiles), x.layout.offset))


def _as_tuple(tiler: Any) -> tuple[Any, ...]:
    if is_int(tiler) or isinstance(tiler, Layout):
        return (tiler,)
    return tuple(tiler)
