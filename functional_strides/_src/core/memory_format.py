"""PyTorch's memory formats: ``contiguous_format``, ``channels_last``, ``channels_last_3d``
and ``preserve_format``, as pure rules on layouts (strides in elements; no jax import).

A memory format names an order of the dims in memory: ``channels_last`` stores an NCHW array
as NHWC (channel innermost), ``channels_last_3d`` an NCDHW array as NDHWC. The rules here give
PyTorch's answers for ``is_contiguous(memory_format=...)`` and the strides of
``contiguous(memory_format=...)`` / ``clone(memory_format=...)``, size-1 and size-0 dims
included.

Example:
  >>> from functional_strides._src.core.layout import Layout
  >>> channels_last
  torch.channels_last
  >>> format_strides((2, 3, 4, 5), channels_last)
  (60, 1, 15, 3)
  >>> is_contiguous_as(Layout((2, 3, 4, 5), (60, 1, 15, 3)), channels_last)
  True
"""

from __future__ import annotations

from typing import Any

from .errors import LayoutError, LayoutTypeError
from .layout import Layout, contiguous_strides, dense_strides_like
from .pytypes import Shape, Strides

__all__ = [
    "MemoryFormat",
    "as_memory_format",
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "copy_strides",
    "format_strides",
    "is_contiguous_as",
    "preserve_format",
    "preserve_strides",
]


class MemoryFormat:
    """A memory format: one of the four singletons of this module (compare with ``is``).

    Its ``repr`` is PyTorch's (``torch.channels_last``); the functions of this library that
    take a ``memory_format`` also accept PyTorch's own objects (``torch.channels_last``).

    Args:
      name: the format's name, as PyTorch's (``"channels_last"``); only the four singletons
        exist.
    Raises:
      Nothing; build none: use the four singletons (a ``memory_format=`` argument that is
      neither one of them nor PyTorch's raises ``LayoutTypeError`` where it is passed).
    Example:
      >>> contiguous_format, preserve_format
      (torch.contiguous_format, torch.preserve_format)

    Semantics: ``torch.memory_format``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the module-level singleton


#: Row-major strides, the last dim fastest (``torch.contiguous_format``).
contiguous_format = MemoryFormat("contiguous_format")
#: Rank-4 NCHW dims stored as NHWC, channels fastest (``torch.channels_last``).
channels_last = MemoryFormat("channels_last")
#: Rank-5 NCDHW dims stored as NDHWC, channels fastest (``torch.channels_last_3d``).
channels_last_3d = MemoryFormat("channels_last_3d")
#: A copy keeps the strides of a non-overlapping and dense input, else the order of its strides
#: (``torch.preserve_format``).
preserve_format = MemoryFormat("preserve_format")

_FORMATS = {f.name: f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)}
# dims from innermost to outermost: NCHW stored as NHWC, NCDHW as NDHWC
_ORDER = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}


def as_memory_format(value: Any, op: str) -> MemoryFormat:
    """``value`` as one of this module's singletons; PyTorch's ``torch.memory_format``
    objects are accepted by name.

    Raises:
      LayoutTypeError: ``value`` is not a memory format (also a ``TypeError``, as PyTorch's
        argument parser raises).
    Example:
      >>> as_memory_format(channels_last, "contiguous") is channels_last
      True

    Semantics: PyTorch's ``memory_format`` argument."""
    if isinstance(value, MemoryFormat):
        return value
    if type(value).__name__ == "memory_format":  # torch.memory_format, e.g. torch.channels_last
        found = _FORMATS.get(str(value).removeprefix("torch."))
        if found is not None:
            return found
    raise LayoutTypeError(
        f"{op}: argument 'memory_format' must be a memory format, not {type(value).__name__} (got "
        f"memory_format={value!r}); pass fs.contiguous_format, fs.channels_last, fs.channels_last_3d "
        "or fs.preserve_format.")


def _check_rank(shape: Shape, fmt: MemoryFormat, op: str) -> None:
    rank = len(_ORDER[fmt])
    if len(shape) != rank:
        raise LayoutError(f"{op}: required rank {rank} tensor to use {fmt.name} format (got shape "
                          f"{tuple(shape)}, rank {len(shape)}); use a rank-{rank} array "
                          f"({'NCHW' if rank == 4 else 'NCDHW'}) or contiguous_format.")


def format_strides(shape: Shape, fmt: MemoryFormat, *, op: str = "format_strides") -> Strides:
    """Strides (elements) of a fresh array of ``shape`` stored in memory format ``fmt``.

    ``contiguous_format``: row-major strides. ``channels_last`` (rank 4, NCHW): the channel
    dim innermost, then W, H, N; ``channels_last_3d`` (rank 5, NCDHW): C, W, H, D, N. Size-0
    and size-1 dims count as their size (a size-0 dim makes the strides outside it 0), as
    ``torch.empty(shape, memory_format=fmt)``.

    Raises:
      LayoutError: ``channels_last`` on a rank other than 4, ``channels_last_3d`` on a rank
        other than 5 (PyTorch's "required rank 4 tensor"), or ``preserve_format`` (it needs a
        source layout: see :func:`preserve_strides`).
    Example:
      >>> format_strides((2, 3, 4, 5, 6), channels_last_3d), format_strides((2, 0, 3, 4), channels_last)
      ((360, 1, 90, 18, 3), (0, 1, 0, 0))

    Semantics: ``c10::get_channels_last_strides_2d`` / ``_3d`` (``torch.empty(...,
    memory_format=...).stride()``)."""
    if fmt is contiguous_format:
        return contiguous_strides(shape)
    if fmt is preserve_format:
        raise LayoutError(f"{op}: preserve_format has no strides of its own (shape {tuple(shape)}); "
                          "use preserve_strides(layout) for the strides of a copy of a layout.")
    _check_rank(shape, fmt, op)
    strides = [0] * len(shape)
    running = 1
    for d in _ORDER[fmt]:
        strides[d] = running
        running *= shape[d]
    return tuple(strides)


def preserve_strides(layout: Layout) -> Strides:
    """Strides (elements) of a copy of ``layout`` made with ``memory_format=preserve_format``:
    the same strides when the layout is empty or non-overlapping and dense, else dense
    strides in the order of ``layout``'s strides (of their absolute values: a reversed dim is
    copied in its own place, forwards, as NumPy's ``order="K"`` copy does).

    Example:
      >>> preserve_strides(Layout((2, 3), (1, 2))), preserve_strides(Layout((2, 3), (6, 2)))
      ((1, 2), (3, 1))

    Semantics: ``torch.Tensor.clone(memory_format=torch.preserve_format)`` (``empty_like``'s
    stride inference, ATen ``infer_dense_strides``)."""
    if layout.is_empty or layout.is_non_overlapping_and_dense():
        return layout.strides
    return dense_strides_like(layout.shape, tuple(abs(s) for s in layout.strides))


def copy_strides(layout: Layout, fmt: MemoryFormat, *, op: str = "clone") -> Strides:
    """Strides (elements) of ``clone(memory_format=fmt)`` of ``layout``.

    Raises:
      LayoutError: a channels-last format on the wrong rank (see :func:`format_strides`).
    Example:
      >>> copy_strides(Layout((2, 3, 4, 5), (60, 20, 5, 1)), channels_last)
      (60, 1, 15, 3)

    Semantics: ``torch.Tensor.clone(memory_format=fmt).stride()``."""
    if fmt is preserve_format:
        return preserve_strides(layout)
    return format_strides(layout.shape, fmt, op=op)


def is_contiguous_as(layout: Layout, fmt: MemoryFormat) -> bool:
    """PyTorch's ``is_contiguous(memory_format=fmt)`` of ``layout`` (the offset does not matter).

    ``contiguous_format`` and ``preserve_format``: C-contiguity (:meth:`Layout.is_contiguous`).
    ``channels_last``: rank 4 and the dims of size other than 1, taken C, W, H, N, have dense
    strides (size-1 dims are skipped; a size-0 dim fails unless its stride is the running
    product); False on any other rank. ``channels_last_3d``: the same on rank 5 (C, W, H, D, N).

    Example:
      >>> is_contiguous_as(Layout((2, 1, 4, 5), (20, 20, 5, 1)), channels_last)
      True
      >>> is_contiguous_as(Layout((2, 3, 4), (1, 8, 2)), channels_last)
      False

    Semantics: ``torch.Tensor.is_contiguous(memory_format=...)`` (``compute_channels_last_contiguous_2d``
    / ``_3d`` in ``TensorImpl``)."""
    if fmt is contiguous_format or fmt is preserve_format:
        return layout.is_contiguous()
    order = _ORDER[fmt]
    if layout.ndim != len(order):
        return False
    expected = 1
    for d in order:
        n = layout.shape[d]
        if n != 1:
            if layout.strides[d] != expected:
                return False
            expected *= n
    return True
