"""Canonical form of a layout and the structured read plans built on it (pure Python, no ``jax``).

The lowering reads a layout from its storage with the fewest, cheapest XLA ops. It first
brings the layout to a *canonical form* that addresses exactly the same storage index for
every element, then asks which *plan* reads that form:

* :func:`canonicalize` mirrors reversed dims (a negative stride becomes positive, the
  offset moves to the lowest index addressed, and the dim is read and then reversed with
  ``lax.rev``), drops size-1 dims, sets stride-0 (broadcast) dims apart, merges
  neighbouring dims that address storage as one (``stride[i] == shape[i+1] * stride[i+1]``)
  and orders the merged dims by decreasing stride, remembering the permutation back to the
  user's row-major order.
* :func:`box` decides whether the canonical dims form a *strided box*: a block of storage
  that a ``slice``, a ``reshape`` into rows and one strided ``slice`` read exactly (every
  composition of slicing with steps, permutation and expansion of a contiguous array is one).
* :func:`split_windows` finds where an overlapping layout (``unfold``, sliding windows) splits
  into outer dims, a window dim and an inner box, for the row-gather and shifted-slice plans.

Strides, offsets and lengths are counted in elements of the storage.
"""

from __future__ import annotations

import dataclasses
import functools
import math

from .layout import Layout
from .modes import coalesce_modes
from .pytypes import Offset, Shape

__all__ = [
    "Box",
    "Canonical",
    "Dims",
    "Windows",
    "box",
    "canonicalize",
    "split_windows",
]

#: ``((extent, stride), ...)``: dims of a canonical form, outermost (largest stride) first.
Dims = tuple[tuple[int, int], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Canonical:
    """A layout brought to canonical form; it addresses the same storage index per element.

    Attributes:
      shape: the user's shape (unchanged).
      offset: the lowest storage index addressed: the user's offset plus
        ``sum((n-1)*s for s < 0)`` (a Python int, or a traced scalar plus that constant).
      dims: ``((extent, stride), ...)`` of the merged dims, every extent >= 2 and stride >= 1,
        ordered by decreasing stride (ties keep the user's order).
      groups: for each entry of ``dims``, the user dims it merges, in the user's order.
      broadcast: user dims of extent >= 2 and stride 0, read once and broadcast.
      perm: the transpose that takes an array laid out as ``dims`` to the user's order of the
        groups: axis ``u`` of the result is axis ``perm[u]`` of the canonical array.
      empty: the layout has a zero extent (then ``dims``, ``groups`` and ``perm`` are empty).
      flipped: user dims (extent >= 2) whose stride is negative: ``dims`` read them forwards,
        so the array in the user's shape is reversed along them last (``lax.rev``).
    """

    shape: Shape
    offset: Offset
    dims: Dims
    groups: tuple[tuple[int, ...], ...]
    broadcast: tuple[int, ...]
    perm: tuple[int, ...]
    empty: bool = False
    flipped: tuple[int, ...] = ()

    @property
    def kept(self) -> tuple[int, ...]:
        """User dims that are read (extent >= 2, stride >= 1), in the user's order."""
        return tuple(sorted(d for group in self.groups for d in group))

    @property
    def user_dims(self) -> Dims:
        """``dims`` listed in the user's order of the groups (``dims`` permuted by ``perm``)."""
        return tuple(self.dims[a] for a in self.perm)

    @property
    def numel(self) -> int:
        """Elements read from storage: the product of the canonical extents (0 when empty)."""
        return 0 if self.empty else math.prod(n for n, _ in self.dims)

    def layout(self) -> Layout:
        """The canonical dims as a :class:`Layout` (same offset): the storage it reads.

        Example:
          >>> str(canonicalize(Layout((4, 1, 3), (1, 7, 4), 2)).layout())
          '(3,4):(4,1)+2'
        """
        return Layout(tuple(n for n, _ in self.dims), tuple(s for _, s in self.dims), self.offset)


#: How many canonical forms, boxes and window splits are kept: a program lowers a layout's
#: canonical form once, whatever the number of questions asked of it (plan, applicability,
#: the path itself).
_CACHE_SIZE = 4096


def canonicalize(layout: Layout) -> Canonical:
    """Canonical form of ``layout`` (computed once per static layout, then cached)."""
    if layout.has_static_offset:
        return _canonicalize_cached(layout)
    return _canonicalize(layout)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _canonicalize_cached(layout: Layout) -> Canonical:
    return _canonicalize(layout)


def _canonicalize(layout: Layout) -> Canonical:
    """Canonical form of ``layout``: size-1 dims dropped, broadcast dims apart, dims merged, sorted.

    Args:
      layout: any layout (rank 0, empty, stride-0 dims, negative strides and traced offsets
        allowed).
    Returns:
      A :class:`Canonical` whose ``dims`` read the same storage indices as ``layout`` (in the
      canonical order, reversed dims forwards), ``perm``/``groups`` restoring the user's
      order, ``broadcast`` listing the stride-0 dims and ``flipped`` the reversed ones. The
      offset moves to the lowest index addressed (unchanged without negative strides).
    Example:
      >>> c = canonicalize(Layout((2, 3, 4, 5), (0, 1, 15, 3)))   # expand + permute of (4, 5, 3)
      >>> c.dims, c.groups, c.broadcast, c.perm
      (((20, 3), (3, 1)), ((2, 3), (1,)), (0,), (1, 0))
      >>> c = canonicalize(Layout((3, 4), (-4, 1), 8))              # rows reversed
      >>> c.dims, c.offset, c.flipped
      (((12, 1),), 0, (0,))

    Semantics: PyTorch's ``TensorIterator`` coalescing of dims, computed by CuTe's ``coalesce``
    (:func:`functional_strides.cute.coalesce`, on the dims read innermost first), plus a
    sort by stride as in ``torch._prims_common.compute_elementwise_output_logical_to_physical_perm``.
    """
    shape, strides, offset = layout.shape, layout.strides, layout.offset
    if layout.is_empty:
        return Canonical(shape, offset, (), (), (), (), empty=True)
    live = [d for d, n in enumerate(shape) if n > 1]
    flipped = tuple(d for d in live if strides[d] < 0)
    if flipped:  # read reversed dims forwards from the lowest index, reverse them at the end
        offset = offset + sum((shape[d] - 1) * strides[d] for d in flipped)
        strides = tuple(abs(s) for s in strides)
    broadcast = tuple(d for d in live if strides[d] == 0)
    read = [d for d in live if strides[d] != 0][::-1]   # innermost first: CuTe's column-major order
    modes = coalesce_modes([shape[d] for d in read], [strides[d] for d in read])[::-1]
    merged = [sorted(read[m] for m in members) for _, _, members in modes]
    user = [(n, s) for n, s, _ in modes]
    order = sorted(range(len(user)), key=lambda u: -user[u][1])  # stable: ties keep user order
    perm = [0] * len(order)
    for axis, u in enumerate(order):
        perm[u] = axis
    return Canonical(
        shape=shape,
        offset=offset,
        dims=tuple(user[u] for u in order),
        groups=tuple(tuple(merged[u]) for u in order),
        broadcast=broadcast,
        perm=tuple(perm),
        flipped=flipped,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Box:
    """How a ``slice``, a ``reshape`` into rows and one strided ``slice`` read a box of dims.

    For dims ``((N_0, S_0), ..., (N_{m-1}, S_{m-1}))`` (strides decreasing) the storage is
    viewed as rows of ``pitches[0] == S_0`` elements; each row is cut into ``P_j =
    pitches[j-1] // pitches[j]`` sub-rows of ``pitches[j]`` elements (dropping the
    ``pitches[j-1] % pitches[j]`` elements left over), down to ``pitches[-1] == 1``. Dim ``j``
    then advances ``steps[j] = S_j // pitches[j]`` along axis ``j`` of that grid. A single
    dim (``m == 1``) is one strided slice of the storage.

    Attributes:
      dims: the dims read, strides decreasing.
      pitches: row length at each level, in storage elements; ``pitches[j]`` divides ``S_j``.
      steps: step along each grid axis.
    """

    dims: Dims
    pitches: tuple[int, ...]
    steps: tuple[int, ...]

    @property
    def reach(self) -> int:
        """``1 + sum_j (N_j - 1) * S_j``: storage elements from the first to the last read."""
        return 1 + sum((n - 1) * s for n, s in self.dims)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the array read: the extents of ``dims``."""
        return tuple(n for n, _ in self.dims)

    @property
    def grid(self) -> tuple[int, ...]:
        """Extents ``(P_1, ..., P_{m-1})`` of the grid axes below the rows."""
        return tuple(self.pitches[j - 1] // self.pitches[j] for j in range(1, len(self.pitches)))

    def origin(self, offset: int) -> tuple[int, tuple[int, ...]]:
        """Where the box starting at storage index ``offset`` sits in the grid.

        Returns ``(base, starts)``: rows begin at storage index ``base`` (a multiple of
        ``S_0`` when the offset can be placed inside the grid, as ``x[1::2, 1::2]`` sits in
        ``x``'s rows; else ``offset`` itself), and ``starts[j]`` is the first index along grid
        axis ``j >= 1`` (``starts[0] == 0``). Reading rows from ``base`` rather than
        ``offset`` keeps a view of a whole array from running past the end of its storage.

        Example:
          >>> box(((2, 8), (2, 2))).origin(5)   # x[1::2, 1::2] of a contiguous (4, 4) array
          (0, (0, 5))
        """
        if len(self.dims) < 2:
            return offset, (0,) * len(self.dims)
        rem, starts = offset % self.pitches[0], [0]
        levels = zip(self.dims[1:], self.steps[1:], self.pitches[1:], self.grid, strict=True)
        for (n, _), t, pitch, p in levels:
            start, rem = divmod(rem, pitch)
            if start + (n - 1) * t >= p:
                return offset, (0,) * len(self.dims)
            starts.append(start)
        return offset - offset % self.pitches[0], tuple(starts)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def box(dims: Dims) -> Box | None:
    """The strided-box plan reading ``dims``, or ``None`` when no such plan exists.

    A plan exists iff ``(N_j - 1) * S_j < pitch_{j-1}`` for every ``j >= 1``, where
    ``pitch_0 = S_0`` and ``pitch_j`` is the largest divisor of ``S_j`` not above
    ``pitch_{j-1} - (N_j - 1) * S_j`` (``1`` for the last dim): dim ``j`` and everything
    inside it then fit, without overlap, in one row of dim ``j - 1``. A larger pitch only
    leaves more room inside, so the greedy choice finds a plan whenever one of this form
    exists; ``None`` means no slice/reshape/slice chain reads these dims.

    Args:
      dims: ``((extent, stride), ...)`` with extents >= 1 and strides >= 1, strides
        decreasing (the order of :attr:`Canonical.dims`); ``()`` reads one element.
    Returns:
      A :class:`Box`, or ``None`` (overlapping dims such as ``unfold``'s).
    Example:
      >>> b = box(((4, 30), (3, 12), (6, 1)))   # x[:, ::2, :] of a contiguous (4, 5, 6) array
      >>> b.pitches, b.grid, b.steps
      ((30, 6, 1), (5, 6), (1, 2, 1))
      >>> box(((455, 4101), (3, 1367), (455, 3), (3, 1))).grid   # 3x3 tiles of a 1367-wide image
      (3, 455, 3)
      >>> box(((5, 2), (4, 1))) is None         # unfold(size=4, step=2): rows overlap
      True
    """
    if len(dims) < 2:
        return Box(dims, tuple(s for _, s in dims), (1,) * len(dims))
    pitches = [dims[0][1]]
    for j, (n, s) in enumerate(dims[1:], start=1):
        room = pitches[-1] - (n - 1) * s
        if room < 1:
            return None
        pitches.append(1 if j == len(dims) - 1 else _largest_divisor(s, room))
    return Box(dims, tuple(pitches), tuple(s // p for (_, s), p in zip(dims, pitches, strict=True)))


_DIVISOR_CANDIDATES = 1 << 16  # candidates tried on each side of the square root


def _largest_divisor(value: int, bound: int) -> int:
    """Largest divisor of ``value`` that is at most ``bound`` (``bound >= 1``).

    A divisor above ``isqrt(value)`` is ``value // d`` for the smallest ``d >= value / bound``
    that divides; failing that, the largest divisor up to ``min(bound, isqrt(value))``. Each
    side tries at most ``_DIVISOR_CANDIDATES`` candidates, so a stride of 2**64 costs no more
    than one of 2**32; past them the answer is still a divisor at most ``bound`` (1 at worst),
    which makes the box finer, never wrong."""
    if value <= bound:
        return value
    root = math.isqrt(value)
    low = -(-value // bound)  # value // d <= bound  <=>  d >= low
    for d in range(low, min(root, low + _DIVISOR_CANDIDATES) + 1):
        if value % d == 0:
            return value // d
    top = min(bound, root)
    for d in range(top, max(top - _DIVISOR_CANDIDATES, 0), -1):
        if value % d == 0:
            return d
    return 1


def inner_box_start(dims: Dims) -> int:
    """Smallest ``k`` such that ``dims[k:]`` form a :func:`box` (``len(dims) - 1`` at most,
    since one dim is always a box; 0 for ``()``)."""
    for k in range(len(dims)):
        if box(dims[k:]) is not None:
            return k
    return 0


@dataclasses.dataclass(frozen=True, slots=True)
class Windows:
    """An overlapping layout split as ``outer dims x window dim x inner box``.

    ``dims == outer + ((count, step),) + inner`` where ``inner`` is a box whose ``reach``
    exceeds ``step`` (windows overlap, as after ``unfold(size, step)`` with ``size > step``).

    Attributes:
      outer: dims before the window dim (any strides).
      count: number of windows; step: storage distance between consecutive windows.
      inner: the dims inside one window, a box.
      shifts: ``ceil(inner reach / step)``, the number of shifted slices that cover a window.
      shifted: box plan for ``outer + ((count + shifts - 1, step), (step, 1))`` (the rows that
        the shifted slices cut), or ``None``.
      stacked: box plan for ``outer + inner`` (one window read per window index), or ``None``.
    """

    outer: Dims
    count: int
    step: int
    inner: Dims
    shifts: int
    shifted: Box | None
    stacked: Box | None

    @property
    def reach(self) -> int:
        """Storage elements one window spans (the inner box's reach)."""
        return 1 + sum((n - 1) * s for n, s in self.inner)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def split_windows(dims: Dims) -> Windows | None:
    """Split canonical ``dims`` that are not a box into outer dims, a window dim and an inner box.

    Args:
      dims: canonical dims (strides decreasing) for which ``box(dims)`` is ``None``.
    Returns:
      A :class:`Windows`, or ``None`` when ``dims`` is a box.
    Example:
      >>> w = split_windows(((7, 256), (1024, 1)))     # unfold(0, 1024, 256) of 2560 elements
      >>> w.count, w.step, w.inner, w.shifts, w.shifted.pitches
      (7, 256, ((1024, 1),), 4, (256, 1))
    """
    k = inner_box_start(dims)
    if k == 0:
        return None
    outer, (count, step), inner = dims[: k - 1], dims[k - 1], dims[k:]
    reach = 1 + sum((n - 1) * s for n, s in inner)
    shifts = -(-reach // step)
    return Windows(
        outer=outer,
        count=count,
        step=step,
        inner=inner,
        shifts=shifts,
        shifted=box((*outer, (count + shifts - 1, step), (step, 1))),
        stacked=box((*outer, *inner)),
    )
