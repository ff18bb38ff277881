"""The view rules that move, drop, add or reverse dims: ``permute``, ``transpose``, ``t``, ``mT``,
``movedim``, ``flip``, ``squeeze``, ``unsqueeze``, ``expand``."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import LayoutError, LayoutTypeError
from ..layout import Layout, _trusted
from .common import _dims_tuple, _index, _shifted_offset, canonical_dim

__all__ = [
    "expand", "flip", "fliplr", "flipud", "mT", "movedim", "permute", "reverse_dims", "squeeze",
    "t", "transpose", "unsqueeze",
]


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
