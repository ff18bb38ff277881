"""The view rules that select part of a layout: ``narrow``, ``select``, ``unfold``, ``diagonal``,
``split``, ``chunk``, ``unbind`` and basic indexing (``getitem``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import IndexTypeError, LayoutError, OutOfRangeError
from ..layout import Layout, _trusted
from .common import _dynamic_offset, _index, _plain_key, _shifted_offset, _traced_int, canonical_dim
from .dims import unsqueeze

__all__ = ["chunk", "diagonal", "getitem", "narrow", "select", "split", "unbind", "unfold"]


def narrow(layout: Layout, dim: Any, start: Any, length: Any) -> Layout:
    """Elements ``start`` to ``start+length-1`` of ``dim`` (``start`` may be negative; a view).

    Forms: ``x.narrow(dim, start, length)``, ``fs.narrow(x, dim, start, length)``,
    ``views.narrow(layout, dim, start, length)``.

    A traced ``start`` (inside ``jit``/``vmap``) gives a view with a traced offset, clamped into
    ``[0, n - length]`` as ``jnp`` clamps traced indices (it cannot be checked); the offset is
    computed in int32 when every value fits, else in int64 under ``jax_enable_x64``.

    Args:
      dim: the dim to narrow.
      start: first element, in ``[-n, n]``.
      length: count >= 0.
    Returns:
      ``shape[dim] == length``, strides unchanged (elements), offset
      ``offset + start * strides[dim]``.
    Raises:
      LayoutError: rank 0, or a negative ``length``.
      OutOfRangeError: ``dim`` or ``start`` out of range, or ``start + length`` past the extent.
      StorageError: a traced ``start`` whose storage offsets exceed int32 while
        ``jax_enable_x64`` is off.
    Example:
      >>> x = fs.from_array(jnp.arange(12.0).reshape(3, 4))
      >>> y = x.narrow(1, 1, 2)
      >>> y.shape, y.stride(), y.storage_offset(), y.tolist()[0]
      ((3, 2), (4, 1), 1, [1.0, 2.0])

    Semantics: ``torch.narrow``."""
    if layout.ndim == 0:
        raise LayoutError(f"narrow: cannot be applied to a rank-0 layout (layout {layout}).")
    d = canonical_dim(dim, layout.ndim, op="narrow", layout=layout)
    length = _index("narrow", "length", length)
    n = layout.shape[d]
    if _traced_int(start):
        if not 0 <= length <= n:
            raise OutOfRangeError(f"narrow: length {length} does not fit in dim {d} of size {n} "
                                  f"(layout {layout}).")
        shape = (*layout.shape[:d], length, *layout.shape[d + 1:])
        return _trusted(shape, layout.strides, _dynamic_offset("narrow", layout, d, start, n - length))
    start = _index("narrow", "start", start)
    if not -n <= start <= n:
        raise OutOfRangeError(f"narrow: start out of range (expected to be in range of [{-n}, {n}], "
                              f"but got {start}) for dim {d} of layout {layout}.")
    if start < 0:
        start += n
    if length < 0:
        raise LayoutError(f"narrow: length must be non-negative (got length={length}, layout {layout}).")
    if start + length > n:
        raise OutOfRangeError(f"narrow: start ({start}) + length ({length}) exceeds dimension size "
                              f"({n}) of dim {d} of layout {layout}.")
    return _slice(layout, d, start, length, 1)

def _slice(layout: Layout, d: int, start: int, length: int, step: int, op: str = "narrow") -> Layout:
    shape = (*layout.shape[:d], length, *layout.shape[d + 1:])
    strides = (*layout.strides[:d], layout.strides[d] * step, *layout.strides[d + 1:])
    return _trusted(shape, strides, _shifted_offset(op, layout, start * layout.strides[d]))

def select(layout: Layout, dim: Any, index: Any) -> Layout:
    """Fix ``dim`` at ``index`` (negative wraps), dropping the dim (a view).

    Forms: ``x.select(dim, index)``, ``fs.select(x, dim, index)``, ``views.select(layout, dim, index)``.

    A traced ``index`` (inside ``jit``/``vmap``) gives a view with a traced offset, clamped into
    ``[0, n-1]`` as ``jnp`` clamps traced indices (it cannot be checked). The offset is computed
    in int32 when every value fits, else in int64 (under ``jax_enable_x64``); a stride-0 dim
    leaves the offset unchanged, whatever its extent.

    Args:
      dim: the dim to drop.
      index: in ``[-n, n)``, or a traced integer scalar.
    Returns:
      Rank ``ndim - 1``; offset ``offset + index * strides[dim]`` (elements).
    Raises:
      OutOfRangeError: rank 0, or ``dim`` or ``index`` out of range.
      StorageError: a traced ``index`` whose storage offsets exceed int32 while
        ``jax_enable_x64`` is off.
      LayoutTypeError: ``index`` is not an integer.
    Example:
      >>> x = fs.from_array(jnp.arange(12.0).reshape(3, 4))
      >>> y = x.select(1, -1)
      >>> y.shape, y.stride(), y.storage_offset(), y.tolist()
      ((3,), (4,), 3, [3.0, 7.0, 11.0])

    Semantics: ``torch.select``."""
    return _select(layout, dim, index, "select")

def _select(layout: Layout, dim: Any, index: Any, op: str) -> Layout:
    if layout.ndim == 0:
        raise OutOfRangeError(f"select: cannot be applied to a rank-0 layout (layout {layout}).")
    d = canonical_dim(dim, layout.ndim, op="select", layout=layout)
    n = layout.shape[d]
    if _traced_int(index):
        if n == 0:
            raise OutOfRangeError(f"select: cannot select from the empty dim {d} (layout {layout}).")
        return _trusted(layout.shape[:d] + layout.shape[d + 1:], layout.strides[:d] + layout.strides[d + 1:],
                        _dynamic_offset(op, layout, d, index, n - 1))
    index = _index("select", "index", index)
    if not -n <= index < n:
        raise OutOfRangeError(f"select: index {index} out of range for tensor of size "
                              f"{list(layout.shape)} at dimension {d} (layout {layout}).")
    if index < 0:
        index += n
    return _trusted((*layout.shape[:d], *layout.shape[d + 1:]),
                  (*layout.strides[:d], *layout.strides[d + 1:]),
                  _shifted_offset(op, layout, index * layout.strides[d]))

def unfold(layout: Layout, dimension: Any, size: Any, step: Any) -> Layout:
    """Sliding windows of ``size`` elements every ``step`` along ``dimension`` (a view):
    that dim becomes ``(n - size) // step + 1`` windows (stride ``step * s``) and a new last dim
    of extent ``size`` (stride ``s``) is appended. Windows overlap when ``step < size``.

    Forms: ``x.unfold(dimension, size, step)``, ``fs.unfold(x, dimension, size, step)``,
    ``views.unfold(layout, dimension, size, step)``.

    Args:
      dimension: the dim to window.
      size: window length, ``0 <= size <= n``.
      step: hop >= 1.
    Returns:
      Rank ``ndim + 1``; offset unchanged.
    Raises:
      LayoutError: ``size`` larger than the extent or negative; ``step < 1``.
      OutOfRangeError: ``dimension`` out of range.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0))
      >>> y = x.unfold(0, 3, 2)
      >>> y.shape, y.stride(), y.tolist()
      ((2, 3), (2, 1), [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]])

    Semantics: ``torch.Tensor.unfold`` (NumPy's ``sliding_window_view`` with a step)."""
    d = canonical_dim(dimension, layout.ndim, op="unfold", layout=layout)
    size, step = _index("unfold", "size", size), _index("unfold", "step", step)
    n = layout.shape[d] if layout.ndim else 1
    if size > n:
        raise LayoutError(f"unfold: size {size} exceeds extent {n} of dim {d} (layout {layout}); "
                          "the window must fit in the dim.")
    if size < 0:
        raise LayoutError(f"unfold: size is {size} but must be >= 0 (layout {layout}).")
    if step < 1:
        raise LayoutError(f"unfold: step is {step} but must be > 0 (layout {layout}).")
    if layout.ndim == 0:
        return _trusted((size,), (1,), layout.offset)
    s = layout.strides[d]
    shape = (*layout.shape[:d], (n - size) // step + 1, *layout.shape[d + 1:], size)
    strides = (*layout.strides[:d], s * step, *layout.strides[d + 1:], s)
    return _trusted(shape, strides, layout.offset)

def diagonal(layout: Layout, offset: Any = 0, dim1: Any = 0, dim2: Any = 1) -> Layout:
    """The diagonal of dims ``dim1``/``dim2`` (shifted by ``offset``), appended as the last
    dim with stride ``strides[dim1] + strides[dim2]`` (a view).

    Forms: ``x.diagonal(offset=0, dim1=0, dim2=1)``, ``fs.diagonal(x, ...)``,
    ``views.diagonal(layout, ...)``.

    Args:
      offset: 0 for the main diagonal, > 0 above it, < 0 below it.
      dim1: the first of the two dims the diagonal is taken over.
      dim2: the second, distinct from ``dim1``.
    Returns:
      Rank ``ndim - 1``; the diagonal's length is ``max(min(n1, n2 - offset), 0)`` for
      ``offset >= 0`` (``max(min(n1 + offset, n2), 0)`` below); the offset moves to its first
      element (elements).
    Raises:
      LayoutError: ``dim1 == dim2``.
      OutOfRangeError: a dim is out of range.
    Example:
      >>> x = fs.from_array(jnp.arange(9.0).reshape(3, 3))
      >>> y = x.diagonal(1)
      >>> y.shape, y.stride(), y.storage_offset(), y.tolist()
      ((2,), (4,), 1, [1.0, 5.0])

    Semantics: ``torch.diagonal``."""
    k = _index("diagonal", "offset", offset)
    d1 = canonical_dim(dim1, layout.ndim, op="diagonal", layout=layout)
    d2 = canonical_dim(dim2, layout.ndim, op="diagonal", layout=layout)
    if d1 == d2:
        raise LayoutError(f"diagonal: diagonal dimensions cannot be identical (got dim1={dim1}, "
                          f"dim2={dim2}, layout {layout}).")
    n1, n2 = layout.shape[d1], layout.shape[d2]
    s1, s2 = layout.strides[d1], layout.strides[d2]
    length = max(min(n1, n2 - k), 0) if k >= 0 else max(min(n1 + k, n2), 0)
    start = layout.offset
    if length > 0:
        start = _shifted_offset("diagonal", layout, k * s2 if k >= 0 else -k * s1)
    lo, hi = min(d1, d2), max(d1, d2)
    shape, strides = layout.shape, layout.strides
    return _trusted(shape[:lo] + shape[lo + 1:hi] + shape[hi + 1:] + (length,),
                    strides[:lo] + strides[lo + 1:hi] + strides[hi + 1:] + (s1 + s2,), start)

def split(layout: Layout, split_size_or_sections: Any, dim: Any = 0) -> tuple[Layout, ...]:
    """Views of consecutive pieces of ``dim``: of ``split_size`` elements each (the last one
    smaller), or of the sizes listed.

    Forms: ``x.split(split_size_or_sections, dim=0)``, ``fs.split(x, ...)``,
    ``views.split(layout, ...)``.

    Args:
      split_size_or_sections: an int >= 0 (0 only for an empty dim), or a sequence of sizes
        summing to the extent.
      dim: the dim to split.
    Returns:
      A tuple of views (layouts) sharing strides; offsets advance along ``dim``.
    Raises:
      LayoutError: rank 0; a negative split size, or 0 for a non-empty dim; sections that do
        not sum to the extent.
      OutOfRangeError: ``dim`` out of range.
    Example:
      >>> x = fs.from_array(jnp.arange(5.0))
      >>> [p.tolist() for p in x.split(2)], [p.storage_offset() for p in x.split([1, 4])]
      ([[0.0, 1.0], [2.0, 3.0], [4.0]], [0, 1])

    Semantics: ``torch.split`` / ``torch.split_with_sizes``."""
    if layout.ndim == 0:
        raise LayoutError(f"split: expects at least a 1-dimensional layout (layout {layout}).")
    d = canonical_dim(dim, layout.ndim, op="split", layout=layout)
    n = layout.shape[d]
    if isinstance(split_size_or_sections, Sequence):
        sizes = tuple(_index("split", "sections", s) for s in split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise LayoutError(
                f"split: split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {d}), but got split_sizes={list(sizes)} (layout {layout})."
            )
    else:
        size = _index("split", "split_size", split_size_or_sections)
        if size < 0:
            raise LayoutError(f"split: split expects split_size be non-negative, but got "
                              f"split_size={size} (layout {layout}).")
        if size == 0 and n != 0:
            raise LayoutError(f"split: split_size can only be 0 if dimension size is 0, but got "
                              f"dimension size of {n} (dim {d} of layout {layout}).")
        count = max(-(-n // size), 1) if size else 1
        sizes = tuple(min(size, n - i * size) for i in range(count)) if size else (0,)
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return tuple(_slice(layout, d, s, m, 1, "split") for s, m in zip(starts, sizes, strict=True))

def chunk(layout: Layout, chunks: Any, dim: Any = 0) -> tuple[Layout, ...]:
    """Views of ``ceil(n / chunks)``-element pieces of ``dim`` (possibly fewer than ``chunks``).

    Forms: ``x.chunk(chunks, dim=0)``, ``fs.chunk(x, chunks, dim=0)``, ``views.chunk(layout, ...)``.

    Args:
      chunks: int >= 1.
      dim: the dim to split.
    Returns:
      A tuple of views (layouts), as :func:`split` with that piece size.
    Raises:
      LayoutError: rank 0, or ``chunks < 1``.
      OutOfRangeError: ``dim`` out of range.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0))
      >>> [p.shape for p in x.chunk(4)]
      [(2,), (2,), (2,)]

    Semantics: ``torch.chunk``."""
    chunks = _index("chunk", "chunks", chunks)
    if layout.ndim == 0:
        raise LayoutError(f"chunk: expects at least a 1-dimensional layout (layout {layout}).")
    if chunks <= 0:
        raise LayoutError(f"chunk: chunk expects `chunks` to be greater than 0, got: {chunks} "
                          f"(layout {layout}).")
    d = canonical_dim(dim, layout.ndim, op="chunk", layout=layout)
    n = layout.shape[d]
    size = -(-n // chunks)
    if size == 0 and n == 0:
        return split(layout, [0] * chunks, d)
    return split(layout, size, d)

def unbind(layout: Layout, dim: Any = 0) -> tuple[Layout, ...]:
    """Views of every index of ``dim``: ``select(dim, i)`` for ``i`` in ``range(n)``.

    Forms: ``x.unbind(dim=0)``, ``fs.unbind(x, dim=0)``, ``views.unbind(layout, dim=0)``.

    Args:
      dim: the dim removed; negative counts from the end.
    Returns:
      A tuple of ``n`` views (layouts) of rank ``ndim - 1``.
    Raises:
      OutOfRangeError: rank 0, or ``dim`` out of range.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
      >>> [p.tolist() for p in x.unbind(1)]
      [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]

    Semantics: ``torch.unbind``."""
    if layout.ndim == 0:
        raise OutOfRangeError(f"unbind: dimension specified as {dim} but layout {layout} has no "
                              "dimensions.")
    d = canonical_dim(dim, layout.ndim, op="unbind", layout=layout)
    return tuple(select(layout, d, i) for i in range(layout.shape[d]))

def _advanced_index(k: Any) -> bool:
    """True for an index PyTorch accepts but that copies: a bool, a list, an integer or
    boolean array (not a 0-d integer one, which selects)."""
    if isinstance(k, (bool, list)) or type(k).__name__ == "bool_":
        return True
    kind = getattr(getattr(k, "dtype", None), "kind", None)
    return kind == "b" or (kind in ("i", "u") and getattr(k, "ndim", 0) != 0)

def getitem(layout: Layout, key: Any) -> Layout:
    """Basic indexing as a view: ints (negative wrap), slices with step >= 1, ``None``
    (a new size-1 dim) and ``...``; a traced integer index selects with a traced offset.

    Forms: ``x[key]``, ``views.getitem(layout, key)``.

    Args:
      key: an int, a slice, ``None``, ``...``, a traced integer scalar, or a tuple of them.
    Returns:
      The view PyTorch returns for ``key``: ints drop dims, slices scale strides by their
      step and move the offset (elements), ``None`` inserts size-1 dims.
    Raises:
      OutOfRangeError: an int index out of range, or too many indices.
      LayoutError: a slice step <= 0, more than one ``...``, or an index kind that would
        copy (integer or boolean arrays, lists, bools: use ``jnp`` advanced indexing on
        ``jnp.asarray(x)``).
      IndexTypeError: an index or slice bound of a type that cannot index (a float, a
        string, an object); an ``IndexError`` and a ``TypeError``, as in PyTorch.
    Example:
      >>> x = fs.from_array(jnp.arange(12.0).reshape(3, 4))
      >>> y = x[1:, ::2]
      >>> y.shape, y.stride(), y.storage_offset(), y.tolist()
      ((2, 2), (4, 2), 4, [[4.0, 6.0], [8.0, 10.0]])

    Semantics: ``torch.Tensor.__getitem__`` restricted to view-producing keys. Deviation:
    PyTorch accepts several ``...`` in one key (each one skips the unindexed dims again);
    here, as in NumPy, a key holds at most one."""
    key = key if isinstance(key, tuple) else (key,)
    ellipses = sum(k is Ellipsis for k in key)
    if ellipses > 1:
        raise LayoutError(f"getitem: an index can only have a single ellipsis ('...') (got index "
                          f"{_plain_key(key)!r}, layout {layout}).")
    consumed = len(key) - ellipses - sum(k is None for k in key)
    if consumed > layout.ndim:
        raise OutOfRangeError(f"getitem: too many indices for tensor of dimension {layout.ndim} "
                              f"(got {consumed} indices {_plain_key(key)!r}, layout {layout}).")
    if ellipses:
        i = next(j for j, k in enumerate(key) if k is Ellipsis)  # by identity: never == on arrays
        key = (*key[:i], *(slice(None),) * (layout.ndim - consumed), *key[i + 1:])
    out, d = layout, 0
    for k in key:
        if k is None:
            out = unsqueeze(out, d)
            d += 1
        elif isinstance(k, slice):
            if k.start is None and k.stop is None and k.step is None:  # ":" keeps the dim as it is
                d += 1
                continue
            start, stop, step = (None if v is None else _index("getitem", f"slice {part}", v, IndexTypeError)
                                 for part, v in (("start", k.start), ("stop", k.stop), ("step", k.step)))
            if step is not None and step <= 0:
                raise LayoutError(f"getitem: step must be greater than zero (got slice "
                                  f"{_plain_key((k,))[0]}, layout {layout}); negative strides are not "
                                  "supported.")
            n = out.shape[d]
            lo, hi, st = slice(start, stop, step).indices(n)
            length = max(0, -(-(hi - lo) // st))
            out = _slice(out, d, lo, length, st, "getitem")
            d += 1
        elif _traced_int(k):
            out = _select(out, d, k, "getitem")
        elif _advanced_index(k):
            raise LayoutError(
                f"getitem: index {k!r} of type {type(k).__name__} is not a view index (ints, slices "
                f"with step >= 1, None and ... are; layout {layout}); advanced indexing copies: use "
                "jnp.asarray(x)[index]."
            )
        elif not hasattr(k, "__index__") or getattr(k, "ndim", 0) != 0:
            raise IndexTypeError(
                f"getitem: index {k!r} of type {type(k).__name__} cannot index (got index "
                f"{_plain_key(key)!r}, layout {layout}); valid indices are ints, slices of ints, None and "
                "... (and, copying, integer or boolean arrays through jnp.asarray(x)[index])."
            )
        else:
            i, n = _index("getitem", "index", k, IndexTypeError), out.shape[d]
            if not -n <= i < n:
                raise OutOfRangeError(f"getitem: index {i} is out of bounds for dimension {d} with size "
                                      f"{n} (got index {_plain_key(key)!r}, layout {layout}).")
            out = select(out, d, i)
    return out
