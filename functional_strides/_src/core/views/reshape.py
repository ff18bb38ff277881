"""The view rules that re-lay a layout out: ``view`` (PyTorch's ``computeStride``), ``as_strided``,
and the shapes of ``flatten``/``unflatten``."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import LayoutError, LayoutTypeError, OutOfRangeError, ViewError
from ..layout import Layout, _int_tuple, _trusted, check_offset, contiguous_strides, is_static_offset
from ..modes import coalesce_modes
from ..pytypes import Offset, Shape, Strides
from .common import _index, _known_int, canonical_dim, infer_size

__all__ = ["as_strided", "flatten_shape", "unflatten_shape", "view", "view_strides"]


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
            f"as_strided: negative strides are refused, as PyTorch's as_strided refuses them (got "
            f"stride={list(stride)}); strides count elements and must be >= 0 here. For a reversed "
            "view use x.flip(dims) (a view with negative strides), or NumPy's semantics, which take "
            "them: fs.numpy.as_strided(x, shape, strides) (strides in bytes there, as in NumPy)."
        )
    if any(n < 0 for n in size):
        raise LayoutError(f"as_strided: negative sizes are not supported (got size={list(size)}).")
    known = _known_int(offset)
    if known is not None:
        check_offset("as_strided", known, size, stride)
    return Layout(size, stride, offset)

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
