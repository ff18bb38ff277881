"""Integer tuples of CuTe's layout algebra (pure Python, no ``jax``).

An *int tuple* is an ``int`` or a (possibly nested) ``tuple`` of int tuples: ``4``,
``(2, 3)``, ``((2, 2), 8)``. Shapes, strides and coordinates of a CuTe layout are int
tuples of the same nesting (*congruent*). Coordinates and indices are colexicographic, as
in CuTe: the leftmost mode varies fastest (``idx2crd(1, (2, 3)) == (1, 0)``).

The names and results follow CUTLASS's ``pycute`` (``python/pycute/int_tuple.py``); where
``pycute`` asserts, these functions raise :class:`~functional_strides.LayoutError` naming
the arguments. Public through :mod:`functional_strides.cute`.
"""

from __future__ import annotations

import abc
import numbers
import operator
from typing import Any

from ..core.errors import LayoutError

__all__ = [
    "Integer",
    "crd2crd",
    "crd2idx",
    "elem_scale",
    "flatten",
    "has_none",
    "idx2crd",
    "inner_product",
    "is_int",
    "is_tuple",
    "prefix_product",
    "product",
    "shape_div",
    "signum",
    "slice_",
    "tuple_max",
]


class Integer(abc.ABC):  # noqa: B024 - a virtual base class with no abstract methods, as in pycute
    """Virtual base class of the integers of an int tuple: ``int`` and ``numbers.Integral``
    subclasses (NumPy integers included), but not ``bool`` nor ``float``.

    Used only with ``isinstance``/``issubclass``: an extent, stride or coordinate leaf of a
    CuTe int tuple is valid when it is an ``Integer``.

    Raises:
      Nothing: ``isinstance(x, Integer)`` answers ``False`` for any non-integer ``x`` (a
        ``str``, ``None``, a ``float``, a ``bool``); ``Integer()`` is not refused but gives an
        object that is no integer (nothing of the algebra accepts it).
    Example:
      >>> isinstance(3, Integer), isinstance(True, Integer), isinstance(3.0, Integer)
      (True, False, False)
      >>> isinstance(np.int64(3), Integer)
      True

    Semantics: pycute ``pycute.typing.Integer`` (which also refuses NumPy integers) / CuTe
    ``is_integral``."""

    @classmethod
    def __subclasshook__(cls, c: type) -> bool:
        if issubclass(c, bool):
            return False
        return issubclass(c, (int, numbers.Integral))


def is_int(x: Any) -> bool:
    """True for an integer leaf of an int tuple: an ``int`` or any :class:`Integer` (NumPy
    integers included), never a ``bool``, ``float`` or tuple.

    Args:
      x: any object.
    Returns:
      ``bool``.
    Raises:
      Nothing: every object gets an answer (``False`` for non-integers).
    Example:
      >>> is_int(3), is_int(np.int32(3)), is_int(True), is_int(3.0), is_int((3,))
      (True, True, False, False, False)

    Semantics: pycute ``is_int`` / CuTe ``is_integral``; pycute's also refuses NumPy integers."""
    return type(x) is int or isinstance(x, Integer)


def is_tuple(x: Any) -> bool:
    """True for a ``tuple`` (a hierarchical int tuple, ``()`` included); a ``list`` is not one.

    Args:
      x: any object.
    Returns:
      ``bool``: ``isinstance(x, tuple)``.
    Raises:
      Nothing: every object gets an answer.
    Example:
      >>> is_tuple((2, 3)), is_tuple(()), is_tuple([2, 3]), is_tuple(4)
      (True, True, False, False)

    Semantics: pycute ``is_tuple`` / CuTe ``is_tuple``."""
    return type(x) is tuple or isinstance(x, tuple)


def _fail(op: str, msg: str) -> LayoutError:
    return LayoutError(f"{op}: {msg}")


def normalize(name: str, t: Any, *, op: str, allow_none: bool = False, minimum: int | None = None) -> Any:
    """``t`` as an int tuple of Python ints (lists become tuples); raises LayoutError otherwise."""
    if type(t) is int:
        if minimum is not None and t < minimum:
            raise _fail(op, f"{name} entry {t} is below {minimum} (got {name}={t!r}).")
        return t
    if type(t) is tuple and all(type(v) is int and (minimum is None or v >= minimum) for v in t):
        return t
    if isinstance(t, (tuple, list)):
        return tuple(normalize(name, v, op=op, allow_none=allow_none, minimum=minimum) for v in t)
    if t is None:
        if allow_none:
            return None
    elif is_int(t):
        return normalize(name, operator.index(t), op=op, minimum=minimum)
    raise _fail(op, f"{name} must be an int or a nested tuple of ints (got {type(t).__name__} {t!r}).")


def congruent(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` have the same nesting (profile)."""
    if is_tuple(a):
        return is_tuple(b) and len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b, strict=True))
    return not is_tuple(b)


def flatten(t: Any) -> tuple[Any, ...]:
    """The leaves of an int tuple, left to right: ``flatten(((2, 3), 4)) == (2, 3, 4)``.

    A :class:`~functional_strides.cute.Layout` is flattened to the layout of its leaf modes
    (same map, depth at most 1).

    Args:
      t: an int, a nested tuple of ints, or a Layout.
    Returns:
      A flat ``tuple`` of the leaves (``(t,)`` for an int), or a Layout whose shape and stride
      are ``flatten(t.shape)`` and ``flatten(t.stride)``.
    Raises:
      Nothing: leaves are not checked; any non-tuple, non-layout ``t`` (a ``str``, ``None``,
        a ``list``) comes back as the one-leaf tuple ``(t,)``.
    Example:
      >>> flatten(((2, 3), (4, (5,)))), flatten(7)
      ((2, 3, 4, 5), (7,))
      >>> from functional_strides.cute import Layout
      >>> flatten(Layout(((2, 3), 4)))
      Layout((2, 3, 4),(1, 2, 6))

    Semantics: pycute ``flatten`` / CuTe ``flatten``."""
    if type(t) is tuple:
        if all(type(x) is int for x in t):
            return t
        out: list[Any] = []
        for x in t:
            if type(x) is int:
                out.append(x)
            else:
                out.extend(flatten(x))
        return tuple(out)
    if type(t) is int:
        return (t,)
    if is_tuple(t):
        return tuple(leaf for x in t for leaf in flatten(x))
    if hasattr(t, "shape") and hasattr(t, "stride") and hasattr(t, "cosize"):
        return type(t)(flatten(t.shape), flatten(t.stride))
    return (t,)


def signum(a: int) -> int:
    """-1, 0 or 1: the sign of ``a``.

    Args:
      a: a number (an int in the algebra; any value ordered against ``0`` works).
    Returns:
      ``int``: ``-1`` if ``a < 0``, ``0`` if ``a == 0``, ``1`` if ``a > 0``.
    Raises:
      TypeError: ``a`` cannot be compared with ``0`` (``None``, a ``str``, a tuple).
    Example:
      >>> signum(-7), signum(0), signum(3)
      (-1, 0, 1)

    Semantics: pycute ``signum`` / CuTe ``signum``."""
    return (a > 0) - (a < 0)


def product(a: Any) -> int:
    """Product of all leaves of an int tuple (1 for ``()``): the number of elements of a shape.

    Args:
      a: an int or a nested tuple of ints (a shape; extents count elements).
    Returns:
      ``int``: the product; an int ``a`` is returned unchanged.
    Raises:
      TypeError: a tuple leaf that does not multiply with an int (``product((2, None))``).
        A non-tuple ``a`` is returned as is, unchecked.
    Example:
      >>> product(((2, 3), 4)), product(()), product(5)
      (24, 1, 5)

    Semantics: pycute ``product`` / CuTe ``product``."""
    if is_tuple(a):
        out = 1
        for x in a:
            out *= product(x)
        return out
    return a


def inner_product(a: Any, b: Any) -> int:
    """Sum of the products of congruent leaves of ``a`` and ``b``.

    Args:
      a: an int tuple.
      b: an int tuple congruent with ``a``.
    Raises:
      LayoutError: ``a`` and ``b`` are not congruent.
    Example:
      >>> inner_product(((2, 3), 4), ((2, 1), 2))
      15

    Semantics: ``pycute.inner_product``, CuTe ``inner_product``."""
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise _fail("inner_product", f"arguments are not congruent (got a={a!r}, b={b!r}).")
        return sum(inner_product(x, y) for x, y in zip(a, b, strict=True))
    if is_tuple(b):
        raise _fail("inner_product", f"arguments are not congruent (got a={a!r}, b={b!r}).")
    return a * b


def tuple_max(a: Any) -> int:
    """Largest leaf of an int tuple.

    Args:
      a: an int or a nested tuple of ints.
    Returns:
      ``int``: the largest leaf; an int ``a`` is returned unchanged.
    Raises:
      ValueError: ``a`` (or a nested tuple in it) is ``()`` (the builtin ``max`` of nothing).
      TypeError: leaves that do not compare (``tuple_max((1, None))``).
    Example:
      >>> tuple_max(((2, 7), 4)), tuple_max(5)
      (7, 5)

    Semantics: pycute ``tuple_max``."""
    return max(tuple_max(x) for x in a) if is_tuple(a) else a


def elem_scale(a: Any, b: Any) -> Any:
    """``a`` scaled leaf by leaf by ``b`` (an int leaf of ``a`` takes the product of ``b``'s subtree).

    Args:
      a: an int tuple.
      b: an int tuple, of the rank of ``a`` when ``a`` is a tuple.
    Raises:
      LayoutError: ``a`` is a tuple and ``b`` is not, or ranks differ.
    Example:
      >>> elem_scale((2, 3), (4, (5, 2)))
      (8, 30)

    Semantics: ``pycute.elem_scale``, CuTe ``elem_scale``."""
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise _fail("elem_scale", f"a={a!r} and b={b!r} do not have the same rank.")
        return tuple(elem_scale(x, y) for x, y in zip(a, b, strict=True))
    return a * product(b)


def shape_div(a: Any, b: Any) -> Any:
    """``a`` divided by ``b`` as shapes: ``ceil(a / b)`` leaf by leaf, ``b`` consumed left to right.

    For ints one must divide the other (``shape_div(2, 4) == 1``, ``shape_div(12, 4) == 3``).
    A tuple ``a`` divided by an int divides its leaves in turn by what is left of ``b``.

    Args:
      a: the shape divided, an int tuple.
      b: the divisor, an int tuple.
    Raises:
      LayoutError: two int leaves neither of which divides the other; ranks differ.
    Example:
      >>> shape_div((6, (3, 4)), 36)
      (1, (1, 2))

    Semantics: ``pycute.shape_div``, CuTe ``shape_div``."""
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise _fail("shape_div", f"a={a!r} and b={b!r} do not have the same rank.")
            return tuple(shape_div(x, y) for x, y in zip(a, b, strict=True))
        out = []
        for x in a:
            out.append(shape_div(x, b))
            b = shape_div(b, product(x))
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if b == 0 or (a % b != 0 and (a == 0 or b % a != 0)):
        raise _fail("shape_div", f"neither of {a} and {b} divides the other (got a={a!r}, b={b!r}); "
                    "shapes must divide evenly.")
    return (a + b - 1) // b


def prefix_product(a: Any, init: Any = 1) -> Any:
    """Exclusive prefix products of ``a``'s leaves, colexicographic: the compact column-major strides.

    Args:
      a: an int tuple.
      init: the first product, an int or a tuple congruent with ``a`` (default 1).
    Raises:
      LayoutError: ``init`` is a tuple that is not congruent with ``a``.
    Example:
      >>> prefix_product(((2, 3), 4))
      ((1, 2), 6)

    Semantics: ``pycute.prefix_product``, CuTe ``prefix_product`` / ``compact_col_major``."""
    if is_tuple(a):
        if is_tuple(init):
            if len(a) != len(init):
                raise _fail("prefix_product", f"a={a!r} and init={init!r} do not have the same rank.")
            return tuple(prefix_product(x, i) for x, i in zip(a, init, strict=True))
        out = []
        for x in a:
            out.append(prefix_product(x, init))
            init = init * product(x)
        return tuple(out)
    if is_tuple(init):
        raise _fail("prefix_product", f"an int a={a!r} takes an int init (got init={init!r}).")
    return init


def idx2crd(idx: Any, shape: Any, stride: Any = None) -> Any:
    """The coordinate of index ``idx`` in ``shape`` (colexicographic; each leaf taken modulo its extent).

    Args:
      idx: an int, or a coordinate congruent with (a prefix of the nesting of) ``shape``.
      shape: int tuple.
      stride: the index strides of the leaves (default ``prefix_product(shape)``).
    Raises:
      LayoutError: ``idx``, ``shape`` and ``stride`` do not nest alike.
    Example:
      >>> idx2crd(5, (2, 3)), idx2crd(7, ((2, 2), 3))
      ((1, 2), ((1, 1), 1))

    Semantics: ``pycute.idx2crd``, CuTe ``idx2crd``."""
    if stride is None:
        stride = prefix_product(shape)
    if is_tuple(idx):
        if not is_tuple(shape) or not (len(idx) == len(shape) == len(stride)):
            raise _fail("idx2crd", f"coordinate {idx!r} does not match shape {shape!r}.")
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride, strict=True))
    if is_tuple(shape):
        if not is_tuple(stride) or len(shape) != len(stride):
            raise _fail("idx2crd", f"shape {shape!r} and stride {stride!r} are not congruent.")
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride, strict=True))
    return (idx // stride) % shape


def crd2idx(crd: Any, shape: Any, stride: Any = None) -> int:
    """The index ``sum(crd_i * stride_i)`` of coordinate ``crd``; an int ``crd`` is first split over
    ``shape`` colexicographically (its last mode takes what is left, unbounded, as in CuTe).

    ``None`` in ``crd`` counts as 0 (a sliced mode).

    Args:
      crd: a coordinate (ints and ``None``), or an int index split by ``shape``.
      shape: the shape, an int tuple.
      stride: the strides of its leaves (default: ``prefix_product(shape)``, compact column-major).
    Raises:
      LayoutError: ``crd`` nests deeper than ``shape``, or ranks differ.
    Example:
      >>> crd2idx((1, 2), (2, 3)), crd2idx(5, (2, 3), (3, 1))
      (5, 5)

    Semantics: ``pycute.crd2idx``, CuTe ``crd2idx``."""
    if stride is None:
        stride = prefix_product(shape)
    if is_tuple(crd):
        if not is_tuple(shape) or not (len(crd) == len(shape) == len(stride)):
            raise _fail("crd2idx", f"coordinate {crd!r} does not match shape {shape!r} (stride {stride!r}).")
        return sum(crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride, strict=True))
    if crd is None:
        crd = 0
    if is_tuple(shape):
        if not is_tuple(stride) or len(shape) != len(stride):
            raise _fail("crd2idx", f"shape {shape!r} and stride {stride!r} are not congruent.")
        if not shape:
            return 0
        result = 0
        for s, d in zip(shape[:-1], stride[:-1], strict=True):
            n = product(s)
            result += crd2idx(crd % n, s, d)
            crd //= n
        return result + crd2idx(crd, shape[-1], stride[-1])
    return crd * stride


def crd2crd(crd: Any, dst_shape: Any, src_shape: Any = None) -> Any:
    """Re-express coordinate ``crd`` in ``dst_shape`` (through its colexicographic index).

    Args:
      crd: the coordinate, congruent with ``src_shape`` (or an int).
      dst_shape: the shape to express it in.
      src_shape: the shape ``crd`` is a coordinate of (needed for a tuple ``crd`` onto an int
        ``dst_shape``).
    Raises:
      LayoutError: a tuple ``crd`` onto an int ``dst_shape`` without ``src_shape``; an int
        coordinate outside its extent.
    Example:
      >>> crd2crd(5, (2, 3)), crd2crd((1, 2), 6, (2, 3))
      ((1, 2), 5)

    Semantics: ``pycute.crd2crd``, CuTe ``crd2crd``."""
    if is_tuple(crd):
        if is_tuple(dst_shape):
            if len(crd) != len(dst_shape):
                raise _fail("crd2crd", f"coordinate {crd!r} and dst_shape {dst_shape!r} differ in rank.")
            return tuple(crd2crd(x, y) for x, y in zip(crd, dst_shape, strict=True))
        if src_shape is None:
            raise _fail("crd2crd", f"a tuple coordinate {crd!r} onto an int shape needs src_shape.")
        return crd2idx(crd, src_shape)
    if is_tuple(dst_shape):
        return idx2crd(crd, dst_shape)
    if not 0 <= crd < dst_shape:
        raise _fail("crd2crd", f"coordinate {crd} is outside extent {dst_shape}.")
    return crd


def slice_(crd: Any, trg: Any) -> Any:
    """The parts of ``trg`` (a shape or a stride) that ``crd`` keeps: modes where ``crd`` is ``None``.

    Kept modes are concatenated one level flat, as CuTe's ``filter_tuple``.

    Args:
      crd: a coordinate of ints and ``None`` (``None`` keeps a mode).
      trg: the shape or stride sliced, congruent with ``crd``.
    Raises:
      LayoutError: ``crd`` nests deeper than ``trg`` or ranks differ.
    Example:
      >>> slice_((None, 1), (4, 8)), slice_((None, (1, None)), (2, (3, 4)))
      ((4,), (2, 4))

    Semantics: ``pycute.slice_``, CuTe ``slice``."""
    if is_tuple(crd):
        if not is_tuple(trg) or len(crd) != len(trg):
            raise _fail("slice_", f"coordinate {crd!r} does not match {trg!r}.")
        return tuple(x for c, t in zip(crd, trg, strict=True) for x in slice_(c, t))
    if crd is None:
        return (trg,)
    return ()


def has_none(a: Any) -> bool:
    """True when ``a`` holds a ``None`` leaf: a slicing coordinate (``None`` is CuTe's ``_``).

    Args:
      a: a coordinate: an int, ``None`` or a nested tuple of them.
    Returns:
      ``bool``; ``has_none(None)`` is ``True``.
    Raises:
      Nothing: any non-tuple leaf other than ``None`` counts as an int coordinate.
    Example:
      >>> has_none((None, (1, None))), has_none((0, (1, 2))), has_none(None)
      (True, False, True)

    Semantics: pycute ``has_none`` / CuTe ``has_underscore``."""
    return any(has_none(v) for v in a) if is_tuple(a) else a is None
