"""The implementation of :mod:`functional_strides.views` (its public names are documented there)."""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .errors import IndexTypeError, LayoutError, LayoutTypeError, OutOfRangeError, ViewError
from .layout import (
    Layout,
    _int_tuple,
    _trusted,
    check_offset,
    contiguous_strides,
    is_static_offset,
    is_traced,
)
from .modes import coalesce_modes
from .pytypes import Offset, Shape, Strides

__all__ = [
    "as_strided",
    "canonical_dim",
    "chunk",
    "diagonal",
    "expand",
    "flatten_shape",
    "flip",
    "fliplr",
    "flipud",
    "getitem",
    "infer_size",
    "movedim",
    "mT",
    "narrow",
    "permute",
    "reverse_dims",
    "select",
    "split",
    "squeeze",
    "t",
    "transpose",
    "unbind",
    "unflatten_shape",
    "unfold",
    "unsqueeze",
    "view",
    "view_strides",
]


def _index(op: str, name: str, value: Any, error: type[LayoutTypeError] = LayoutTypeError) -> int:
    """``value`` as a Python int (ints, NumPy integers, integer JAX scalars); anything else
    (a float, a string, a bool, ``None``) raises ``error``, a ``TypeError`` as in PyTorch."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        raise error(f"{op}: {name} must be an int, not a bool (got {name}={value!r}); pass an int.")
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


def view_strides(shape: Shape, strides: Strides, new_shape: Shape) -> Strides | None:
    """Strides that let ``new_shape`` alias a ``(shape, strides)`` layout, or ``None``.

    ``shape`` is split into chunks of dims that address storage as one block: the modes of
    CuTe's ``coalesce`` of the dims read innermost first; the view
    exists iff ``new_shape`` splits into chunks of equal element counts. ``new_shape`` must
    already have ``prod(new_shape) == prod(shape)``.

    Args:
      shape: the source layout's extents.
      strides: the source layout's strides (elements), one per dim.
      new_shape: the target extents, already resolved (no -1; see
        :func:`functional_strides.views.infer_size`).
    Returns:
      The strides (elements) of ``new_shape`` over the same storage, or ``None`` when no
      view exists (a new dim would span two storage chunks); the offset is unchanged.
    Raises:
      Nothing of its own: the arguments are taken as checked (:func:`view` checks them).
      With unequal element counts the result is meaningless; shape and strides of
      different lengths may raise Python's ``ValueError`` from ``zip``.
    Example:
      >>> view_strides((2, 3, 4), (12, 4, 1), (6, 4))
      (4, 1)
      >>> view_strides((4, 3), (6, 2), (2, 2, 3)), view_strides((4, 3), (6, 2), (12,))
      ((12, 6, 2), (2,))
      >>> view_strides((3, 4), (1, 3), (12,)) is None    # a transpose: no 1-D view
      True

    Semantics: ATen ``computeStride`` (``TensorUtils.cpp``), size-0 and size-1 rules included
    (the strides ``torch.Tensor.view`` gives, ``None`` where it refuses).
    """
    if strides == contiguous_strides(shape) and 0 not in shape:
        return contiguous_strides(new_shape)  # one chunk: what the general walk gives, faster
    if len(shape) == 0:
        return (1,) * len(new_shape)
    numel = math.prod(shape)
    if numel == 0 and tuple(shape) == tuple(new_shape):
        return tuple(strides)
    if numel == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    for chunk_numel, chunk_base, _ in _storage_chunks(shape, strides):
        view_numel = 1
        while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
            new_strides[view_d] = view_numel * chunk_base
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != chunk_numel:
            return None
    return tuple(new_strides) if view_d == -1 else None


def _storage_chunks(shape: Shape, strides: Strides) -> list[tuple[int, int, tuple[int, ...]]]:
    """``[(numel, base stride, dims), ...]``, innermost chunk first: the dims that address storage
    as one block, as ``coalesce`` merges them (size-1 dims never end a chunk).

    ATen's walk starts its innermost chunk at the last dim even when that dim has extent 1
    (its stride then becomes the chunk's base); that chunk holds one element when the next
    dim does not continue it, and only gives strides to trailing size-1 dims of a view.
    """
    rank = len(shape)
    modes = coalesce_modes(shape[::-1], strides[::-1])   # CuTe's column-major order: innermost first
    chunks = [(n, d, tuple(sorted(rank - 1 - m for m in members))) for n, d, members in modes]
    if rank and shape[-1] == 1 and (not chunks or chunks[0][1] != strides[-1]):
        chunks.insert(0, (1, strides[-1], (rank - 1,)))
    return chunks


def _chunks(shape: Shape, strides: Strides) -> list[tuple[int, int]]:
    """Inclusive dim ranges of the storage-contiguous chunks that ``view_strides`` uses, outermost first."""
    return [(dims[0], dims[-1]) for _, _, dims in reversed(_storage_chunks(shape, strides))]


def _explain_view(layout: Layout, new_shape: Shape) -> str:
    chunks = _chunks(layout.shape, layout.strides)
    parts = []
    for lo, hi in chunks:
        dims = f"dim {lo}" if lo == hi else f"dims {lo}-{hi}"
        ext = math.prod(layout.shape[lo:hi + 1])
        parts.append(f"{dims} ({ext} elements, stride {layout.strides[hi]})")
    return (
        f"view: shape {list(new_shape)} is not compatible with layout {layout} "
        f"(at least one new dim spans two storage-contiguous chunks; the chunks are "
        f"{'; '.join(parts)}, and each new dim must lie inside one chunk). "
        "Use reshape(), which copies when it must, or contiguous() first."
    )


def view(layout: Layout, shape: Sequence[Any]) -> Layout:
    """A view of the same elements with a new ``shape`` (one ``-1`` inferred); never copies.

    Forms: ``x.view(*shape)``, ``fs.view(x, shape)``, ``views.view(layout, shape)``. The
    array forms also take a dtype, ``x.view(dtype)`` (a NumPy/JAX dtype, a name or a
    ``torch.dtype``): the same bytes read as ``dtype`` with PyTorch's rules, shape and
    strides, over a bitcast copy of the storage (as ``fs.view_as_real`` and
    ``fs.view_as_complex``).

    Args:
      shape: target extents, ints (one may be -1); ``prod(shape) == numel``.
    Returns:
      The layout (or array over the same storage) of ``shape``, with the strides PyTorch's
      ``computeStride`` gives (in elements); the offset is unchanged.
    Raises:
      LayoutError: bad ``shape``: two -1, an extent below -1, or a product other than numel
        (see :func:`functional_strides.views.infer_size`).
      ViewError: no strides express ``shape`` over these elements (a new dim would span two
        storage-contiguous chunks; the message lists the chunks): use ``reshape``, which
        copies when it must, or ``contiguous()`` first.
      LayoutTypeError: an extent that is not an int.
    Example:
      >>> x = fs.from_array(jnp.arange(12.0)).view(3, 4)
      >>> y = x.view(2, -1)
      >>> y.shape, y.stride(), y.storage_offset()
      ((2, 6), (6, 1), 0)
      >>> str(views.view(fs.Layout((3, 4), (4, 1)), (2, -1)))
      '(2,6):(6,1)+0'

    Semantics: ``torch.Tensor.view(*shape)``."""
    new_shape = infer_size(shape, layout.numel, op="view", layout=layout)
    strides = view_strides(layout.shape, layout.strides, new_shape)
    if strides is None:
        raise ViewError(_explain_view(layout, new_shape))
    return _trusted(new_shape, strides, layout.offset)


def as_strided(layout: Layout, size: Any, stride: Any, storage_offset: Offset = None) -> Layout:
    """A view of the storage with the given ``size``, ``stride`` and ``storage_offset``
    (all in elements), ignoring the input's own strides; ``storage_offset=None`` keeps the
    input's offset, an explicit one is absolute.

    Forms: ``x.as_strided(size, stride, storage_offset=None)``, ``fs.as_strided(x, ...)``,
    ``views.as_strided(layout, ...)`` (the last checks no storage bounds: the array forms do).

    Args:
      size: extents, a sequence of ints >= 0.
      stride: one stride per extent, ints >= 0 (elements).
      storage_offset: int >= 0 (elements), or ``None``.
    Returns:
      ``Layout(size, stride, offset)`` (over the same storage for the array forms).
    Raises:
      LayoutError: ``size`` and ``stride`` lengths differ, or a negative size or stride.
      StorageError: a negative offset, or (array forms) a view reaching past the storage's end.
      LayoutTypeError: ``size``/``stride`` not a sequence of ints (a bare int included, as in
        PyTorch), or an entry or offset that is not an integer.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0))
      >>> y = x.as_strided((2, 2), (1, 2), 1)
      >>> y.shape, y.stride(), y.storage_offset(), y.tolist()
      ((2, 2), (1, 2), 1, [[1.0, 3.0], [2.0, 4.0]])

    Semantics: ``torch.as_strided``."""
    for name, value in (("size", size), ("stride", stride)):
        if isinstance(value, str) or not isinstance(value, Iterable):
            raise LayoutTypeError(f"as_strided: {name} must be a tuple of ints, not {type(value).__name__} "
                                  f"(got {name}={value!r}); pass e.g. {name}=({value!r},).")
    size = _int_tuple("size", size, allow_negative=True)
    stride = _int_tuple("stride", stride, allow_negative=True)
    if storage_offset is not None and not is_static_offset(storage_offset) and \
            getattr(getattr(storage_offset, "dtype", None), "kind", None) not in ("i", "u"):
        raise LayoutTypeError(
            f"as_strided: storage_offset must be an int, not {type(storage_offset).__name__} (got "
            f"storage_offset={storage_offset!r}, size={list(size)}, stride={list(stride)}); it counts "
            "elements of the storage.")
    offset = layout.offset if storage_offset is None else storage_offset
    if len(size) != len(stride):
        raise LayoutError(
            f"as_strided: mismatch in length of strides and shape (got size={list(size)} of "
            f"length {len(size)} and stride={list(stride)} of length {len(stride)})."
        )
    if any(s < 0 for s in stride):
        raise LayoutError(
            f"as_strided: negative strides are not supported (got stride={list(stride)}); "
            "strides count elements and must be >= 0."
        )
    if any(n < 0 for n in size):
        raise LayoutError(f"as_strided: negative sizes are not supported (got size={list(size)}).")
    known = _known_int(offset)
    if known is not None:
        check_offset("as_strided", known, size, stride)
    return Layout(size, stride, offset)


def permute(layout: Layout, dims: Sequence[Any]) -> Layout:
    """Reorder dims: dim ``i`` of the result is dim ``dims[i]`` of the input (a view).

    Forms: ``x.permute(*dims)``, ``fs.permute(x, dims)``, ``views.permute(layout, dims)``.

    Args:
      dims: a permutation of ``range(ndim)``; negative dims wrap.
    Returns:
      Shape and strides (elements) reordered by ``dims``; offset unchanged.
    Raises:
      LayoutError: ``len(dims) != ndim``, or a dim repeats.
      OutOfRangeError: a dim is out of range.
      LayoutTypeError: a dim that is not an int.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
      >>> y = x.permute(1, 0)
      >>> y.shape, y.stride(), y.storage_offset()
      ((3, 2), (1, 3), 0)

    Semantics: ``torch.permute``."""
    dims = tuple(dims)
    if not all(type(d) is int for d in dims):
        dims = tuple(_index("permute", f"dims[{i}]", d) for i, d in enumerate(dims))
    if len(dims) != layout.ndim:
        raise LayoutError(
            f"permute: the number of dims {len(dims)} in dims={list(dims)} does not match "
            f"the rank {layout.ndim} of layout {layout}; give a permutation of range({layout.ndim})."
        )
    n = layout.ndim
    canon = tuple(d if type(d) is int and 0 <= d < n else canonical_dim(d, n, op="permute", layout=layout)
                  for d in dims)
    if len(set(canon)) != len(canon):
        raise LayoutError(f"permute: repeated dim in dims={list(dims)} (layout {layout}); give a "
                          f"permutation of range({layout.ndim}).")
    return _trusted(tuple(layout.shape[d] for d in canon),
                  tuple(layout.strides[d] for d in canon), layout.offset)


def transpose(layout: Layout, dim0: Any, dim1: Any) -> Layout:
    """Swap dims ``dim0`` and ``dim1`` (a view).

    Forms: ``x.transpose(dim0, dim1)``, ``fs.transpose(x, dim0, dim1)``,
    ``views.transpose(layout, dim0, dim1)``.

    Args:
      dim0: a dim in ``[-ndim, ndim)`` (rank 0 accepts 0 and -1).
      dim1: the other dim, likewise.
    Returns:
      Shape and strides (elements) with the two entries swapped; offset unchanged.
    Raises:
      OutOfRangeError: a dim is out of range.
      LayoutTypeError: a dim that is not an int.
    Example:
      >>> x = fs.from_array(jnp.arange(24.0).reshape(2, 3, 4))
      >>> y = x.transpose(0, 2)
      >>> y.shape, y.stride()
      ((4, 3, 2), (1, 4, 12))

    Semantics: ``torch.transpose``."""
    d0 = canonical_dim(dim0, layout.ndim, op="transpose", layout=layout)
    d1 = canonical_dim(dim1, layout.ndim, op="transpose", layout=layout)
    if layout.ndim == 0:
        return layout
    shape, strides = list(layout.shape), list(layout.strides)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return _trusted(tuple(shape), tuple(strides), layout.offset)


def t(layout: Layout) -> Layout:
    """Transpose of an array of rank <= 2 (rank 0 and 1 come back unchanged; a view).

    Forms: ``x.t()``, ``fs.t(x)``, ``views.t(layout)``.

    Returns:
      ``transpose(0, 1)`` for rank 2, else the input's layout.
    Raises:
      LayoutError: rank > 2 (use ``transpose(dim0, dim1)`` or ``mT``).
    Example:
      >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
      >>> x.t().shape, x.t().stride()
      ((3, 2), (1, 3))

    Semantics: ``torch.t``."""
    if layout.ndim > 2:
        raise LayoutError(f"t: expects a layout of rank <= 2, but layout {layout} has rank "
                          f"{layout.ndim}; use transpose(dim0, dim1) or mT.")
    return transpose(layout, 0, 1) if layout.ndim == 2 else layout


def flip(layout: Layout, dims: Any) -> Layout:
    """Reverse the order of elements along ``dims``: a view with those strides negated.

    Forms: ``x.flip(*dims)``, ``fs.flip(x, dims)``, ``views.flip(layout, dims)``.

    Element ``i`` of a flipped dim of extent ``n`` is element ``n - 1 - i`` of the input, so
    the offset moves to the input's last element along it (``offset + (n-1)*stride``) and the
    stride changes sign. A dim of extent 0 or 1, or of stride 0, keeps its offset. Writes
    through the result (``y.at[...].set(v)``) reach the input's storage in mirrored order.

    Args:
      dims: a tuple or list of ints, each in ``[-ndim, ndim)``, no dim twice; ``()`` is the
        identity (rank 0 accepts 0 and -1, as PyTorch's). ``fs.flip`` refuses a bare int, as
        ``torch.flip`` does; the method takes ``x.flip(0, 1)`` or ``x.flip((0, 1))``.
    Returns:
      The same shape; strides of ``dims`` negated (elements); the offset moved as above.
    Raises:
      LayoutTypeError: ``dims`` is not a sequence of ints (an int, ``None``, a float entry).
      OutOfRangeError: a dim is out of range.
      LayoutError: a dim appears twice.
    Example:
      >>> y = fs.from_array(jnp.arange(6).reshape(2, 3)).flip(0)
      >>> y.tolist(), y.stride(), y.storage_offset()
      ([[3, 4, 5], [0, 1, 2]], (-3, 1), 3)
      >>> str(views.flip(fs.Layout((2, 3), (3, 1)), [0, 1]))
      '(2,3):(-3,-1)+5'

    Semantics: ``torch.flip``: same shape and values, but PyTorch copies (its result is
    contiguous, offset 0) where this is a view with negative strides, as NumPy's ``np.flip``."""
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence):
        raise LayoutTypeError(f"flip: dims must be a tuple of ints, not {type(dims).__name__} (got "
                              f"dims={dims!r}, layout {layout}); pass e.g. dims=({dims!r},).")
    canon = tuple(canonical_dim(_index("flip", f"dims[{i}]", d), layout.ndim, op="flip", layout=layout)
                  for i, d in enumerate(dims))
    for d in canon:
        if canon.count(d) > 1:
            raise LayoutError(f"flip: dim {d} appears multiple times in the list of dims (got "
                              f"dims={list(dims)}, layout {layout}); give each dim once.")
    if layout.ndim == 0 or not canon:
        return layout
    strides = tuple(-s if d in canon else s for d, s in enumerate(layout.strides))
    delta = 0 if layout.is_empty else sum((layout.shape[d] - 1) * layout.strides[d] for d in set(canon))
    return _trusted(layout.shape, strides, _shifted_offset("flip", layout, delta))


def fliplr(layout: Layout) -> Layout:
    """Reverse dim 1 (left/right): ``flip((1,))`` of an array of rank >= 2, a view.

    Forms: ``x.fliplr()``, ``fs.fliplr(x)``, ``views.fliplr(layout)``.

    Returns:
      The same shape; the stride of dim 1 negated, the offset moved to its last element.
    Raises:
      LayoutError: rank < 2 (``Input must be >= 2-d``, as PyTorch).
    Example:
      >>> y = fs.from_array(jnp.arange(6).reshape(2, 3)).fliplr()
      >>> y.tolist(), y.stride(), y.storage_offset()
      ([[2, 1, 0], [5, 4, 3]], (3, -1), 2)

    Semantics: ``torch.fliplr`` (which copies; this is a view)."""
    if layout.ndim < 2:
        raise LayoutError(f"fliplr: Input must be >= 2-d (got layout {layout} of rank {layout.ndim}); "
                          "use flip(x, (0,)) for a 1-d array.")
    return flip(layout, (1,))


def flipud(layout: Layout) -> Layout:
    """Reverse dim 0 (up/down): ``flip((0,))`` of an array of rank >= 1, a view.

    Forms: ``x.flipud()``, ``fs.flipud(x)``, ``views.flipud(layout)``.

    Returns:
      The same shape; the stride of dim 0 negated, the offset moved to its last element.
    Raises:
      LayoutError: rank 0 (``Input must be >= 1-d``, as PyTorch).
    Example:
      >>> y = fs.from_array(jnp.arange(6).reshape(2, 3)).flipud()
      >>> y.tolist(), y.stride(), y.storage_offset()
      ([[3, 4, 5], [0, 1, 2]], (-3, 1), 3)

    Semantics: ``torch.flipud`` (which copies; this is a view)."""
    if layout.ndim < 1:
        raise LayoutError(f"flipud: Input must be >= 1-d (got layout {layout} of rank 0).")
    return flip(layout, (0,))


def reverse_dims(layout: Layout) -> Layout:
    """All dims reversed (a view); warns, as PyTorch does, when the rank is not 2.

    Forms: ``x.T``, ``fs.T(x)``, ``views.reverse_dims(layout)``.

    Returns:
      Shape and strides (elements) in reverse order; offset unchanged.
    Raises:
      Nothing for any rank; a ``UserWarning`` (PyTorch's deprecation) when the rank is not 2.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
      >>> x.T.shape, x.T.stride()
      ((3, 2), (1, 3))

    Semantics: ``torch.Tensor.T``."""
    if layout.ndim != 2:
        warnings.warn(
            "The use of `x.T` on arrays of dimension other than 2 to reverse their shape is "
            "deprecated in PyTorch; use `x.mT` to transpose batches of matrices or "
            "`x.permute(*reversed(range(x.ndim)))` to reverse the dims.",
            UserWarning,
            stacklevel=3,
        )
    return permute(layout, tuple(range(layout.ndim - 1, -1, -1)))


def mT(layout: Layout) -> Layout:  # noqa: N802 - PyTorch's name
    """The last two dims swapped (a batch of matrices transposed; a view). Rank 0 comes
    back unchanged with a ``UserWarning``, as PyTorch's deprecation does.

    Forms: ``x.mT``, ``fs.mT(x)``, ``views.mT(layout)``.

    Returns:
      ``transpose(-2, -1)``.
    Raises:
      LayoutError: rank 1.
    Example:
      >>> x = fs.from_array(jnp.arange(24.0).reshape(2, 3, 4))
      >>> x.mT.shape, x.mT.stride()
      ((2, 4, 3), (12, 1, 4))

    Semantics: ``torch.Tensor.mT``."""
    if layout.ndim == 0:
        warnings.warn("mT: `x.mT` on a rank-0 array is deprecated in PyTorch and returns the "
                      "array unchanged; use x.mT only on arrays of rank >= 2.", UserWarning, stacklevel=3)
        return layout
    if layout.ndim < 2:
        raise LayoutError(f"mT: expects a layout of rank >= 2, but layout {layout} has rank {layout.ndim}.")
    return transpose(layout, -2, -1)


def movedim(layout: Layout, source: Any, destination: Any) -> Layout:
    """Move dims ``source`` to positions ``destination``; the other dims keep their order (a view).

    Forms: ``x.movedim(source, destination)``, ``fs.movedim(x, source, destination)``,
    ``views.movedim(layout, source, destination)``.

    Args:
      source: an int or a sequence of ints; negative dims wrap.
      destination: as ``source``, of equal length: the positions the ``source`` dims move to.
    Returns:
      A permutation of the input's shape and strides (elements); offset unchanged.
    Raises:
      LayoutError: ``source`` and ``destination`` lengths differ, or either repeats a dim.
      OutOfRangeError: a dim is out of range.
    Example:
      >>> x = fs.from_array(jnp.arange(24.0).reshape(2, 3, 4))
      >>> y = x.movedim(0, -1)
      >>> y.shape, y.stride()
      ((3, 4, 2), (4, 1, 12))

    Semantics: ``torch.movedim`` (NumPy's ``moveaxis``)."""
    src, dst = _dims_tuple(source), _dims_tuple(destination)
    if len(src) != len(dst):
        raise LayoutError(f"movedim: invalid source or destination dims: source ({list(src)} dims) "
                          f"should contain the same number of dims as destination ({list(dst)} dims) "
                          f"(layout {layout}).")
    n = layout.ndim
    src = tuple(canonical_dim(d, n, op="movedim", layout=layout) for d in src)
    dst = tuple(canonical_dim(d, n, op="movedim", layout=layout) for d in dst)
    if len(set(src)) != len(src):
        raise LayoutError(f"movedim: repeated dim in source ({list(src)}) (layout {layout}).")
    if len(set(dst)) != len(dst):
        raise LayoutError(f"movedim: repeated dim in destination ({list(dst)}) (layout {layout}).")
    if n == 0:
        return layout
    order: list[int | None] = [None] * n
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    perm = [o if o is not None else next(rest) for o in order]
    return permute(layout, perm)


def squeeze(layout: Layout, dim: Any = None) -> Layout:
    """Drop size-1 dims: all of them, or those listed in ``dim`` (an int or a tuple of
    ints) that have size 1; listed dims of another size are kept silently, as in PyTorch (a view).

    Forms: ``x.squeeze()`` / ``x.squeeze(dim)``, ``fs.squeeze(x, dim=None)``,
    ``views.squeeze(layout, dim=None)``.

    Args:
      dim: an int or a tuple of ints; omitted (the method) or ``None`` (the functions) for all.
    Returns:
      The shape and strides (elements) without the dropped dims; offset unchanged.
    Raises:
      LayoutError: a dim appears twice in ``dim`` (after wrapping negative dims).
      OutOfRangeError: a dim is out of range.
      LayoutTypeError: ``x.squeeze(None)`` (PyTorch refuses it: omit ``dim``), or a dim that
        is not an int.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0).reshape(1, 3, 1, 2))
      >>> x.squeeze().shape, x.squeeze(0).shape, x.squeeze((0, 2)).stride()
      ((3, 2), (3, 1, 2), (2, 1))

    Semantics: ``torch.squeeze``."""
    if dim is None:
        drop = {d for d, n in enumerate(layout.shape) if n == 1}
    else:
        wrapped = [canonical_dim(d, layout.ndim, op="squeeze", layout=layout) for d in _dims_tuple(dim)]
        dims = set(wrapped)
        if len(dims) != len(wrapped):
            repeated = next(d for d in wrapped if wrapped.count(d) > 1)
            raise LayoutError(f"squeeze: dim {repeated} appears multiple times in the list of dims "
                              f"(got dim={dim!r} for layout {layout}); list each dim once.")
        drop = {d for d in dims if layout.ndim and layout.shape[d] == 1}
    keep = [d for d in range(layout.ndim) if d not in drop]
    return _trusted(tuple(layout.shape[d] for d in keep), tuple(layout.strides[d] for d in keep),
                  layout.offset)


def unsqueeze(layout: Layout, dim: Any) -> Layout:
    """Insert a size-1 dim at ``dim`` (a view); its stride is ``shape[dim] * strides[dim]``
    of the dim it precedes, or 1 at the end.

    Forms: ``x.unsqueeze(dim)``, ``fs.unsqueeze(x, dim)``, ``views.unsqueeze(layout, dim)``.

    Args:
      dim: a position in ``[-ndim-1, ndim]``.
    Returns:
      Rank ``ndim + 1``; offset unchanged.
    Raises:
      OutOfRangeError: ``dim`` is out of range.
      LayoutTypeError: ``dim`` is not an int.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
      >>> x.unsqueeze(1).shape, x.unsqueeze(1).stride(), x.unsqueeze(-1).stride()
      ((2, 1, 3), (3, 3, 1), (3, 1, 1))

    Semantics: ``torch.unsqueeze`` (ATen ``inferUnsqueezeGeometry``)."""
    d = canonical_dim(dim, layout.ndim + 1, op="unsqueeze", layout=layout)
    stride = 1 if d >= layout.ndim else layout.shape[d] * layout.strides[d]
    return _trusted((*layout.shape[:d], 1, *layout.shape[d:]),
                  (*layout.strides[:d], stride, *layout.strides[d:]), layout.offset)


def expand(layout: Layout, shape: Sequence[Any]) -> Layout:
    """Broadcast size-1 dims to ``shape`` without copying (their stride becomes 0); new
    leading dims may be added (stride 0); ``-1`` keeps a dim's extent (a view).

    Forms: ``x.expand(*sizes)``, ``fs.expand(x, shape)``, ``views.expand(layout, shape)``.

    Args:
      shape: target extents, at least ``ndim`` of them; ``-1`` keeps an existing extent.
    Returns:
      Shape ``shape``; expanded and new dims have stride 0 (elements), others keep theirs;
      offset unchanged. The result overlaps itself where an expanded dim has extent > 1:
      writes through it need ``overlap=`` (see ``x.at``).
    Raises:
      LayoutError: fewer target dims than the rank, ``-1`` in a new leading dim, a negative
        extent, or a non-size-1 dim whose extent differs from its target.
      LayoutTypeError: an extent that is not an int.
    Example:
      >>> x = fs.from_array(jnp.arange(3.0)).view(3, 1)
      >>> y = x.expand(2, 3, 4)
      >>> y.shape, y.stride()
      ((2, 3, 4), (0, 1, 0))

    A rank-0 input gets stride 0 in every dim. Deviation: PyTorch accepts -1 (and returns a
    negative extent) when expanding a rank-0 tensor; here -1 in a new dim is refused.

    Semantics: ``torch.Tensor.expand`` (ATen ``inferExpandGeometry``)."""
    sizes = tuple(_index("expand", "size", s) for s in shape)
    nd, in_shape, in_strides = len(layout.shape), layout.shape, layout.strides
    if len(sizes) < nd:
        raise LayoutError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({layout.ndim}) (got shape {list(sizes)}, layout {layout})."
        )
    n = len(sizes)
    out_shape, out_strides = [0] * n, [0] * n
    for i in range(n - 1, -1, -1):
        d = nd - n + i
        size = in_shape[d] if d >= 0 else 1
        stride = in_strides[d] if d >= 0 else (out_shape[i + 1] * out_strides[i + 1] if i + 1 < n else 1)
        target = sizes[i]
        if target == -1:
            if d < 0:
                raise LayoutError(
                    f"expand: the expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i} (got shape {list(sizes)}, layout {layout})."
                )
            target = size
        if target < 0:
            raise LayoutError(f"expand: invalid extent {target} at dim {i} (got shape {list(sizes)}, "
                              f"layout {layout}); "
                              "extents must be >= 0, or -1 to keep one.")
        if size != target:
            if size != 1:
                raise LayoutError(
                    f"expand: the expanded size of the tensor ({target}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}. Target sizes: {list(sizes)}. "
                    f"Layout: {layout}. Only size-1 dims can be expanded."
                )
            size, stride = target, 0
        out_shape[i], out_strides[i] = size, stride
    if nd == 0:
        out_strides = [0] * n  # a scalar broadcasts with stride 0 in every dim, size-1 ones too
    return _trusted(tuple(out_shape), tuple(out_strides), layout.offset)


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


def flatten_shape(layout: Layout, start_dim: Any = 0, end_dim: Any = -1) -> Shape | None:
    """Target shape of ``flatten(start_dim, end_dim)``, or ``None`` when the layout is
    returned unchanged (``start_dim == end_dim`` on rank >= 1).

    Args:
      layout: the layout flattened (rank ``r``).
      start_dim: the first dim merged (negative counts from the end).
      end_dim: the last dim merged (negative counts from the end).
    Returns:
      The shape with dims ``start_dim..end_dim`` merged into one of their product's extent
      (rank ``r - (end_dim - start_dim)``); ``(1,)`` for rank 0; ``None`` when nothing merges.
    Raises:
      LayoutError: ``start_dim`` after ``end_dim``.
      OutOfRangeError: a dim is out of range.
      LayoutTypeError: a dim is not an integer.
    Example:
      >>> x = Layout((2, 3, 4), (12, 4, 1))
      >>> flatten_shape(x, 1), flatten_shape(x, 1, 1), flatten_shape(Layout((), ()))
      ((2, 12), None, (1,))

    Semantics: ``torch.flatten`` (a view when ``view`` would succeed, else a copy)."""
    s = canonical_dim(start_dim, layout.ndim, op="flatten", layout=layout)
    e = canonical_dim(end_dim, layout.ndim, op="flatten", layout=layout)
    if s > e:
        raise LayoutError(f"flatten: flatten() has invalid args: start_dim ({start_dim}) cannot come "
                          f"after end_dim ({end_dim}) (layout {layout}).")
    if layout.ndim == 0:
        return (1,)
    if s == e:
        return None
    return (*layout.shape[:s], math.prod(layout.shape[s:e + 1]), *layout.shape[e + 1:])


def unflatten_shape(layout: Layout, dim: Any, sizes: Sequence[Any]) -> Shape:
    """Target shape of ``unflatten(dim, sizes)`` (one -1 inferred); always a valid view.

    Args:
      layout: the layout (rank >= 1).
      dim: the dim split (negative counts from the end).
      sizes: the extents it splits into (ints, one may be -1), multiplying to its extent.
    Returns:
      The shape with ``dim`` replaced by ``sizes`` (rank ``ndim + len(sizes) - 1``).
    Raises:
      LayoutError: ``sizes`` empty, with two -1 or an entry below -1, or multiplying to
        another extent than that of ``dim``.
      LayoutTypeError: ``sizes`` is not a sequence, or an entry or ``dim`` is not an integer.
      OutOfRangeError: rank 0, or ``dim`` out of range.
    Example:
      >>> unflatten_shape(Layout((2, 12), (12, 1)), 1, (3, -1))
      (2, 3, 4)
      >>> unflatten_shape(Layout((2, 12), (12, 1)), 1, (5, -1))
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: unflatten: provided sizes [5, -1] don't multiply up to ... (12) ...

    Semantics: ``torch.unflatten``."""
    if layout.ndim == 0:
        raise OutOfRangeError(f"unflatten: dimension specified as {dim} but layout {layout} has no "
                              "dimensions; unflatten needs rank >= 1.")
    d = canonical_dim(dim, layout.ndim, op="unflatten", layout=layout)
    if isinstance(sizes, str) or not isinstance(sizes, Iterable):
        raise LayoutTypeError(f"unflatten: sizes must be a sequence of ints, not {type(sizes).__name__} "
                              f"(got sizes={sizes!r}, layout {layout}); pass a tuple such as (2, -1).")
    sizes = tuple(sizes)
    sizes = tuple(_index("unflatten", f"sizes[{i}]", s) for i, s in enumerate(sizes))
    if not sizes:
        raise LayoutError(f"unflatten: sizes must be non-empty (got sizes={list(sizes)}, layout {layout}).")
    n = layout.shape[d]
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        infer_size(sizes, n, op="unflatten", layout=layout)  # raises its own, precise message
    try:
        inferred = infer_size(sizes, n, op="unflatten")
    except LayoutError:
        raise LayoutError(f"unflatten: provided sizes {list(sizes)} don't multiply up to the size "
                          f"of dim {d} ({n}) in the input (layout {layout}).") from None
    return (*layout.shape[:d], *inferred, *layout.shape[d + 1:])


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
