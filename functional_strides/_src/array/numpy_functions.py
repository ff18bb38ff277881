"""The implementation of :mod:`functional_strides.numpy` (its public names are documented there)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from ..core import numpy_views as rules
from ..core.errors import LayoutError, LayoutTypeError, ViewError
from ..core.layout import Layout, _trusted, address_range, check_in_storage, contiguous_strides
from .interop import from_numpy
from .strided import StridedArray, _over_batch, from_array

__all__ = [
    "as_strided",
    "broadcast_to",
    "diagonal",
    "expand_dims",
    "flip",
    "getitem",
    "may_share_memory",
    "moveaxis",
    "ravel",
    "reshape",
    "rot90",
    "shares_memory",
    "sliding_window_view",
    "squeeze",
    "swapaxes",
    "transpose",
]


def _wrap(a: Any) -> StridedArray:
    """A ``StridedArray`` as is; a NumPy array with its own strides (``fs.from_numpy``, as
    NumPy's functions see it); anything else (a JAX array, a list) dense."""
    if isinstance(a, StridedArray):
        return a
    if isinstance(a, np.ndarray):
        return from_numpy(a)
    return from_array(a)


def _copy(x: StridedArray, fn: Any, shape: tuple[int, ...], order: str) -> StridedArray:
    """A copy: ``fn`` of ``x``'s values (shape ``x.shape`` -> ``shape``) over a fresh storage
    laid out in ``order``; a batched ``x`` gives one storage per item (``fn`` is mapped)."""
    item = lambda v: jnp.ravel(fn(v), order=order)  # noqa: E731
    flat = _over_batch(item, len(x.batch_shape))(jnp.asarray(x))
    return StridedArray(flat, Layout.contiguous(shape, order), batched=bool(x.batch_shape))


def _check_max_work(op: str, max_work: Any) -> None:
    if max_work is not None and (isinstance(max_work, bool) or not isinstance(max_work, (int, np.integer))):
        raise LayoutTypeError(f"{op}: max_work must be None or an int (got max_work={max_work!r}); "
                              "pass -1 (exact), 0 (bounds only) or None.")


def _overlap(a: Any, b: Any, exact: bool, max_work: Any = -1) -> bool:
    """Whether two views of one storage object share an element (``exact``, within
    ``max_work``), or may (their lowest-to-highest ranges of storage indices intersect)."""
    if not (isinstance(a, StridedArray) and isinstance(b, StridedArray) and a.storage is b.storage):
        return False
    if exact:
        return a.layout.overlaps(b.layout, max_work=max_work)
    if a.layout.is_empty or b.layout.is_empty:
        return False
    for x in (a, b):
        if not x.layout.has_static_offset:
            raise LayoutError(f"may_share_memory: the offset of layout {x.layout} is not one known integer "
                              "(traced under jit, or one per item of a batch); compare outside jit.")
    (lo_a, hi_a), (lo_b, hi_b) = (address_range(x.shape, x.layout.strides, x.layout.offset) for x in (a, b))
    return lo_a <= hi_b and lo_b <= hi_a


def shares_memory(a: Any, b: Any, /, max_work: Any = None) -> bool:
    """True when ``a`` and ``b`` address a common element of one storage.

    Two views share memory when they are over the same storage object and some storage
    index (offset plus strides times coordinates, in elements) lies in both. Two NumPy
    arrays get NumPy's own answer (``np.shares_memory(a, b, max_work=max_work)``): they may
    share a buffer, which a ``StridedArray`` (a copy, in JAX's memory) never shares with one.

    Args:
      a: a ``StridedArray`` view, or a NumPy array. Anything else (a JAX array, a scalar, a
        NumPy array beside a ``StridedArray``) is a value here, not a view of a storage, and
        gives ``False``.
      b: another, likewise.
      max_work: NumPy's: ``None`` or ``-1`` (``np.MAY_SHARE_EXACT``) for the exact answer;
        ``0`` (``np.MAY_SHARE_BOUNDS``) to compare the ranges of storage indices only, which
        answers ``False`` where they do not meet and raises NumPy's ``TooHardError`` where
        they do; ``n > 0``: at most about ``n`` units of work (steps of the search, candidates
        of the enumeration: :func:`functional_strides.overlaps`), then ``TooHardError``.
    Returns:
      ``bool``.
    Raises:
      LayoutError: the two views are over one storage and an offset is not one known
        integer (traced under ``jit``, or one per item of a batch); compare outside ``jit``.
      LayoutTypeError: ``max_work`` is not ``None`` or an int.
      TooHardError: ``max_work=0`` and the ranges of the views meet, or ``max_work`` did not
        suffice (``functional_strides.TooHardError``, also ``numpy.exceptions.TooHardError``).
    Example:
      >>> import jax.numpy as jnp
      >>> x = from_array(jnp.arange(6))
      >>> every_other = getitem(x, slice(None, None, 2))
      >>> shares_memory(x, flip(x)), shares_memory(x, ravel(every_other))   # ravel copies here
      (True, False)
      >>> a = np.arange(6)
      >>> shares_memory(a, a[::2]), shares_memory(a[::2], a[1::2])       # NumPy's answers
      (True, False)

    Semantics: ``numpy.shares_memory`` (exact, with element granularity)."""
    _check_max_work("shares_memory", max_work)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.shares_memory(a, b, max_work=max_work))
    return _overlap(a, b, exact=True, max_work=-1 if max_work is None else max_work)


def may_share_memory(a: Any, b: Any, /, max_work: Any = None) -> bool:
    """True when ``a`` and ``b`` might share an element: by default, when they are views of
    one storage whose ranges of storage indices (lowest to highest element) intersect.
    Never raises NumPy's ``TooHardError``.

    Args:
      a: as for :func:`shares_memory`; two NumPy arrays get ``np.may_share_memory``'s answer.
      b: likewise.
      max_work: NumPy's: ``None`` or ``0`` (``np.MAY_SHARE_BOUNDS``) compares the ranges only;
        ``-1`` (``np.MAY_SHARE_EXACT``) or a positive int gives :func:`shares_memory`'s exact
        answer.
    Returns:
      ``bool``; ``False`` whenever :func:`shares_memory` is, except that interleaved views
      (the even and the odd elements) may share by their ranges.
    Raises:
      LayoutError: as :func:`shares_memory` (an offset not one known integer).
      LayoutTypeError: ``max_work`` is not ``None`` or an int.
    Example:
      >>> import jax.numpy as jnp
      >>> x = from_array(jnp.arange(6))
      >>> even, odd = getitem(x, slice(0, None, 2)), getitem(x, slice(1, None, 2))
      >>> may_share_memory(even, odd), may_share_memory(even, odd, max_work=-1)
      (True, False)

    Semantics: ``numpy.may_share_memory``."""
    _check_max_work("may_share_memory", max_work)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.may_share_memory(a, b, max_work=max_work))
    return _overlap(a, b, exact=max_work is not None and max_work != 0)


# -- stride tricks ---------------------------------------------------------------------------------

def as_strided(x: Any, shape: Any = None, strides: Any = None) -> StridedArray:
    """A view of ``x``'s storage with ``shape`` and byte ``strides``, starting at ``x``'s
    first element (NumPy's data pointer), bounds checked.

    Args:
      x: a ``StridedArray`` (or an array, wrapped as a contiguous one).
      shape: extents (default ``x.shape``).
      strides: strides in **bytes**, each a multiple of ``x.itemsize``, any sign. By default,
        as NumPy's: the row-major strides of ``shape`` where ``x`` is C-contiguous (NumPy's
        ``__array_interface__`` then has no strides), else ``x.strides``.
    Returns:
      A ``StridedArray`` over ``x``'s storage: element strides ``strides // itemsize``, the
      offset of ``x``.
    Raises:
      LayoutError: ``shape`` and ``strides`` (given, or those of a non-contiguous ``x``) differ
        in length, or a stride is not a multiple of the itemsize (this library addresses whole elements).
      StorageError: the view reaches below the storage start or past its end (the message
        names both ends); NumPy does not check and reads outside its buffer.
    Example:
      >>> import jax.numpy as jnp
      >>> as_strided(jnp.arange(10.0), (4, 4), (8, 4)).tolist()[1]   # float32: window 4, hop 2
      [2.0, 3.0, 4.0, 5.0]
      >>> as_strided(jnp.arange(12.0), shape=(3, 4)).strides            # C-contiguous: row-major
      (16, 4)

    Semantics: ``numpy.lib.stride_tricks.as_strided`` (``subok``/``writeable`` do not apply:
    every view is read-only, writes are functional)."""
    x = _wrap(x)
    size = tuple(x.shape if shape is None else rules._ints("as_strided", "shape", shape))
    item = x.itemsize
    if strides is not None:
        given = rules._ints("as_strided", "strides", strides)
    elif x.is_contiguous():  # NumPy's __array_interface__ has no strides: a C-contiguous layout of shape
        given = tuple(s * item for s in contiguous_strides(size))
    else:
        given = x.strides
    if len(given) != len(size):
        raise LayoutError(f"as_strided: mismatch in length of strides and shape (got shape={size}, "
                          f"strides={tuple(given)}).")
    bad = [s for s in given if s % item]
    if bad:
        raise LayoutError(f"as_strided: strides {tuple(given)} (bytes) must be multiples of the itemsize "
                          f"{item} of {x.dtype} (got {bad}); this library addresses whole elements.")
    if any(n < 0 for n in size):
        raise LayoutError(f"as_strided: negative dimensions are not allowed (got shape={size}).")
    elements = tuple(s // item for s in given)
    offset = x.layout.offset
    if x.layout.has_static_offset:
        check_in_storage("as_strided", size, elements, offset, x.storage.shape[-1])
    return x._view(_trusted(size, elements, offset))


def sliding_window_view(x: Any, window_shape: Any, axis: Any = None) -> StridedArray:
    """Every window of ``window_shape`` (one extent per axis of ``axis``, all axes for
    ``None``) as a view: the windowed axes shrink to ``n - w + 1`` and the window axes are
    appended, with the same strides (windows overlap).

    Args:
      x: a ``StridedArray`` or an array.
      window_shape: an int or a tuple of ints >= 0.
      axis: an int, a tuple of ints (an axis may repeat), or ``None``.
    Returns:
      A ``StridedArray`` over ``x``'s storage of rank ``x.ndim + len(window_shape)``.
    Raises:
      LayoutError: negative window, mismatched lengths, a window larger than its axis.
      OutOfRangeError: an axis out of range.
    Example:
      >>> import jax.numpy as jnp
      >>> w = sliding_window_view(jnp.arange(6), 3)
      >>> w.shape, w.strides, w.tolist()[-1]
      ((4, 3), (4, 4), [3, 4, 5])

    Semantics: ``numpy.lib.stride_tricks.sliding_window_view`` (its step is a slice of the
    result: ``getitem(w, np.s_[::2])``)."""
    x = _wrap(x)
    return x._view(rules.sliding_window_view(x.layout, window_shape, axis))


def broadcast_to(array: Any, shape: Any) -> StridedArray:
    """``array`` broadcast to ``shape`` by NumPy's rules (stride 0 on stretched and new axes).

    Args:
      array: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      shape: the target shape, an int or a tuple of ints.
    Raises:
      LayoutError: a negative extent, or shapes that do not broadcast.
    Example:
      >>> import jax.numpy as jnp
      >>> b = broadcast_to(jnp.arange(3), (2, 3))
      >>> b.strides, b.tolist()
      ((0, 4), [[0, 1, 2], [0, 1, 2]])

    Semantics: ``numpy.broadcast_to`` (read-only in NumPy; every view is here)."""
    x = _wrap(array)
    return x._view(rules.broadcast_to(x.layout, shape))


# -- axes ----------------------------------------------------------------------------------------

def transpose(a: Any, axes: Any = None) -> StridedArray:
    """Axes permuted (reversed for ``None``); a view. Semantics: ``numpy.transpose``.

    Args:
      a: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      axes: a permutation of the axes, or ``None`` (reversed).
    Raises:
      LayoutError: ``axes`` is not a permutation.
      OutOfRangeError: an axis out of range.
    Example:
      >>> import jax.numpy as jnp
      >>> transpose(jnp.zeros((2, 3, 4), jnp.float32)).strides
      (4, 16, 48)"""
    x = _wrap(a)
    return x._view(rules.transpose(x.layout, axes))


def swapaxes(a: Any, axis1: Any, axis2: Any) -> StridedArray:
    """Two axes exchanged; a view. Semantics: ``numpy.swapaxes``.

    Args:
      a: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      axis1: an axis.
      axis2: the axis it is exchanged with.
    Raises:
      OutOfRangeError: an axis out of range.
    Example:
      >>> import jax.numpy as jnp
      >>> swapaxes(jnp.zeros((2, 3)), 0, 1).shape
      (3, 2)"""
    x = _wrap(a)
    return x._view(rules.swapaxes(x.layout, axis1, axis2))


def moveaxis(a: Any, source: Any, destination: Any) -> StridedArray:
    """Axes ``source`` moved to ``destination`` (ints or tuples); a view.

    Args:
      a: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      source: an int or a tuple of ints: the axes moved.
      destination: as ``source``, of equal length: their new positions.
    Raises:
      LayoutError: lengths differ or an axis repeats.
      OutOfRangeError: out of range.
    Example:
      >>> import jax.numpy as jnp
      >>> moveaxis(jnp.zeros((2, 3, 4)), 0, -1).shape
      (3, 4, 2)

    Semantics: ``numpy.moveaxis``."""
    x = _wrap(a)
    return x._view(rules.moveaxis(x.layout, source, destination))


def squeeze(a: Any, axis: Any = None) -> StridedArray:
    """Size-1 axes removed (all, or those of ``axis``); a view.

    Args:
      a: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      axis: an int, a tuple of ints, or ``None`` (every axis of size 1).
    Raises:
      LayoutError: a named axis is not of size 1.
      OutOfRangeError: out of range.
    Example:
      >>> import jax.numpy as jnp
      >>> squeeze(jnp.zeros((1, 3, 1)), axis=0).shape
      (3, 1)

    Semantics: ``numpy.squeeze``."""
    x = _wrap(a)
    return x._view(rules.squeeze(x.layout, axis))


def expand_dims(a: Any, axis: Any) -> StridedArray:
    """Size-1 axes inserted at positions ``axis`` of the result; a view whose new axes have
    the strides NumPy's ``reshape`` gives them.

    Args:
      a: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      axis: an int or a tuple of ints: positions in the result (negative count from its end).
    Raises:
      LayoutError: a repeated axis.
      OutOfRangeError: out of range of the result's rank.
    Example:
      >>> import jax.numpy as jnp
      >>> expand_dims(jnp.zeros((2, 3), jnp.float32), (0, 2)).strides
      (24, 12, 12, 4)

    Semantics: ``numpy.expand_dims``."""
    x = _wrap(a)
    return x._view(rules.expand_dims(x.layout, axis))


def diagonal(a: Any, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> StridedArray:
    """The diagonal of ``axis1``/``axis2`` (above it for ``offset > 0``) as a last axis of
    stride ``s1 + s2``; a view.

    Args:
      a: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      offset: 0 for the main diagonal, > 0 above it, < 0 below it.
      axis1: the first of the two axes the diagonal is taken over.
      axis2: the second, distinct from ``axis1``.
    Raises:
      LayoutError: rank < 2 or equal axes.
      OutOfRangeError: an axis out of range.
    Example:
      >>> import jax.numpy as jnp
      >>> diagonal(jnp.arange(12).reshape(3, 4), 1).tolist()
      [1, 6, 11]

    Semantics: ``numpy.diagonal`` (a read-only view in NumPy)."""
    x = _wrap(a)
    return x._view(rules.diagonal(x.layout, offset, axis1, axis2))


def flip(m: Any, axis: Any = None) -> StridedArray:
    """Elements reversed along ``axis`` (all axes for ``None``): a view with negative strides
    (a 0-d array gives a 0-d copy, as NumPy's scalar).

    Args:
      m: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      axis: an int, a tuple of ints, or ``None`` (every axis).
    Raises:
      LayoutError: a repeated axis.
      OutOfRangeError: out of range.
    Example:
      >>> import jax.numpy as jnp
      >>> f = flip(jnp.arange(6, dtype=jnp.float32).reshape(2, 3), 1)
      >>> f.strides, f.storage_offset(), f.tolist()
      ((12, -4), 2, [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]])

    Semantics: ``numpy.flip``."""
    x = _wrap(m)
    view = x._view(rules.flip(x.layout, axis))
    if x.ndim == 0:  # NumPy indexes a 0-d array with (): a scalar, a copy
        return _copy(view, lambda v: v, (), "C")
    return view


def rot90(m: Any, k: Any = 1, axes: Any = (0, 1)) -> StridedArray:
    """Rotated by 90 degrees ``k`` times from the first axis of ``axes`` towards the second;
    a view (flips and a transpose).

    Args:
      m: a ``StridedArray``, a NumPy array (with its own strides) or a JAX array.
      k: the number of quarter turns (any int; negative turns the other way).
      axes: two different axes: the rotation goes from the first towards the second.
    Raises:
      LayoutError: ``axes`` not two different axes in range.
    Example:
      >>> import jax.numpy as jnp
      >>> rot90(jnp.arange(4).reshape(2, 2)).tolist()
      [[1, 3], [0, 2]]

    Semantics: ``numpy.rot90``."""
    x = _wrap(m)
    return x._view(rules.rot90(x.layout, k, axes))


# -- reshape ---------------------------------------------------------------------------------------

def _order(op: str, order: Any, allowed: str) -> str:
    if order not in tuple(allowed):
        choices = ", ".join(repr(c) for c in allowed[:-1]) + f", or {allowed[-1]!r}"
        raise LayoutError(f"{op}: order must be one of {choices} (got order={order!r}).")
    return order


def reshape(a: Any, /, shape: Any, order: str = "C", *, copy: bool | None = None) -> StridedArray:
    """``a`` with a new shape read in ``order``: a view exactly when NumPy returns one, else
    a copy over a fresh storage (C- or F-contiguous, as NumPy's copy).

    Args:
      a: a ``StridedArray`` or an array.
      shape: an int or a tuple of ints; one ``-1`` is inferred.
      order: ``"C"`` (row-major), ``"F"`` (column-major), or ``"A"`` (``"F"`` when ``a`` is
        F- and not C-contiguous, else ``"C"``).
      copy: ``None`` (a view when possible), ``True`` (always copy), ``False`` (a view or
        :class:`~functional_strides.ViewError`).
    Returns:
      A ``StridedArray`` of ``shape``: over ``a``'s storage with NumPy's strides for the view
      (``_attempt_nocopy_reshape``), or over a new dense storage.
    Raises:
      LayoutError: a bad ``order`` or ``shape`` (two unknowns, sizes that differ).
      ViewError: ``copy=False`` and no view exists.
    Example:
      >>> import jax.numpy as jnp
      >>> x = transpose(jnp.arange(6).reshape(2, 3))
      >>> reshape(x, 6, order="F").storage is x.storage, reshape(x, 6).storage is x.storage
      (True, False)

    Semantics: ``numpy.reshape`` (NumPy 2.4: ``copy=``)."""
    x = _wrap(a)
    order = _order("reshape", order, "CFA")
    if order == "A":
        order = "F" if rules.is_f_contiguous(x.layout) and not x.layout.is_contiguous() else "C"
    target = rules.reshape_shape(shape, x.layout.numel)
    view = None if copy else rules.reshape(x.layout, shape, order)
    if view is not None:
        return x._view(view)
    if copy is False:
        raise ViewError(f"reshape: Unable to avoid creating a copy while reshaping (layout {x.layout} to "
                        f"shape {target} in order {order!r}); pass copy=None to allow the copy.")
    return _copy(x, lambda v: jnp.reshape(v, target, order=order), target, order)


def ravel(a: Any, order: str = "C") -> StridedArray:
    """``a`` as 1-D, read in ``order``: a view exactly when NumPy returns one, else a copy.

    Args:
      a: a ``StridedArray`` or an array.
      order: ``"C"``, ``"F"``, ``"A"`` (F when F- and not C-contiguous) or ``"K"`` (memory
        order: axes by decreasing ``|stride|``, each read in its own direction).
    Returns:
      A 1-D ``StridedArray``: a view for a layout contiguous in the order read (for ``"K"``:
      contiguous after sorting the axes), else over a new storage.
    Raises:
      LayoutError: a bad ``order``.
    Example:
      >>> import jax.numpy as jnp
      >>> t = transpose(jnp.arange(6).reshape(2, 3))
      >>> ravel(t).tolist(), ravel(t, "K").storage is t.storage
      ([0, 3, 1, 4, 2, 5], True)

    Semantics: ``numpy.ravel`` (``PyArray_Ravel``): order ``"C"`` copies every layout that is
    not C-contiguous, even one that ``reshape(-1)`` views."""
    x = _wrap(a)
    how, kind = rules.ravel_strides(x.layout, _order("ravel", order, "CFAK"))
    if kind == "view":
        return x._view(_trusted((x.layout.numel,), how, x.layout.offset))
    return _copy(x, lambda v: jnp.transpose(v, how).reshape(-1), (x.layout.numel,), "C")


# -- indexing --------------------------------------------------------------------------------------

def getitem(a: Any, key: Any) -> StridedArray:
    """``a[key]`` with NumPy's basic indexing: ints, slices with any non-zero step (negative
    steps give negative strides), ``None`` and one ``...``; a view, except where NumPy
    returns a scalar (one integer per axis, or ``()`` on a 0-d array): then a 0-d copy.

    Args:
      a: a ``StridedArray`` or an array.
      key: an index or a tuple of them, e.g. ``np.s_[::-1, 1:]``.
    Returns:
      A ``StridedArray`` over ``a``'s storage (over a fresh one-element storage for a
      scalar index).
    Raises:
      OutOfRangeError: an int out of range, or too many indices.
      LayoutError: a zero step, two ``...``, or an advanced (copying) index.
      IndexTypeError: an index of another type.
    Example:
      >>> import numpy as np, jax.numpy as jnp
      >>> getitem(jnp.arange(10), np.s_[8:2:-3]).tolist()
      [8, 5]

    Semantics: ``numpy.ndarray.__getitem__`` with a basic index. ``x[key]`` on a
    ``StridedArray`` keeps PyTorch's rules (no negative steps)."""
    x = _wrap(a)
    view = x._view(rules.getitem(x.layout, key))
    if rules.is_scalar_index(x.layout, key):  # NumPy returns a scalar: a copy
        return _copy(view, lambda v: v, (), "C")
    return view
