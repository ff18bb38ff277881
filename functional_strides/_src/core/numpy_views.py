"""NumPy's view rules as pure functions ``Layout -> Layout`` (no ``jax`` import).

The rules of NumPy's view functions, restated on element strides: where NumPy moves its data
pointer, the layout's offset moves by the same number of elements. Negative strides are
NumPy's (``a[::-1]``). ``reshape_strides`` is NumPy's ``_attempt_nocopy_reshape`` (a view or
``None``: NumPy then copies), which differs from PyTorch's ``computeStride`` in the strides it
gives size-1 dims. :mod:`functional_strides.numpy` wraps these rules around ``StridedArray``.

Every refusal raises a :class:`~functional_strides.LayoutError`; an axis out of range raises
:class:`~functional_strides.OutOfRangeError` (also an ``IndexError``, as NumPy's ``AxisError``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import IndexTypeError, LayoutError, LayoutTypeError, OutOfRangeError
from .layout import Layout, _check_dense, _trusted, contiguous_strides
from .views import _index

__all__ = [
    "broadcast_to",
    "diagonal",
    "expand_dims",
    "flip",
    "getitem",
    "is_f_contiguous",
    "is_scalar_index",
    "moveaxis",
    "normalize_axis",
    "normalize_axis_tuple",
    "ravel_strides",
    "reshape_shape",
    "reshape_strides",
    "rot90",
    "sliding_window_view",
    "squeeze",
    "swapaxes",
    "transpose",
]


def _int(op: str, name: str, value: Any) -> int:
    """``value`` as a Python int, or ``LayoutTypeError`` (the view algebra's one rule)."""
    return _index(op, name, value)


def _ints(op: str, name: str, value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple (NumPy accepts both for shapes and axes)."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return tuple(_int(op, f"{name}[{i}]", v) for i, v in enumerate(value))
    if hasattr(value, "__index__") and not isinstance(value, bool):
        return (_int(op, name, value),)
    if getattr(value, "ndim", None) == 1:  # a 1-D integer array
        return tuple(_int(op, f"{name}[{i}]", v) for i, v in enumerate(np.asarray(value).tolist()))
    raise LayoutTypeError(f"{op}: {name} must be an int or a sequence of ints, not {type(value).__name__} "
                          f"(got {name}={value!r}).")


def normalize_axis(axis: Any, ndim: int, *, op: str, name: str = "axis") -> int:
    """``axis`` wrapped into ``[0, ndim)``.

    Raises:
      OutOfRangeError: ``axis`` outside ``[-ndim, ndim)`` (NumPy's ``AxisError``).
    Example:
      >>> normalize_axis(-1, 3, op="f")
      2

    Semantics: ``numpy.lib.array_utils.normalize_axis_index``."""
    a = _int(op, name, axis)
    if not -ndim <= a < ndim:
        raise OutOfRangeError(f"{op}: {name} {a} is out of bounds for array of dimension {ndim}.")
    return a + ndim if a < 0 else a


def normalize_axis_tuple(axis: Any, ndim: int, *, op: str, name: str = "axis",
                         allow_duplicate: bool = False) -> tuple[int, ...]:
    """An int or a sequence of ints, each wrapped into ``[0, ndim)``.

    Raises:
      OutOfRangeError: an axis out of range.
      LayoutError: a repeated axis (unless allowed).
    Example:
      >>> normalize_axis_tuple((0, -1), 3, op="f")
      (0, 2)

    Semantics: ``numpy.lib.array_utils.normalize_axis_tuple``."""
    axes = tuple(normalize_axis(a, ndim, op=op, name=name) for a in _ints(op, name, axis))
    if not allow_duplicate and len(set(axes)) != len(axes):
        raise LayoutError(f"{op}: repeated axis in `{name}` argument (got {name}={axis!r}).")
    return axes


def is_f_contiguous(layout: Layout) -> bool:
    """NumPy's ``flags.f_contiguous``: column-major dense (size-1 dims ignored; any layout
    with a zero extent, or fewer than 2 elements, is contiguous)."""
    if layout.numel < 2:
        return True
    return _check_dense(layout.shape[::-1], layout.strides[::-1])  # row-major dense, reversed


# -- axes --------------------------------------------------------------------------------------

def transpose(layout: Layout, axes: Any = None) -> Layout:
    """Permute the axes; ``None`` reverses them. Semantics: ``numpy.transpose``.

    Raises:
      LayoutError: ``axes`` is not a permutation of the axes (wrong length, repeated).
      OutOfRangeError: an axis out of range.
    Example:
      >>> str(transpose(Layout((2, 3), (3, 1))))
      '(3,2):(1,3)+0'"""
    n = layout.ndim
    if axes is None:
        perm = tuple(range(n - 1, -1, -1))
    else:
        given = _ints("transpose", "axes", axes)
        if len(given) != n:
            raise LayoutError(f"transpose: axes don't match array (got axes={given} for an array of "
                              f"dimension {n}, layout {layout}).")
        perm = tuple(normalize_axis(a, n, op="transpose") for a in given)
        if len(set(perm)) != n:
            raise LayoutError(f"transpose: repeated axis in transpose (got axes={given}, layout {layout}).")
    return _trusted(tuple(layout.shape[d] for d in perm), tuple(layout.strides[d] for d in perm),
                    layout.offset)


def swapaxes(layout: Layout, axis1: Any, axis2: Any) -> Layout:
    """Exchange two axes. Semantics: ``numpy.swapaxes``.

    Raises:
      OutOfRangeError: an axis out of range.
    Example:
      >>> str(swapaxes(Layout((2, 3, 4), (12, 4, 1)), 0, 2))
      '(4,3,2):(1,4,12)+0'"""
    a = normalize_axis(axis1, layout.ndim, op="swapaxes", name="axis1")
    b = normalize_axis(axis2, layout.ndim, op="swapaxes", name="axis2")
    perm = list(range(layout.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(layout, perm)


def moveaxis(layout: Layout, source: Any, destination: Any) -> Layout:
    """Move axes ``source`` to positions ``destination``; the others keep their order.

    Raises:
      LayoutError: ``source`` and ``destination`` differ in length, or repeat an axis.
      OutOfRangeError: an axis out of range.
    Example:
      >>> moveaxis(Layout((2, 3, 4), (12, 4, 1)), 0, -1).shape
      (3, 4, 2)

    Semantics: ``numpy.moveaxis``."""
    n = layout.ndim
    src = normalize_axis_tuple(source, n, op="moveaxis", name="source")
    dst = normalize_axis_tuple(destination, n, op="moveaxis", name="destination")
    if len(src) != len(dst):
        raise LayoutError(f"moveaxis: `source` and `destination` arguments must have the same number of "
                          f"elements (got source={source!r}, destination={destination!r}).")
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(layout, order)


def squeeze(layout: Layout, axis: Any = None) -> Layout:
    """Drop size-1 axes: all of them (``axis=None``) or those named.

    Raises:
      LayoutError: a named axis has size other than 1.
      OutOfRangeError: out of range.
    Example:
      >>> squeeze(Layout((1, 3, 1), (9, 1, 1))).shape
      (3,)

    Semantics: ``numpy.squeeze``."""
    if axis is None:
        drop = {d for d, n in enumerate(layout.shape) if n == 1}
    else:
        drop = set(normalize_axis_tuple(axis, layout.ndim, op="squeeze"))
        if any(layout.shape[d] != 1 for d in drop):
            raise LayoutError(f"squeeze: cannot select an axis to squeeze out which has size not equal to "
                              f"one (got axis={axis!r}, shape {layout.shape}).")
    keep = [d for d in range(layout.ndim) if d not in drop]
    return _trusted(tuple(layout.shape[d] for d in keep), tuple(layout.strides[d] for d in keep),
                    layout.offset)


def expand_dims(layout: Layout, axis: Any) -> Layout:
    """Insert size-1 axes at positions ``axis`` of the result (always a view).

    The new axes' strides are those NumPy's ``reshape`` gives them (NumPy implements
    ``expand_dims`` as a reshape).

    Raises:
      OutOfRangeError: an axis out of range of the result's rank.
      LayoutError: repeated.
    Example:
      >>> expand_dims(Layout((2, 3), (3, 1)), 0).strides
      (6, 3, 1)

    Semantics: ``numpy.expand_dims``."""
    axes = normalize_axis_tuple(axis, layout.ndim + len(_ints("expand_dims", "axis", axis)), op="expand_dims")
    it = iter(layout.shape)
    shape = tuple(1 if d in axes else next(it) for d in range(layout.ndim + len(axes)))
    out = reshape(layout, shape, "C")
    assert out is not None  # inserting 1s is always a view
    return out


def broadcast_to(layout: Layout, shape: Any) -> Layout:
    """Broadcast to ``shape`` (NumPy's rules: align trailing axes; a size-1 axis stretches
    with stride 0, and keeps stride 0 when its target is 1 too; new leading axes get stride 0).

    Raises:
      LayoutError: a negative extent, fewer target axes than the rank, or an axis that is
        neither equal nor 1.
    Example:
      >>> str(broadcast_to(Layout((3, 1), (1, 1)), (2, 3, 4)))
      '(2,3,4):(0,1,0)+0'
      >>> str(broadcast_to(Layout((1, 2), (2, 1)), (1, 2)))
      '(1,2):(0,1)+0'

    Semantics: ``numpy.broadcast_to``."""
    target = _ints("broadcast_to", "shape", shape)
    if any(n < 0 for n in target):
        raise LayoutError(f"broadcast_to: all elements of broadcast shape must be non-negative (got "
                          f"shape={target}).")
    lead = len(target) - layout.ndim
    if lead < 0:
        raise LayoutError(f"broadcast_to: input operand has more dimensions than allowed by the axis "
                          f"remapping (array of shape {layout.shape} to shape {target}).")
    strides = [0] * lead
    for d, (n, s) in enumerate(zip(layout.shape, layout.strides, strict=True)):
        want = target[lead + d]
        if n == 1:  # NumPy zeroes the stride of every size-1 input axis, stretched or not
            strides.append(0)
        elif n == want:
            strides.append(s)
        else:
            raise LayoutError(f"broadcast_to: operands could not be broadcast together with remapped shapes "
                              f"[original->remapped]: {layout.shape} and requested shape {target}.")
    return _trusted(target, tuple(strides), layout.offset)


def _moved_offset(layout: Layout, delta: int, empty: bool) -> Any:
    """``offset + delta``; an empty result whose offset would fall below 0 keeps 0 (it
    addresses nothing; NumPy's data pointer may point anywhere then)."""
    out = layout.offset + delta
    if empty and isinstance(out, int) and out < 0:
        return 0
    return out


def diagonal(layout: Layout, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> Layout:
    """The diagonal of axes ``axis1``/``axis2`` as a last axis of stride ``s1 + s2``.

    Raises:
      LayoutError: rank < 2, or the two axes are the same.
      OutOfRangeError: out of range.
    Example:
      >>> str(diagonal(Layout((3, 4), (4, 1)), 1))
      '(3,):(5,)+1'

    Semantics: ``numpy.diagonal`` (a read-only view in NumPy)."""
    if layout.ndim < 2:
        raise LayoutError(f"diagonal: diag requires an array of at least two dimensions (got layout "
                          f"{layout}).")
    k = _int("diagonal", "offset", offset)
    a = normalize_axis(axis1, layout.ndim, op="diagonal", name="axis1")
    b = normalize_axis(axis2, layout.ndim, op="diagonal", name="axis2")
    if a == b:
        raise LayoutError(f"diagonal: axis1 and axis2 cannot be the same (got axis1={axis1}, axis2={axis2}).")
    n1, n2 = layout.shape[a], layout.shape[b]
    s1, s2 = layout.strides[a], layout.strides[b]
    delta = 0
    if k >= 0:
        k = min(k, n2)
        delta, n2 = k * s2, n2 - k
    else:
        k = min(-k, n1)
        delta, n1 = k * s1, n1 - k
    length = max(0, min(n1, n2))
    keep = [d for d in range(layout.ndim) if d not in (a, b)]
    shape = (*(layout.shape[d] for d in keep), length)
    return _trusted(shape, (*(layout.strides[d] for d in keep), s1 + s2),
                    _moved_offset(layout, delta, 0 in shape))


def flip(layout: Layout, axis: Any = None) -> Layout:
    """Reverse the order of elements along ``axis`` (all axes for ``None``).

    Raises:
      LayoutError: a repeated axis.
      OutOfRangeError: out of range.
    Example:
      >>> str(flip(Layout((2, 3), (3, 1)), 1))
      '(2,3):(3,-1)+2'

    Semantics: ``numpy.flip`` (a view with negative strides, as here)."""
    axes = range(layout.ndim) if axis is None else normalize_axis_tuple(axis, layout.ndim, op="flip")
    key = tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(layout.ndim))
    return getitem(layout, key)


def rot90(layout: Layout, k: Any = 1, axes: Any = (0, 1)) -> Layout:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first axis
    towards the second).

    Raises:
      LayoutError: ``axes`` not two different in-range axes.
    Example:
      >>> str(rot90(Layout((2, 3), (3, 1))))
      '(3,2):(-1,3)+2'

    Semantics: ``numpy.rot90`` (flips and a transpose, all views)."""
    axes = _ints("rot90", "axes", axes)
    n = layout.ndim
    if len(axes) != 2:
        raise LayoutError(f"rot90: len(axes) must be 2 (got axes={axes}).")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == n:
        raise LayoutError(f"rot90: Axes must be different (got axes={axes} for an array of dimension {n}).")
    if not all(-n <= a < n for a in axes):
        raise LayoutError(f"rot90: Axes={axes} out of range for array of ndim={n}.")
    k = _int("rot90", "k", k) % 4
    if k == 0:
        return layout
    if k == 2:
        return flip(flip(layout, axes[0]), axes[1])
    perm = list(range(n))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return transpose(flip(layout, axes[1]), perm)
    return flip(transpose(layout, perm), axes[1])


def sliding_window_view(layout: Layout, window_shape: Any, axis: Any = None) -> Layout:
    """Every window of ``window_shape`` over ``axis`` (all axes for ``None``): the windowed
    axes shrink to ``n - w + 1`` and the window axes are appended with the same strides.

    Raises:
      LayoutError: a negative window, window and axis of different lengths (or, with
        ``axis=None``, not one window extent per axis), a window larger than its axis.
      OutOfRangeError: an axis out of range.
    Example:
      >>> str(sliding_window_view(Layout((6,), (1,)), 3))
      '(4,3):(1,1)+0'

    Semantics: ``numpy.lib.stride_tricks.sliding_window_view`` (step 1; slice the result for
    a step, as NumPy's documentation does)."""
    window = _ints("sliding_window_view", "window_shape", window_shape)
    if any(w < 0 for w in window):
        raise LayoutError(f"sliding_window_view: `window_shape` cannot contain negative values (got "
                          f"window_shape={window}).")
    if axis is None:
        axes = tuple(range(layout.ndim))
        if len(window) != len(axes):
            raise LayoutError(
                f"sliding_window_view: Since axis is `None`, must provide window_shape for all dimensions "
                f"of `x`; got {len(window)} window_shape elements and `x.ndim` is {layout.ndim}.")
    else:
        axes = normalize_axis_tuple(axis, layout.ndim, op="sliding_window_view", allow_duplicate=True)
        if len(window) != len(axes):
            raise LayoutError(f"sliding_window_view: Must provide matching length window_shape and axis; got "
                              f"{len(window)} window_shape elements and {len(axes)} axes elements.")
    shape = list(layout.shape)
    for a, w in zip(axes, window, strict=True):
        if shape[a] < w:
            raise LayoutError(f"sliding_window_view: window shape cannot be larger than input array shape "
                              f"(window {w} on axis {a} of extent {shape[a]}, shape {layout.shape}).")
        shape[a] -= w - 1
    return _trusted((*shape, *window), (*layout.strides, *(layout.strides[a] for a in axes)), layout.offset)


# -- reshape -------------------------------------------------------------------------------------

def reshape_shape(shape: Any, numel: int, *, op: str = "reshape") -> tuple[int, ...]:
    """``shape`` with one ``-1`` inferred so that it holds ``numel`` elements.

    Raises:
      LayoutError: two unknowns, a negative extent other than -1, or a size mismatch.
    Example:
      >>> reshape_shape((2, -1), 6)
      (2, 3)

    Semantics: NumPy's ``_fix_unknown_dimension``."""
    target = _ints(op, "shape", shape)
    unknown = [d for d, n in enumerate(target) if n < 0]
    if len(unknown) > 1:
        raise LayoutError(f"{op}: can only specify one unknown dimension (got shape {target}).")
    if any(target[d] != -1 for d in unknown):
        raise LayoutError(f"{op}: negative dimensions not allowed (got shape {target}).")
    known = math.prod(n for n in target if n >= 0)
    if unknown:
        if known == 0 or numel % known:
            raise LayoutError(f"{op}: cannot reshape array of size {numel} into shape {target}.")
        target = tuple(numel // known if n < 0 else n for n in target)
    elif known != numel:
        raise LayoutError(f"{op}: cannot reshape array of size {numel} into shape {target}.")
    return target


def reshape_strides(layout: Layout, shape: tuple[int, ...], order: str = "C") -> tuple[int, ...] | None:
    """Strides that view ``layout`` as ``shape`` read in ``order``, or ``None`` when NumPy
    copies. ``shape`` holds ``layout.numel`` elements.

    A layout contiguous in ``order`` gets that order's dense strides; another is tried with
    NumPy's ``_attempt_nocopy_reshape`` (size-1 axes dropped, groups of old axes that
    address storage as one split into the new axes; trailing new 1s get the last stride).

    Example:
      >>> reshape_strides(Layout((2, 3), (6, 2)), (6,)), reshape_strides(Layout((3, 2), (1, 3)), (6,))
      ((2,), None)
      >>> reshape_strides(Layout((4, 3), (-3, 1), 9), (2, 2, 3))
      (-6, -3, 1)

    Semantics: ``PyArray_Newshape`` / ``_attempt_nocopy_reshape`` in NumPy 2.4."""
    dense = layout.is_contiguous() if order == "C" else is_f_contiguous(layout)
    if dense:
        return contiguous_strides(shape, order)
    olddims = [(n, s) for n, s in zip(layout.shape, layout.strides, strict=True) if n != 1]
    newstrides = [0] * len(shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(shape) and oi < len(olddims):
        np_, op_ = shape[ni], olddims[oi][0]
        while np_ != op_:
            if np_ < op_:
                np_ *= shape[nj]
                nj += 1
            else:
                op_ *= olddims[oj][0]
                oj += 1
        for ok in range(oi, oj - 1):
            if order == "F":
                if olddims[ok + 1][1] != olddims[ok][0] * olddims[ok][1]:
                    return None
            elif olddims[ok][1] != olddims[ok + 1][0] * olddims[ok + 1][1]:
                return None
        if order == "F":
            newstrides[ni] = olddims[oi][1]
            for nk in range(ni + 1, nj):
                newstrides[nk] = newstrides[nk - 1] * shape[nk - 1]
        else:
            newstrides[nj - 1] = olddims[oj - 1][1]
            for nk in range(nj - 1, ni, -1):
                newstrides[nk - 1] = newstrides[nk] * shape[nk]
        ni, oi = nj, oj
        nj, oj = nj + 1, oj + 1
    last = newstrides[ni - 1] if ni >= 1 else 1
    if order == "F" and ni >= 1:
        last *= shape[ni - 1]
    for nk in range(ni, len(shape)):
        newstrides[nk] = last
    return tuple(newstrides)


def reshape(layout: Layout, shape: Any, order: str = "C") -> Layout | None:
    """``layout`` viewed as ``shape`` (``-1`` inferred) in ``order``, or ``None`` when NumPy
    copies. A ``shape`` equal to the current one, written without ``-1``, keeps the layout
    (NumPy's quick check). Raises as :func:`reshape_shape`.

    Example:
      >>> str(reshape(Layout((3, 2), (1, 3)), (2, -1), "F")), reshape(Layout((2, 3), (3, 1)), (3, 2), "F")
      ('(2,3):(1,2)+0', None)

    Semantics: ``numpy.reshape`` (``order="C"`` or ``"F"``)."""
    if _ints("reshape", "shape", shape) == layout.shape:  # NumPy's quick check (before -1 is inferred)
        return layout
    target = reshape_shape(shape, layout.numel)
    strides = reshape_strides(layout, target, order)
    return None if strides is None else _trusted(target, strides, layout.offset)


def ravel_strides(layout: Layout, order: str) -> tuple[tuple[int, ...], str]:
    """How ``numpy.ravel(a, order)`` reads ``layout``: ``((stride,), "view")`` when the
    result is a view of stride ``stride``, else ``(perm, "copy")``: the copy reads the
    axes in the order ``perm``, outermost first (``order="K"``: NumPy's iterator order, by
    decreasing ``|stride|`` with stride-0 axes left in place; C: ``range(ndim)``; F:
    reversed).

    Example:
      >>> ravel_strides(Layout((3, 2), (1, 3)), "K"), ravel_strides(Layout((3, 2), (1, 3)), "C")
      (((1,), 'view'), ((0, 1), 'copy'))

    Semantics: ``PyArray_Ravel`` in NumPy 2.4."""
    f_only = is_f_contiguous(layout) and not layout.is_contiguous()
    if order == "K":
        if layout.is_contiguous():
            order = "C"
        elif is_f_contiguous(layout):
            order = "F"
    elif order == "A":
        order = "F" if f_only else "C"
    if order == "C" and layout.is_contiguous():
        return (1,), "view"
    if order == "F" and is_f_contiguous(layout):
        return (1,), "view"
    n = layout.ndim
    if order == "K":
        perm = sorted(range(n), key=lambda d: -abs(layout.strides[d]))  # stable: ties in axis order
        expected = 1
        for d in reversed(perm):
            if layout.shape[d] == 1:
                continue
            if layout.strides[d] != expected:
                break
            expected *= layout.shape[d]
        else:
            return (1,), "view"
        return _keep_order(layout.strides), "copy"
    return (tuple(range(n)) if order == "C" else tuple(range(n - 1, -1, -1))), "copy"


def _keep_order(strides: tuple[int, ...]) -> tuple[int, ...]:
    """The order (outermost first) in which NumPy's iterator reads axes for ``order="K"``:
    an insertion sort, fastest axis first, by ``|stride|``, in which a stride-0 axis is
    "ambiguous" and neither moves nor blocks another, and ties keep C order (NumPy's
    ``npyiter_find_best_axis_ordering`` for one operand, strides not negated)."""
    fast = list(range(len(strides) - 1, -1, -1))  # fastest first: C order reversed
    for i0 in range(1, len(fast)):
        axis, pos = fast[i0], i0
        s0 = abs(strides[axis])
        for i1 in range(i0 - 1, -1, -1):
            s1 = abs(strides[fast[i1]])
            if s0 and s1:
                if s1 <= s0:
                    break
                pos = i1
        if pos != i0:
            fast[pos + 1:i0 + 1] = fast[pos:i0]
            fast[pos] = axis
    return tuple(reversed(fast))


# -- basic indexing --------------------------------------------------------------------------------

def is_scalar_index(layout: Layout, key: Any) -> bool:
    """True when NumPy's ``a[key]`` returns a scalar (a copy), not a view: ``key`` holds one
    integer per axis and nothing else (``a[()]`` on a 0-d array included).

    Example:
      >>> is_scalar_index(Layout((2, 3), (3, 1)), (1, 2)), is_scalar_index(Layout((2, 3), (3, 1)), (1, ...))
      (True, False)"""
    key = key if isinstance(key, tuple) else (key,)
    return len(key) == layout.ndim and all(
        not isinstance(k, slice) and k is not None and k is not Ellipsis and hasattr(k, "__index__")
        and getattr(k, "ndim", 0) == 0 and not isinstance(k, bool) for k in key)


def getitem(layout: Layout, key: Any) -> Layout:
    """NumPy's basic indexing: ints (negative wrap), slices with any non-zero step, ``None``
    (``np.newaxis``) and one ``...``; a negative step makes a negative stride.

    Raises:
      OutOfRangeError: an int out of range, or too many indices.
      LayoutError: a zero step, two ``...``, or an index that copies (integer or boolean
        arrays, lists: advanced indexing; use ``jnp.asarray(x)[index]``).
      IndexTypeError: an index of another type (a float, a string).
    Example:
      >>> str(getitem(Layout((3, 4), (4, 1)), (slice(None, None, -1), slice(1, None))))
      '(3,3):(-4,1)+9'

    Semantics: ``numpy.ndarray.__getitem__`` with a basic index (a view in NumPy too)."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise LayoutError(f"getitem: an index can only have a single ellipsis ('...') (got {key!r}).")
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, (list, bool)) or type(k).__name__ == "bool_" or getattr(k, "ndim", 0) != 0:
            raise LayoutError(f"getitem: index {k!r} is an advanced index (integer or boolean arrays, lists, "
                              f"bools), which copies; use jnp.asarray(x)[index] (layout {layout}).")
        if not hasattr(k, "__index__"):
            raise IndexTypeError(
                f"getitem: only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                f"integer or boolean arrays are valid indices (got {k!r} of type {type(k).__name__}).")
    used = sum(k is not None and k is not Ellipsis for k in key)
    if used > layout.ndim:
        raise OutOfRangeError(f"getitem: too many indices for array: array is {layout.ndim}-dimensional, "
                              f"but {used} were indexed (layout {layout}).")
    if Ellipsis in [k for k in key if k is Ellipsis]:
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = (*key[:i], *(slice(None),) * (layout.ndim - used), *key[i + 1:])
    else:
        key = (*key, *(slice(None),) * (layout.ndim - used))
    shape, strides, delta, d = [], [], 0, 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n, s = layout.shape[d], layout.strides[d]
        d += 1
        if isinstance(k, slice):
            step = 1 if k.step is None else _int("getitem", "slice step", k.step)
            if step == 0:
                raise LayoutError(f"getitem: slice step cannot be zero (got {k!r}, layout {layout}).")
            start = None if k.start is None else _int("getitem", "slice start", k.start)
            stop = None if k.stop is None else _int("getitem", "slice stop", k.stop)
            lo, _, st = slice(start, stop, step).indices(n)
            length = len(range(*slice(start, stop, step).indices(n)))
            shape.append(length)
            strides.append(s * st)
            delta += lo * s
        else:
            i = _int("getitem", "index", k)
            if not -n <= i < n:
                raise OutOfRangeError(f"getitem: index {i} is out of bounds for axis {d - 1} with size {n} "
                                      f"(layout {layout}).")
            delta += (i + n if i < 0 else i) * s
    return _trusted(tuple(shape), tuple(strides), _moved_offset(layout, delta, 0 in shape))
