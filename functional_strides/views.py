"""View algebra: PyTorch's view ops as pure functions ``Layout -> Layout``.

One place where view semantics live. Every function here returns a new :class:`Layout`
(or a tuple of them) and never touches storage; ``StridedArray`` methods re-wrap the result
over the same storage. Results (shape, strides, offset, and which inputs are refused) equal
PyTorch's for the same arguments. Strides and offsets are in elements.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ._cute_layout import coalesce_modes
from ._typing import Offset, Shape, Strides
from .errors import IndexTypeError, LayoutError, LayoutTypeError, OutOfRangeError, StorageError, ViewError
from .layout import Layout, _int_tuple, _trusted, contiguous_strides, is_static_offset

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
    """True for an integer scalar whose value is unknown at trace time (a JAX tracer)."""
    if type(value) is int or getattr(value, "ndim", None) != 0:
        return False
    if getattr(getattr(value, "dtype", None), "kind", "") not in ("i", "u"):
        return False
    try:
        operator.index(value)
    except Exception:
        return True
    return False


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
#: by a static amount), installed by the array layer (:mod:`functional_strides._traced`): the
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

    ``layout``, when given, is named in the error message.

    Raises:
      OutOfRangeError: ``dim`` outside ``[-max(ndim,1), max(ndim,1))``.

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

    Raises:
      LayoutError: more than one -1, an extent < -1, an ambiguous -1 (0 elements), or a
        product that does not equal ``numel``.

    Semantics: ATen ``infer_size``."""
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
    CuTe's ``coalesce`` of the dims read innermost first (:func:`_storage_chunks`); the view
    exists iff ``new_shape`` splits into chunks of equal element counts. ``new_shape`` must
    already have ``prod(new_shape) == prod(shape)``.

    Semantics: ATen ``computeStride`` (``TensorUtils.cpp``), size-0 and size-1 rules included.
    """
    if strides == contiguous_strides(shape) and 0 not in shape:
        return contiguous_strides(new_shape)  # one chunk: what the general walk gives, faster
    if len(shape) == 0:
        return (1,) * len(new_shape)
    numel = math.prod(shape)
    if numel == 0 and tuple(shape) == tuple(new_shape):
        return tuple(strides)
    new_strides = [0] * len(new_shape)
    if numel == 0:
        for d in range(len(new_shape) - 1, -1, -1):
            new_strides[d] = 1 if d == len(new_shape) - 1 else max(new_shape[d + 1], 1) * new_strides[d + 1]
        return tuple(new_strides)
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
    """Alias ``layout`` with a new ``shape`` (one -1 inferred); never copies.

    Args:
      layout: source layout.
      shape: target extents; ``prod(shape) == layout.numel``.
    Returns:
      Layout with strides from :func:`view_strides`; offset unchanged.
    Raises:
      LayoutError: bad ``shape`` (see :func:`infer_size`).
      ViewError: the strides cannot express ``shape`` (message lists the chunks).
    Example:
      >>> str(view(Layout((3, 4), (4, 1)), (2, -1)))
      '(2,6):(6,1)+0'

    Semantics: ``torch.Tensor.view(*shape)``."""
    new_shape = infer_size(shape, layout.numel, op="view", layout=layout)
    strides = view_strides(layout.shape, layout.strides, new_shape)
    if strides is None:
        raise ViewError(_explain_view(layout, new_shape))
    return _trusted(new_shape, strides, layout.offset)


def as_strided(layout: Layout, size: Any, stride: Any, storage_offset: Offset = None) -> Layout:
    """A new layout over the same storage; ``storage_offset=None`` keeps ``layout.offset``.

    Raises:
      LayoutError: ``size`` and ``stride`` lengths differ, or an entry/offset is negative.
        (Bounds against the storage are checked by the caller that holds it.)
      LayoutTypeError: ``size``/``stride`` not a sequence of ints (a bare int included, as
        in PyTorch), or an entry/offset not an integer; also a ``TypeError``.

    Semantics: ``torch.as_strided``: size/stride/offset address the underlying storage,
    ignoring ``layout``'s own strides; an explicit offset is absolute."""
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
    if known is not None and known < 0:
        raise StorageError(
            f"as_strided: invalid storage offset {known} (got size={list(size)}, "
            f"stride={list(stride)}); the offset must be >= 0."
        )
    return Layout(size, stride, offset)


def permute(layout: Layout, dims: Sequence[Any]) -> Layout:
    """Reorder dims: result dim ``i`` is input dim ``dims[i]``.

    Raises:
      LayoutError: ``len(dims) != ndim`` or a dim repeats.
      OutOfRangeError: a dim is out of range.
    Example:
      >>> str(permute(Layout((2, 3), (3, 1)), (1, 0)))
      '(3,2):(1,3)+0'

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
    """Swap two dims. Semantics: ``torch.transpose``.

    Raises:
      OutOfRangeError: a dim is out of range."""
    d0 = canonical_dim(dim0, layout.ndim, op="transpose", layout=layout)
    d1 = canonical_dim(dim1, layout.ndim, op="transpose", layout=layout)
    if layout.ndim == 0:
        return layout
    shape, strides = list(layout.shape), list(layout.strides)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return _trusted(tuple(shape), tuple(strides), layout.offset)


def t(layout: Layout) -> Layout:
    """Transpose a layout of rank <= 2 (rank 0 and 1 unchanged). Semantics: ``torch.t``.

    Raises:
      LayoutError: rank > 2."""
    if layout.ndim > 2:
        raise LayoutError(f"t: expects a layout of rank <= 2, but layout {layout} has rank "
                          f"{layout.ndim}; use transpose(dim0, dim1) or mT.")
    return transpose(layout, 0, 1) if layout.ndim == 2 else layout


def flip(layout: Layout, dims: Any) -> Layout:
    """Reverse the order of elements along ``dims``: a view with those strides negated.

    Element ``i`` of a flipped dim of extent ``n`` is element ``n - 1 - i`` of the input, so
    the offset moves to the input's last element along it (``offset + (n-1)*stride``) and the
    stride changes sign. A dim of extent 0 or 1, or of stride 0, keeps its offset.

    Args:
      layout: any layout (rank 0 accepts dims ``0`` and ``-1``, as PyTorch's).
      dims: a tuple or list of ints, each in ``[-ndim, ndim)``, no dim twice; ``()`` is
        the identity. A bare int is refused, as ``torch.flip`` refuses it.
    Returns:
      A layout of the same shape; strides of ``dims`` negated; the offset moved as above.
    Raises:
      LayoutTypeError: ``dims`` is not a sequence of ints (an int, ``None``, a float entry).
      OutOfRangeError: a dim is out of range.
      LayoutError: a dim appears twice.
    Example:
      >>> str(flip(Layout((2, 3), (3, 1)), (0,))), str(flip(Layout((2, 3), (3, 1)), [0, 1]))
      ('(2,3):(-3,1)+3', '(2,3):(-3,-1)+5')

    Semantics: ``torch.flip``: same shape and values, but PyTorch copies (its result is
    contiguous, offset 0) where this is a view with negative strides, as NumPy's
    ``np.flip``."""
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
    """Reverse dim 1 (left/right); a view. Semantics: ``torch.fliplr`` (which copies).

    Raises:
      LayoutError: rank < 2.
    Example:
      >>> str(fliplr(Layout((2, 3), (3, 1))))
      '(2,3):(3,-1)+2'"""
    if layout.ndim < 2:
        raise LayoutError(f"fliplr: Input must be >= 2-d (got layout {layout} of rank {layout.ndim}); "
                          "use flip(x, (0,)) for a 1-d array.")
    return flip(layout, (1,))


def flipud(layout: Layout) -> Layout:
    """Reverse dim 0 (up/down); a view. Semantics: ``torch.flipud`` (which copies).

    Raises:
      LayoutError: rank 0.
    Example:
      >>> str(flipud(Layout((2, 3), (3, 1))))
      '(2,3):(-3,1)+3'"""
    if layout.ndim < 1:
        raise LayoutError(f"flipud: Input must be >= 1-d (got layout {layout} of rank 0).")
    return flip(layout, (0,))


def reverse_dims(layout: Layout) -> Layout:
    """Reverse all dims (``x.T``); warns like PyTorch when the rank is not 2.

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
    """Swap the last two dims; rank 0 is returned unchanged with a ``UserWarning`` (as
    PyTorch, which deprecates it). Semantics: ``torch.Tensor.mT``.

    Raises:
      LayoutError: rank 1."""
    if layout.ndim == 0:
        warnings.warn("mT: `x.mT` on a rank-0 array is deprecated in PyTorch and returns the "
                      "array unchanged; use x.mT only on arrays of rank >= 2.", UserWarning, stacklevel=3)
        return layout
    if layout.ndim < 2:
        raise LayoutError(f"mT: expects a layout of rank >= 2, but layout {layout} has rank {layout.ndim}.")
    return transpose(layout, -2, -1)


def movedim(layout: Layout, source: Any, destination: Any) -> Layout:
    """Move dims ``source`` to positions ``destination``; the others keep their order.

    Raises:
      LayoutError: ``source``/``destination`` lengths differ or contain repeats.
      OutOfRangeError: a dim is out of range.

    Semantics: ``torch.movedim`` / ``numpy.moveaxis``."""
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
    """Drop size-1 dims: all of them, or those of ``dim`` (an int or a tuple) that have
    size 1 (others are kept silently, as in PyTorch).

    Raises:
      LayoutError: a dim appears twice in ``dim`` (after wrapping negative dims).
      OutOfRangeError: a dim is out of range.

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
    """Insert a size-1 dim at ``dim`` (in ``[-ndim-1, ndim]``); its stride is
    ``shape[dim]*strides[dim]``, or 1 at the end.

    Raises:
      OutOfRangeError: ``dim`` is out of range.

    Semantics: ``torch.unsqueeze`` (``inferUnsqueezeGeometry``)."""
    d = canonical_dim(dim, layout.ndim + 1, op="unsqueeze", layout=layout)
    stride = 1 if d >= layout.ndim else layout.shape[d] * layout.strides[d]
    return _trusted((*layout.shape[:d], 1, *layout.shape[d:]),
                  (*layout.strides[:d], stride, *layout.strides[d:]), layout.offset)


def expand(layout: Layout, shape: Sequence[Any]) -> Layout:
    """Broadcast size-1 dims to ``shape`` without copying (their stride becomes 0); new
    leading dims are added; -1 keeps an extent.

    Raises:
      LayoutError: fewer target dims than the rank, -1 in a new leading dim, a negative
        extent, or a non-size-1 dim whose extent differs from its target.
    Example:
      >>> str(expand(Layout((3, 1), (1, 1)), (2, 3, 4)))
      '(2,3,4):(0,1,0)+0'

    A rank-0 layout gets stride 0 in every dim. Deviation: PyTorch accepts -1 (and returns
    a negative extent) when expanding a rank-0 tensor; here -1 in a new dim is refused.

    Semantics: ``torch.Tensor.expand`` (``inferExpandGeometry``)."""
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
    """Elements ``start .. start+length-1`` of ``dim`` (``start`` may be negative). A traced
    ``start`` (inside ``jit``/``vmap``) gives a view with a dynamic offset; it is clamped into
    ``[0, n - length]``, as ``jnp`` clamps traced indices, since it cannot be checked; the
    offset takes the width :func:`select` describes.

    Raises:
      LayoutError: rank 0, or a negative ``length``.
      OutOfRangeError: ``start`` out of range or ``start + length`` past the extent.
      StorageError: a traced ``start`` (or offset) whose storage offsets exceed int32 while
        ``jax_enable_x64`` is off.

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
    """Fix ``dim`` at ``index`` (negative wraps), dropping the dim. A traced ``index`` (inside
    ``jit``/``vmap``) gives a view with a dynamic offset; it is clamped into ``[0, n-1]``, as
    ``jnp`` clamps traced indices, since it cannot be checked. The offset is computed in
    int32 when every value fits, else in int64 (under ``jax_enable_x64``); a stride-0 dim
    leaves the offset unchanged, whatever its extent.

    Raises:
      LayoutError: rank 0.
      OutOfRangeError: ``dim`` or ``index`` out of range.
      StorageError: a traced ``index`` (or offset) whose storage offsets exceed int32 while
        ``jax_enable_x64`` is off.

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
    """Sliding windows of ``size`` elements every ``step`` along ``dimension``: that dim
    becomes ``(n - size) // step + 1`` windows (stride ``step*s``) and a new last dim of
    extent ``size`` (stride ``s``) is appended. Windows overlap when ``step < size``.

    Raises:
      LayoutError: ``size`` larger than the extent or negative; ``step < 1``.
      OutOfRangeError: ``dimension`` out of range.
    Example:
      >>> str(unfold(Layout((6,), (1,)), 0, 3, 2))
      '(2,3):(2,1)+0'

    Semantics: ``torch.Tensor.unfold`` (numpy ``sliding_window_view`` with a step)."""
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
    dim with stride ``strides[dim1] + strides[dim2]``.

    Raises:
      LayoutError: ``dim1 == dim2``.
      OutOfRangeError: a dim is out of range.

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
    """Split ``dim`` into pieces of ``split_size`` (last one smaller) or of the given sizes.

    Raises:
      LayoutError: rank 0; a negative split size, or 0 for a non-empty dim; sections that
        do not sum to the extent.
      OutOfRangeError: ``dim`` out of range.

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
    """Split ``dim`` into ``ceil(n/chunks)``-sized pieces (possibly fewer than ``chunks``).

    Raises:
      LayoutError: rank 0, or ``chunks < 1``.
      OutOfRangeError: ``dim`` out of range.

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
    """``select(dim, i)`` for every ``i``. Semantics: ``torch.unbind``.

    Raises:
      OutOfRangeError: rank 0 or ``dim`` out of range."""
    if layout.ndim == 0:
        raise OutOfRangeError(f"unbind: dimension specified as {dim} but layout {layout} has no "
                              "dimensions.")
    d = canonical_dim(dim, layout.ndim, op="unbind", layout=layout)
    return tuple(select(layout, d, i) for i in range(layout.shape[d]))


def flatten_shape(layout: Layout, start_dim: Any = 0, end_dim: Any = -1) -> Shape | None:
    """Target shape of ``flatten(start_dim, end_dim)``, or ``None`` when the layout is
    returned unchanged (``start_dim == end_dim`` on rank >= 1).

    Raises:
      LayoutError: ``start_dim`` after ``end_dim``.
      OutOfRangeError: a dim is out of range.

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

    Raises:
      LayoutError: ``sizes`` empty, not a sequence of ints, with two -1 or an entry below
        -1, or multiplying to another extent than that of ``dim``.
      OutOfRangeError: rank 0, or ``dim`` out of range.

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
    """Basic indexing: ints (negative wrap), slices with step >= 1, ``None``, ``...``.

    Raises:
      OutOfRangeError: an int index out of range, or too many indices.
      LayoutError: a slice step <= 0, more than one ``...``, or an index kind that would
        copy (integer or boolean arrays, lists, bools: use ``jnp`` advanced indexing on
        ``jnp.asarray(x)``).
      IndexTypeError: an index or slice bound of a type that cannot index (a float, a
        string, an object); an ``IndexError`` and a ``TypeError``, as in PyTorch.

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
