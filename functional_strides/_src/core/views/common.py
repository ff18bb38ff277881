"""Argument parsing shared by the view rules: dims, sizes and indices, and the hook through
which a traced index or offset reaches the array layer's offset arithmetic."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import LayoutError, LayoutTypeError, OutOfRangeError
from ..layout import Layout, is_static_offset, is_traced
from ..pytypes import Shape

__all__ = ["canonical_dim", "infer_size"]


def _index(op: str, name: str, value: Any, error: type[LayoutTypeError] = LayoutTypeError) -> int:
    """``value`` as a Python int (ints, NumPy integers, integer JAX scalars); anything else
    (a float, a string, a bool, ``None``) raises ``error``, a ``TypeError`` as in PyTorch."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        raise error(f"{op}: {name} must be an int, not a bool (got {name}={value!r}); pass an int.")
    if is_traced(value):  # int() of a tracer fails too: the value is unknown until the program runs
        raise error(f"{op}: {name} must be an int known at trace time, not a traced value (got "
                    f"{name}={value!r}): extents and strides are static under jit, vmap and grad. Pass it "
                    "as a Python int (a static argument: jax.jit(f, static_argnums=...)), or compute it "
                    "from shapes.")
    try:
        return operator.index(value)
    except TypeError:
        raise error(f"{op}: {name} must be an int, not {type(value).__name__} (got {name}={value!r}); "
                    f"pass an int, e.g. {name}=int(...).") from None

def _traced_int(value: Any) -> bool:
    """True for a traced integer scalar (its value is unknown at trace time)."""
    return (is_traced(value) and getattr(value, "ndim", None) == 0
            and getattr(getattr(value, "dtype", None), "kind", "") in ("i", "u"))

def _known_int(value: Any) -> int | None:
    """``value`` as a Python int when it is an integer known now (an int, a NumPy integer,
    a concrete 0-d integer array), else ``None`` (a tracer, a batch of offsets, a non-integer)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    kind = getattr(getattr(value, "dtype", None), "kind", "i")
    if getattr(value, "ndim", 0) != 0 or kind not in ("i", "u"):
        return None
    if _traced_int(value):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None

def _plain_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """``key`` with known integers (NumPy, concrete 0-d arrays) as Python ints, so that an
    error message reads the same whatever the type of the index."""
    def plain(k: Any) -> Any:
        if isinstance(k, slice):
            return slice(plain(k.start), plain(k.stop), plain(k.step))
        i = _known_int(k)
        return k if i is None else i
    return tuple(plain(k) for k in key)

#: Offset arithmetic on traced values (a traced index into a dim, or a traced offset shifted
#: by a static amount), installed by the array layer (:mod:`functional_strides._src.array.traced`): the
#: view algebra itself never imports jax.
_traced_offsets: Any = None

def _dynamic_offset(op: str, layout: Layout, d: int, index: Any, high: int) -> Any:
    """``layout.offset + clamp(index) * strides[d]`` for a traced ``index`` into dim ``d``
    (clamped into ``[0, high]``); a stride-0 dim (or ``high == 0``) leaves the offset as it is,
    whatever the extent."""
    if layout.strides[d] == 0 or high <= 0:
        return layout.offset
    return _traced_offsets.dynamic_offset(op, layout, d, index, high)

def _shifted_offset(op: str, layout: Layout, delta: int) -> Any:
    """``layout.offset + delta`` for a static ``delta``: exact for an int offset, else in the
    width the array layer picks for the traced (or per-item) offset."""
    base = layout.offset
    if is_static_offset(base) or delta == 0:
        return base + delta
    return _traced_offsets.shifted_offset(op, layout, delta)

def canonical_dim(dim: Any, ndim: int, *, op: str, layout: Layout | None = None) -> int:
    """Wrap a possibly negative ``dim`` into ``[0, ndim)``; rank 0 accepts -1 and 0.

    Args:
      dim: a dim index: an int, a NumPy integer or a concrete integer 0-d array; negative
        counts from the end.
      ndim: the rank of the tensor indexed.
      op: the operation's name, which error messages start with.
      layout: the layout indexed, named in the error message when given.
    Returns:
      ``int`` in ``[0, ndim)`` (``0`` for rank 0).
    Raises:
      OutOfRangeError: ``dim`` outside ``[-max(ndim,1), max(ndim,1))`` (an ``IndexError``
        too, as PyTorch's).
      LayoutTypeError: ``dim`` is not an integer (a float, a bool, a string, ``None``).
    Example:
      >>> canonical_dim(-1, 3, op="select"), canonical_dim(-1, 0, op="select")
      (2, 0)
      >>> canonical_dim(3, 3, op="select", layout=Layout((2, 3, 4), (12, 4, 1)))
      Traceback (most recent call last):
      ...
      functional_strides.OutOfRangeError: select: dimension out of range (expected ... [-3, 2], but got 3) ...

    Semantics: ATen ``maybe_wrap_dim`` (``wrap_scalar=True``)."""
    if type(dim) is int and 0 <= dim < ndim:
        return dim
    dim = _index(op, "dim", dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise OutOfRangeError(
            f"{op}: dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {dim}) for a tensor of rank {ndim}{_at(layout)}."
        )
    return dim + n if dim < 0 else dim

def _at(layout: Layout | None) -> str:
    """`` (layout (2,3):(3,1)+0)`` for messages, or nothing."""
    return f" (layout {layout})" if layout is not None else ""

def _dims_tuple(dims: Any) -> tuple[Any, ...]:
    if isinstance(dims, Sequence) and not isinstance(dims, str):
        return tuple(dims)
    return (dims,)

def infer_size(shape: Sequence[Any], numel: int, *, op: str = "view",
               layout: Layout | None = None) -> Shape:
    """Resolve one ``-1`` in ``shape`` so that ``prod(shape) == numel``; ``layout``, when
    given, is named in error messages.

    Args:
      shape: target extents (ints, at most one of them -1).
      numel: the element count the shape must hold.
      op: the operation's name, which error messages start with.
      layout: the layout reshaped, named in error messages when given.
    Returns:
      The shape as a tuple of ints, the ``-1`` replaced by ``numel // prod(others)``.
    Raises:
      LayoutError: more than one -1, an extent < -1, an ambiguous -1 (0 elements), or a
        product that does not equal ``numel``.
      LayoutTypeError: an entry of ``shape`` is not an integer.
    Example:
      >>> infer_size((2, -1), 12), infer_size([3, 4], 12)
      ((2, 6), (3, 4))
      >>> infer_size((5, -1), 12)
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: view: shape [5, -1] is invalid for input of size 12 ...

    Semantics: ATen ``infer_size`` (behind ``torch.Tensor.view``/``reshape``)."""
    if not all(type(s) is int for s in shape):
        shape = tuple(_index(op, "shape", s) for s in shape)
    shape = tuple(shape)
    if -1 not in shape and min(shape, default=0) >= 0 and math.prod(shape) == numel:
        return shape  # the common case: explicit, valid extents
    known, infer = 1, None
    for d, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise LayoutError(
                    f"{op}: only one dimension can be inferred (got shape {list(shape)} with -1 "
                    f"at dims {infer} and {d}){_at(layout)}."
                )
            infer = d
        elif s < 0:
            raise LayoutError(f"{op}: invalid shape dimension {s} in shape {list(shape)}{_at(layout)}; "
                              "extents must be >= 0, or -1 to infer one.")
        else:
            known *= s
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is None:
            return shape
        if known == 0:
            raise LayoutError(
                f"{op}: cannot reshape tensor of 0 elements into shape {list(shape)} because "
                f"the unspecified dimension size -1 can be any value and is ambiguous{_at(layout)}."
            )
        return (*shape[:infer], numel // known, *shape[infer + 1:])
    raise LayoutError(
        f"{op}: shape {list(shape)} is invalid for input of size {numel} "
        f"(the extents multiply to {known}{' times the inferred -1' if infer is not None else ''})"
        f"{_at(layout)}."
    )
