"""See a layout: the storage drawn as a grid with a view's elements marked, and what the
library will do with it.

:func:`explain` takes a :class:`~functional_strides.StridedArray`, a
:class:`~functional_strides.Layout`, a layout written as text (``"(4,3):(20,2)+22"``, negative
strides allowed), a NumPy array (its view of its base buffer) or a CuTe layout
(``functional_strides.cute`` or any object with ``shape``, ``stride``, ``size()``,
``cosize()`` and a call ``layout(i)``), and returns an :class:`Explanation`: the storage as
rows of a chosen width with every element of the view marked by its coordinates or its
position in the view's order, the coordinate -> storage-index table, ``numel``, the required
storage size, contiguity and denseness, internal overlap with a witness pair, and the read
and write plans of the lowering with the reason for each. ``explain(x, view=shape)`` also
takes PyTorch's ``view`` rule apart for that shape.

Strides, offsets and storage sizes are counted in elements. The text fits in 100 columns;
colour (with the optional ``rich`` package) is used only on a terminal.
"""

from __future__ import annotations

import dataclasses
import html
import math
import operator
import re
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import canonical as _canonical
from . import lowering as _lowering
from . import overlap as _overlap
from . import scatter as _scatter
from . import views as _views
from .errors import LayoutError
from .layout import Layout, format_layout

__all__ = ["Explanation", "explain", "parse_layout"]

#: Columns the text report fits in.
COLUMNS = 100
#: Storage rows drawn at most (rows holding no element of the view are folded first).
MAX_GRID_ROWS = 24
#: Rows of the coordinate -> storage-index table drawn at most.
MAX_TABLE_ROWS = 16
#: Widest row drawn when the width is chosen from the strides.
MAX_PITCH = 46
#: Elements above which the report leaves out the grid and the table (facts stay exact).
MAX_DRAWN_ELEMENTS = 1 << 16

_Line = list[tuple[str, str | None]]  # (text, style) pieces; style None is plain


# -- the subject: what is explained, as flat dims that may have negative strides ------------------

@dataclasses.dataclass(frozen=True)
class _Subject:
    kind: str                       # "Layout", "StridedArray", "text", "NumPy array", "CuTe layout"
    name: str                       # how the subject is written (notation)
    shape: tuple[int, ...]          # the dims coordinates are shown in
    strides: tuple[int, ...]        # may be negative (NumPy, CuTe)
    offset: int
    storage_size: int | None        # elements of the storage, when known
    storage_rows: int | None = None  # a 2-D storage shape asked for
    colex: bool = False             # CuTe: coordinates enumerate column-major (first mode fastest)
    extra: str = ""                 # a note on the subject (dtype, batch)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def analysis_layout(self) -> tuple[Layout, tuple[int, ...]]:
        """A :class:`Layout` that addresses the same slots with non-negative strides, in
        row-major order, and the dims flipped to get there (negative strides)."""
        shape, strides = self.shape, self.strides
        if self.colex:  # CuTe: first mode fastest = the row-major order of the reversed modes
            shape, strides = shape[::-1], strides[::-1]
        flipped = tuple(d for d, s in enumerate(strides) if s < 0 and shape[d] > 1)
        offset = self.offset
        if 0 not in shape:
            offset += sum((shape[d] - 1) * strides[d] for d in flipped)
        fixed = tuple(abs(s) if shape[d] > 1 else max(s, 0) for d, s in enumerate(strides))
        return Layout(shape, fixed, max(offset, 0)), flipped

    def index(self, coords: Sequence[int]) -> int:
        return self.offset + sum(i * s for i, s in zip(coords, self.strides, strict=True))


def _from_layout(layout: Layout, kind: str, storage_size: int | None, extra: str = "") -> _Subject:
    if not layout.has_static_offset:
        offset = _concrete_offset(layout.offset)
        if offset is None:
            raise LayoutError(
                f"explain: the offset of layout {layout} is traced (inside jit/vmap/grad) or holds one "
                "offset per batch item; explain needs an int offset. Call explain outside the "
                "transformation, or on Layout(shape, strides, offset) with the offset you mean.")
        layout = Layout(layout.shape, layout.strides, offset)
    return _Subject(kind, str(layout), layout.shape, layout.strides, int(layout.offset), storage_size,
                    extra=extra)


def _concrete_offset(offset: Any) -> int | None:
    if getattr(offset, "ndim", 0) != 0:
        return None
    try:
        return operator.index(offset)
    except Exception:  # a tracer refuses conversion
        return None


_NUM = r"-?\d+"
_TUPLE = rf"\(\s*(?:{_NUM}\s*(?:,\s*{_NUM}\s*)*,?)?\s*\)|{_NUM}"
_NOTATION = re.compile(rf"^\s*({_TUPLE})\s*:\s*({_TUPLE})\s*(?:\+\s*(\d+))?\s*$")


def parse_layout(text: str) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Read the notation ``"(shape):(strides)+offset"`` that layouts print as.

    Args:
      text: ``"(4,3):(20,2)+22"``; the offset may be left out (0); a rank-1 layout may be
        written ``"5:1"`` or ``"(5,):(1,)"``; rank 0 is ``"():()+3"``. Strides may be
        negative (NumPy's ``x[::-1]`` is ``"(5,):(-1,)+4"``).
    Returns:
      ``(shape, strides, offset)``: tuples of ints (elements) and an int.
    Raises:
      LayoutError: the text is not in this notation, or shape and strides differ in length,
        or an extent is negative.
    Example:
      >>> parse_layout("(4,3):(20,2)+22"), parse_layout("8:-1")
      (((4, 3), (20, 2), 22), ((8,), (-1,), 0))

    Semantics: the inverse of ``str(Layout)`` (pycute's ``shape:stride`` plus ``+offset``)."""
    m = _NOTATION.match(text)
    if m is None:
        raise LayoutError(
            f"explain: cannot read layout {text!r}; write it as (shape):(strides)+offset, e.g. "
            "'(4,3):(20,2)+22' (extents and strides in elements; '+offset' may be left out).")
    shape, strides = (tuple(int(v) for v in re.findall(_NUM, g)) for g in m.groups()[:2])
    offset = int(m.group(3) or 0)
    if len(shape) != len(strides):
        raise LayoutError(
            f"explain: layout {text!r} has {len(shape)} extents but {len(strides)} strides; give "
            "one stride per dim.")
    if any(n < 0 for n in shape):
        raise LayoutError(f"explain: layout {text!r} has a negative extent; extents must be >= 0.")
    return shape, strides, offset


def _from_numpy(x: np.ndarray) -> _Subject:
    root = x
    while True:  # the array that owns the buffer (as_strided wraps its base in a plain object)
        base = root.base
        base = getattr(base, "base", None) if base is not None and not isinstance(base, np.ndarray) else base
        if not isinstance(base, np.ndarray):
            break
        root = base
    item = x.itemsize
    bad = [s for s in x.strides if s % item]
    if bad or x.dtype != root.dtype or not root.flags.c_contiguous:
        raise LayoutError(
            f"explain: the NumPy array's byte strides {x.strides} (itemsize {item}, base dtype "
            f"{root.dtype}) are not whole elements of one contiguous buffer; explain a view whose "
            "strides are multiples of its itemsize over a contiguous base of the same dtype.")
    start = x.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return _Subject("NumPy array", "", x.shape, tuple(s // item for s in x.strides), start // item,
                    root.size, extra=f"dtype {x.dtype}; byte strides {x.strides}")


def _flatten_modes(value: Any) -> tuple[int, ...]:
    if isinstance(value, (tuple, list)):
        return tuple(v for part in value for v in _flatten_modes(part))
    return (operator.index(value),)


def _is_cute(x: Any) -> bool:
    return all(hasattr(x, a) for a in ("shape", "stride", "size", "cosize")) and callable(x)


def _from_cute(x: Any) -> _Subject:
    """A CuTe layout: top-level modes shown as coordinates, enumerated column-major (the first
    mode fastest, CuTe's 1-D index). Nested modes are flattened; the index of each coordinate
    is the layout's own ``layout(i)``."""
    shape, stride = x.shape, x.stride
    top = shape if isinstance(shape, (tuple, list)) else (shape,)
    sizes = tuple(math.prod(_flatten_modes(m)) for m in top)
    flat_shape, flat_stride = _flatten_modes(shape), _flatten_modes(stride)
    if len(flat_shape) != len(flat_stride):
        raise LayoutError(f"explain: CuTe layout {x} has shape {shape} and stride {stride} of different "
                          "profiles; give one stride per mode.")
    numel = operator.index(x.size())
    if numel != math.prod(sizes):
        raise LayoutError(f"explain: CuTe layout {x} reports size() {numel} but its shape {shape} holds "
                          f"{math.prod(sizes)} elements.")
    # top-level mode k: index of its 1-D coordinate c_k is layout(c_k * prod(sizes[:k])); a mode
    # whose flat sub-modes have one stride pattern is one dim only when its index is linear in c_k
    strides, offset = [], operator.index(x(0)) if numel else 0
    for k, n in enumerate(sizes):
        pitch = math.prod(sizes[:k])
        idx = [operator.index(x(c * pitch)) - offset for c in range(n)] if numel else [0] * n
        step = idx[1] if n > 1 else 0
        if any(v != c * step for c, v in enumerate(idx)):
            # a nested mode that is not one arithmetic progression: show its flat sub-modes
            return _Subject("CuTe layout", _cute_name(x), flat_shape, flat_stride, offset,
                            None, colex=True, extra=f"cosize {x.cosize()}; nested modes flattened")
        strides.append(step)
    return _Subject("CuTe layout", _cute_name(x), sizes, tuple(strides), offset, None, colex=True,
                    extra=f"cosize {x.cosize()}")


def _cute_name(x: Any) -> str:
    if type(x).__str__ is not object.__str__:
        return str(x)
    return f"{x.shape}:{x.stride}".replace(" ", "")


def _subject(x: Any, storage: Any) -> _Subject:
    from .strided import StridedArray  # imported on use: strided imports this module's users

    if isinstance(x, StridedArray):
        batch = tuple(x.storage.shape[:-1])
        extra = f"dtype {x.dtype}" + (f"; batch_shape {batch}, one item shown" if batch else "")
        lay = x.layout
        if batch and getattr(lay.offset, "ndim", 0):
            first = np.asarray(lay.offset).reshape(-1)[0]
            lay = Layout(lay.shape, lay.strides, int(first))
        subject = _from_layout(lay, "StridedArray", int(x.storage.shape[-1]), extra)
    elif isinstance(x, Layout):
        subject = _from_layout(x, "Layout", None)
    elif isinstance(x, str):
        shape, strides, offset = parse_layout(x)
        subject = _Subject("layout", x.strip(), shape, strides, offset, None)
    elif isinstance(x, np.ndarray):
        subject = _from_numpy(x)
    elif _is_cute(x):
        subject = _from_cute(x)
    else:
        raise LayoutError(
            f"explain: cannot explain an object of type {type(x).__name__}; pass a StridedArray, a "
            "Layout, a layout as text ('(4,3):(20,2)+22'), a NumPy array or a CuTe layout.")
    if not subject.name:
        subject = dataclasses.replace(subject, name=format_layout(subject.shape, subject.strides,
                                                                  subject.offset))
    return _with_storage(subject, storage)


def _with_storage(subject: _Subject, storage: Any) -> _Subject:
    if storage is None:
        return subject
    if isinstance(storage, str):
        parts = storage.lower().split("x")
        try:
            storage = tuple(int(p) for p in parts) if len(parts) > 1 else int(parts[0])
        except ValueError:
            raise LayoutError(f"explain: storage {storage!r} is neither a size ('100') nor a 2-D "
                              "shape ('10x10').") from None
    rows = None
    if isinstance(storage, (tuple, list)):
        if len(storage) != 2 or any(operator.index(v) < 1 for v in storage):
            raise LayoutError(f"explain: storage shape {tuple(storage)} must be 2-D with extents >= 1 "
                              "(rows, width), e.g. (10, 10); pass an int for a storage size.")
        rows, width = (operator.index(v) for v in storage)
        size = rows * width
    else:
        size = operator.index(storage)
        if size < 0:
            raise LayoutError(f"explain: storage size {size} is negative; give the number of elements.")
    if subject.storage_size is not None and subject.storage_size != size:
        raise LayoutError(
            f"explain: storage={storage!r} ({size} elements) differs from the array's own storage of "
            f"{subject.storage_size} elements; leave storage out, or give a shape of that many elements.")
    return dataclasses.replace(subject, storage_size=size, storage_rows=rows)


# -- elements: coordinates, order and storage index of every element -----------------------------

def _coords(subject: _Subject) -> np.ndarray:
    """Coordinates of every element in the subject's enumeration order, shape (numel, ndim)."""
    shape = subject.shape
    if subject.colex:
        grid = np.indices(shape[::-1]).reshape(len(shape), -1)[::-1] if shape else np.zeros((0, 1), int)
    else:
        grid = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), int)
    return grid.T.astype(np.int64)


def _indices(subject: _Subject, coords: np.ndarray) -> np.ndarray:
    strides = np.asarray(subject.strides, np.int64).reshape(-1)
    return subject.offset + (coords @ strides if subject.shape else np.zeros(len(coords), np.int64))


def _coord_text(c: Sequence[int]) -> str:
    return "(" + ",".join(str(int(v)) for v in c) + ")"


# -- facts ----------------------------------------------------------------------------------------

def _facts(subject: _Subject) -> list[str]:
    lay, flipped = subject.analysis_layout()
    numel, out = subject.numel, []
    order = "column-major (CuTe: the first mode is fastest)" if subject.colex else "row-major"
    out.append(f"numel: {numel} element{'s' * (numel != 1)}, rank {len(subject.shape)}, "
               f"coordinates enumerated {order}")
    if numel == 0:
        need, low = 0, 0
    else:
        span_neg = sum((n - 1) * s for n, s in zip(subject.shape, subject.strides, strict=True) if s < 0)
        low = subject.offset + span_neg
        need = lay.required_storage_size if low >= 0 else None
    if numel and low < 0:
        out.append(f"addresses storage indices from {low}: below 0, so no storage holds it (add an offset "
                   f"of at least {-low})")
    else:
        text = (f"required storage size: {need} elements (the largest index, {need - 1}, + 1)" if numel
                else "required storage size: 0 (no element)")
        if subject.storage_size is not None:
            fits = need <= subject.storage_size
            text += (f"; the storage has {subject.storage_size}: " +
                     ("fits" if fits else f"too small by {need - subject.storage_size} (as_strided and "
                      "materialisation raise StorageError)"))
        out.append(text)
    dense = lay.is_non_overlapping_and_dense()
    if subject.colex:  # the reversed modes are row-major contiguous iff the modes are compact
        expect = format_layout(subject.shape, Layout.contiguous(subject.shape, "F").strides, subject.offset)
        out.append("compact (column-major, CuTe's default): " +
                   ("yes" if lay.is_contiguous() and not flipped else f"no (the compact layout is {expect})"))
    else:
        expect = format_layout(subject.shape, Layout.contiguous(subject.shape).strides, subject.offset)
        out.append("contiguous (row-major, PyTorch's is_contiguous): " +
                   ("yes" if lay.is_contiguous() and not flipped
                    else f"no (the contiguous layout of this shape is {expect})"))
    slots = len(np.unique(lay.indices())) if 0 < numel <= MAX_DRAWN_ELEMENTS else None
    reach = lay.span + 1 if numel else 0
    detail = f"{numel} elements over {reach} consecutive slots"
    if slots is not None and slots != numel:
        detail += f", {slots} distinct"
    out.append("non-overlapping and dense (a permutation of dims is contiguous): " +
               ("yes" if dense else "no") + f" ({detail})")
    witness = _overlap.internal_overlap_witness(lay)
    if witness is None:
        out.append("internal overlap: none (every element has its own storage slot)")
    else:
        a, b = (_user_coord(subject, w, flipped) for w in witness)
        out.append(f"internal overlap: yes: coordinates {_coord_text(a)} and {_coord_text(b)} both address "
                   f"storage index {subject.index(a)} (writes with set() need overlap='last'; add() "
                   "accumulates)")
    return out


def _user_coord(subject: _Subject, coord: Sequence[int], flipped: tuple[int, ...]) -> tuple[int, ...]:
    """A coordinate of ``analysis_layout()`` as a coordinate of the subject."""
    shape = subject.shape[::-1] if subject.colex else subject.shape
    c = [shape[d] - 1 - v if d in flipped else v for d, v in enumerate(coord)]
    return tuple(c[::-1] if subject.colex else c)


# -- plans ----------------------------------------------------------------------------------------

def _dims_text(dims: Sequence[tuple[int, int]]) -> str:
    return "[" + ", ".join(f"{n}x{s}" for n, s in dims) + "]"


def _read_reason(layout: Layout) -> tuple[str, str]:
    path = _lowering.plan(layout)
    c = _canonical.canonicalize(layout)
    if path == "empty":
        return path, "a zero extent: nothing is read, zeros of the shape are returned"
    dims = _dims_text(c.dims) if c.dims else "[] (one element)"
    head = f"canonical dims {dims} (extent x stride, size-1 dims dropped, merged, sorted by stride)"
    tail = []
    if c.perm != tuple(range(len(c.perm))):
        tail.append("a transpose back to your order of dims")
    if c.broadcast:
        tail.append(f"a broadcast along stride-0 dims {list(c.broadcast)}")
    after = ("; then " + " and ".join(tail)) if tail else ""
    if path == "structured":
        b = _canonical.box(c.dims)
        if len(b.dims) < 2:
            how = "one strided slice of the storage"
        else:
            how = f"a slice of the storage, a reshape into rows of {b.pitches[0]}, a strided slice"
        return path, f"{head} form a strided box: {how}; no gather{after}"
    k = max(1, _canonical.inner_box_start(c.dims))
    inner, step = _canonical.box(c.dims[k:]), c.dims[k - 1][1]
    why = (f"{head} are no strided box: rows of {inner.reach} storage elements start every {step}, so "
           "they overlap or interleave")
    if path == "row_gather":
        return path, (f"{why}; rows of >= {_lowering.ROW_GATHER_MIN_ROW} elements at least "
                      f"{_lowering.ROW_GATHER_MIN_STEP} apart: one gather of whole rows, then the strided "
                      f"read inside each row{after}")
    if path == "slices":
        return path, f"{why}; a few shifted slices cover the windows{after}"
    short = []
    if inner.reach < _lowering.ROW_GATHER_MIN_ROW:
        short.append(f"rows of {inner.reach} < {_lowering.ROW_GATHER_MIN_ROW} elements")
    if step < _lowering.ROW_GATHER_MIN_STEP:
        short.append(f"rows {step} < {_lowering.ROW_GATHER_MIN_STEP} apart")
    return path, (f"{why}; {' and '.join(short)} (a row gather does not pay): one gather of single "
                  f"elements, indices built in the graph from iota{after}")


def _write_reason(layout: Layout, n: int, mode: str) -> tuple[str, str]:
    path = _scatter.plan(layout, n, mode=mode)
    if path == "empty":
        return path, "a zero extent: the storage is returned unchanged"
    c = _canonical.canonicalize(layout)
    if path == "block":
        return path, "one contiguous run: a dynamic_update_slice of the storage"
    ok = _scatter._applicable(c, n, mode)
    cover = c.numel / n if ok["block"] else 0.0
    rows = None
    if ok["row_scatter"]:
        _, _, inner = _scatter._split_rows(c)
        rows = (inner.reach, _scatter._row_density(c))
    if path == "row_scatter":
        return path, (f"rows of {rows[0]} storage elements ({rows[1]:.0%} written; >= "
                      f"{_scatter.ROW_SCATTER_MIN_ROW} elements, >= {_scatter.ROW_SCATTER_MIN_DENSITY:.0%} "
                      "written): one scatter of whole rows")
    if path == "structured":
        return path, (f"a block of a grid of the storage covering {cover:.0%} of its {n} elements: the "
                      "storage rewritten by pad/reshape and a select, no index")
    why = []
    if not ok["row_scatter"]:
        why.append("rows would overlap or hold gaps" if mode == "set" and len(c.dims) >= 2
                   else "no rows to scatter (one canonical dim)")
    elif rows is not None:
        why.append(f"rows of {rows[0]} elements, {rows[1]:.0%} written, are too short or sparse")
    if ok["block"]:
        why.append(f"a grid block covering {cover:.0%} of {n} elements; a full rewrite pays from "
                   f"{_scatter.STRUCTURED_MIN_FRACTION:.0%} of {_scatter.STRUCTURED_MIN_STORAGE} elements")
    else:
        why.append("no grid block of the storage")
    return path, "one scatter of single elements (" + "; ".join(why) + ")"


def _plans(subject: _Subject) -> list[str]:
    lay, flipped = subject.analysis_layout()
    numel = subject.numel
    span_neg = sum((n - 1) * s for n, s in zip(subject.shape, subject.strides, strict=True) if s < 0)
    if numel and subject.offset + span_neg < 0:
        return ["read/write plans: none (the layout addresses indices below 0)"]
    out = []
    note = ""
    if flipped or subject.colex:
        what = []
        if flipped:
            what.append(f"negative strides on dims {list(flipped)} (Layout and PyTorch refuse them)")
        if subject.colex:
            what.append("CuTe's column-major order (the modes reversed into row-major)")
        rev = (f": fs.as_strided(storage, {lay.shape}, {lay.strides}, {lay.offset}) then jnp.flip(..., "
               f"axis={flipped if len(flipped) > 1 else flipped[0]}) reads the same array") if flipped else ""
        out.append("plans below are for " + str(lay) + ", the same slots with " + " and ".join(what) + rev)
    read, why = _read_reason(lay)
    out.append(f"read plan (fs.plan): {read}: {why}")
    n = subject.storage_size if subject.storage_size is not None else lay.required_storage_size
    if n < (lay.required_storage_size or 0):
        return [*out, "write plan: none (the storage is too small for the view)"]
    if numel and not subject.storage_size:
        note = f" (over {n} elements, the required size)"
    witness = _overlap.internal_overlap_witness(lay)
    for mode in ("set", "add"):
        path, why = _write_reason(lay, max(n, 1), mode)
        if mode == "set" and witness is not None:
            why += "; only with overlap='last' (the row-major last element wins), else OverlapError"
        out.append(f"write plan (fs.scatter.plan, mode={mode!r}){note}: {path}: {why}")
    out.append("eager use (outside jit): a contiguous view reads/writes with one dynamic_slice/"
               "dynamic_update_slice, any other with one gather/scatter compiled once per shape")
    return out


# -- the storage grid -----------------------------------------------------------------------------

def _grid_width(subject: _Subject, lay: Layout, high: int, room: int) -> tuple[int, bool]:
    """Storage elements per drawn row, and whether the layout chose it (``False``: only the
    room left did).

    The storage shape's width when given. Else the stride of a dim that has smaller-stride
    dims inside it, all of which fit in one row (so each row holds whole inner dims and the
    outer dim steps down the rows): the smallest such stride that draws at most
    ``MAX_GRID_ROWS`` rows, within ``MAX_PITCH``. Else the whole storage in one row when it
    fits, else as many elements as fit."""
    if subject.storage_rows is not None:
        return subject.storage_size // subject.storage_rows, True
    live = sorted(((n, s) for n, s in zip(lay.shape, lay.strides, strict=True) if n > 1 and s > 0),
                  key=lambda p: p[1])
    pitches = [s for k, (_, s) in enumerate(live)
               if k and 1 < s <= MAX_PITCH and s > sum((m - 1) * t for m, t in live[:k])]
    for s in pitches:
        if -(-high // s) <= MAX_GRID_ROWS:
            return s, True
    if pitches:
        return pitches[-1], True
    if high <= room:
        return max(1, high), True
    return room, False


def _grid(subject: _Subject, coords: np.ndarray, idx: np.ndarray, label: str, width: int | None,
          *, squeeze: bool = False) -> list[_Line]:
    """The storage drawn as rows of ``width`` (default: :func:`_grid_width`) with the view's
    slots marked; ``[]`` when it does not fit in ``COLUMNS`` (with ``squeeze``, the width
    shrinks until it fits instead)."""
    lay, _ = subject.analysis_layout()
    size = subject.storage_size
    high = max(size or 0, int(idx.max()) + 1 if len(idx) else 0, 1)
    first_label = {}
    count: dict[int, int] = {}
    for k, (c, i) in enumerate(zip(coords, idx, strict=True)):
        i = int(i)
        count[i] = count.get(i, 0) + 1
        if i not in first_label:
            first_label[i] = _coord_text(c) if label == "coords" else str(k)
    shared = any(v > 1 for v in count.values())
    cell = max([len(t) for t in first_label.values()] + [1]) + (1 if shared else 0)

    def fits(w: int) -> bool:
        c = max(cell, len(str(w - 1)))
        return len(str(max(high - 1, 0))) + 3 + w * (c + 1) - 1 <= COLUMNS

    natural = True
    if width:
        w = width
    else:
        w, natural = _grid_width(subject, lay, high, max(1, (COLUMNS - 6) // (cell + 1)))
    if label == "coords" and not natural and not squeeze:
        return []  # coordinates in rows that follow no stride of the view: numbers read better
    if squeeze and not fits(w):  # rather a divisor of the width asked for, so rows stay aligned
        w = max([d for d in range(1, w) if w % d == 0 and fits(d)] or [1])
        if w < 4:
            w = max(d for d in range(1, COLUMNS) if fits(d) or d == 1)
    if not fits(w):
        return []
    rows = -(-high // w)
    gutter = len(str(max((rows - 1) * w, 0)))
    cell = max(cell, len(str(w - 1)))
    lines: list[_Line] = []
    head = " " * (gutter + 3) + " ".join(str(j).rjust(cell) for j in range(w))
    lines.append([(head.rstrip(), "dim")])
    marked_rows = sorted({i // w for i in count})
    keep = _rows_to_draw(rows, marked_rows)
    marked = set(marked_rows)

    def fold(lo: int, hi: int) -> None:  # rows lo..hi-1 not drawn
        what = "not drawn" if any(lo <= r < hi for r in marked) else "without view elements"
        lines.append([(" " * gutter + f" ⋮ ({hi - lo} row{'s' * (hi - lo > 1)} {what})", "dim")])

    prev = -1
    for r in keep:
        if r - prev > 1:
            fold(prev + 1, r)
        prev = r
        line: _Line = [(str(r * w).rjust(gutter) + " | ", "dim")]
        for j in range(w):
            i = r * w + j
            if i in first_label:
                text = first_label[i] + ("*" if count[i] > 1 else "")
                style = "overlap" if count[i] > 1 else "view"
            elif i >= high:
                text, style = "", None  # the rest of the last row: no storage
            else:
                text, style = ("." if size is None or i < size else "!"), "dim"
            line.append((text.rjust(cell) + (" " if j < w - 1 else ""), style))
        lines.append(line)
    if rows - 1 - prev > 0:
        fold(prev + 1, rows)
    legend = ("(i,...): the element at those coordinates" if label == "coords"
              else "k: the k-th element in the view's order")
    legend += "; .: a storage slot outside the view"
    if shared:
        legend += "; *: a slot several elements share (the first is shown)"
    if size is not None and high > size:
        legend += "; !: past the end of the storage"
    lines.extend([(t, "dim")] for t in _wrap(legend + f"; rows of {w} elements", "  "))
    return lines


def _rows_to_draw(rows: int, marked: list[int]) -> list[int]:
    """Rows drawn: all when few; else those holding view elements, the first and the last (runs
    of one row between them are drawn rather than folded), at most ``MAX_GRID_ROWS``."""
    if rows <= MAX_GRID_ROWS:
        return list(range(rows))
    keep = set(marked) | {0, rows - 1}
    keep |= {r + 1 for r in keep if r + 2 in keep}
    keep = sorted(r for r in keep if r < rows)
    if len(keep) > MAX_GRID_ROWS:
        keep = keep[: MAX_GRID_ROWS // 2] + keep[-(MAX_GRID_ROWS // 2):]
    return keep


# -- the coordinate -> storage-index table --------------------------------------------------------

def _table(subject: _Subject, coords: np.ndarray, idx: np.ndarray) -> list[str]:
    shape = subject.shape
    if not shape:
        return [f"() -> {int(idx[0])}"]
    if subject.colex:  # CuTe's print_layout: rows are mode 0, columns the other modes (colex)
        nrows = shape[0]
        ncols = subject.numel // nrows if nrows else 0
        grid = idx.reshape(ncols, nrows).T if subject.numel else np.zeros((nrows, 0), np.int64)
        row_names = [f"({r},...)" if len(shape) > 1 else f"({r})" for r in range(nrows)]
        across = "modes 1.. across (column-major)" if len(shape) > 2 else "mode 1 across"
        col_head = "mode 0 down, " + across
    else:
        ncols = shape[-1]
        nrows = subject.numel // ncols if ncols else math.prod(shape[:-1])
        grid = idx.reshape(nrows, ncols) if subject.numel else np.zeros((nrows, 0), np.int64)
        lead = np.indices(shape[:-1]).reshape(len(shape) - 1, -1).T if len(shape) > 1 else [()]
        row_names = ["(" + "".join(f"{int(v)}," for v in c) + ":)" for c in lead]
        col_head = f"last dim ({ncols}) across"
    if subject.numel == 0:
        return [f"no elements (shape {shape})"]
    cell = max(len(str(int(v))) for v in grid.reshape(-1))
    cell = max(cell, len(str(ncols - 1)))
    name_w = max(len(n) for n in row_names)
    fit = max(2, (COLUMNS - name_w - 8) // (cell + 1))  # room for " | " and " ... "
    cols = list(range(ncols)) if ncols <= fit else list(range(fit - 1)) + [ncols - 1]
    out = [f"coordinate -> storage index ({col_head})"]
    heads = [str(j).rjust(cell) for j in cols]
    header = " " * (name_w + 3) + (" ".join(heads) if len(cols) == ncols
                                   else " ".join(heads[:-1]) + " ... " + heads[-1].strip())
    out.append(header.rstrip())
    rows = list(range(nrows))
    if nrows > MAX_TABLE_ROWS:
        rows = rows[: MAX_TABLE_ROWS // 2] + [-1] + rows[-(MAX_TABLE_ROWS // 2):]
    for r in rows:
        if r < 0:
            out.append(" " * name_w + "  ⋮")
            continue
        vals = [str(int(grid[r, j])).rjust(cell) for j in cols]
        body = " ".join(vals) if len(cols) == ncols else " ".join(vals[:-1]) + " ... " + vals[-1]
        out.append(f"{row_names[r].rjust(name_w)} | {body}".rstrip())
    return out


# -- view refusals --------------------------------------------------------------------------------

def _view_section(subject: _Subject, shape: Sequence[Any]) -> list[str]:
    if subject.colex or any(s < 0 for s in subject.strides):
        return [f"view{tuple(shape)}: PyTorch's view rule applies to row-major layouts with non-negative "
                "strides; this one is not (CuTe order or negative strides)."]
    lay = Layout(subject.shape, subject.strides, subject.offset)
    new_shape = _views.infer_size(list(shape), lay.numel, op="view", layout=lay)
    strides = _views.view_strides(lay.shape, lay.strides, new_shape)
    title = f"view{tuple(shape)} of {lay}: new shape {new_shape}"
    if strides is not None:
        return [f"{title}: a view, {format_layout(new_shape, strides, lay.offset)} (no copy)"]
    out = [f"{title}: refused, as PyTorch's view (aten computeStride) refuses it"]
    chunks = _views._chunks(lay.shape, lay.strides)
    out.append("the old dims fall into storage-contiguous chunks (neighbours merge when stride[i] == "
               "shape[i+1]*stride[i+1]; size-1 dims never split a chunk):")
    for k, (lo, hi) in enumerate(chunks):
        dims = f"dim {lo}" if lo == hi else f"dims {lo}..{hi}"
        ext = math.prod(lay.shape[lo:hi + 1])
        out.append(f"  chunk {k}: {dims}, {ext} elements, stride {lay.strides[hi]}")
    out.append("each new dim must lie inside one chunk; matched from the last dim:")
    view_d = len(new_shape) - 1
    for k in range(len(chunks) - 1, -1, -1):
        lo, hi = chunks[k]
        need = math.prod(lay.shape[lo:hi + 1])
        got, taken = 1, []
        while view_d >= 0 and (got < need or new_shape[view_d] == 1):
            got *= new_shape[view_d]
            taken.append(view_d)
            view_d -= 1
        names = ", ".join(f"new dim {d} ({new_shape[d]})" for d in reversed(taken)) or "no new dim"
        if got == need:
            out.append(f"  chunk {k} ({need} elements) <- {names}: ok")
            continue
        d = taken[-1]
        out.append(f"  chunk {k} ({need} elements) <- {names}: the product {got} overshoots {need}, so "
                   f"new dim {d} ({new_shape[d]}) would span chunk {k} and chunk {k - 1}")
        if k > 0:
            plo, phi = chunks[k - 1]
            base = lay.strides[hi]
            out.append(f"  chunks {k - 1} and {k} do not merge: dim {phi} has stride {lay.strides[phi]}, but "
                       f"continuing chunk {k} needs {need} * {base} = {need * base}")
        break
    out.append("fixes:")
    spell = ", ".join(str(v) for v in shape)
    out.append(f"  - x.reshape({spell}): the same values, copied when no view exists (PyTorch's reshape)")
    out.append(f"  - x.contiguous().view({spell}): copy to row-major first, then view")
    order = sorted(range(lay.ndim), key=lambda d: (-lay.strides[d], d))
    perm = Layout(tuple(lay.shape[d] for d in order), tuple(lay.strides[d] for d in order), lay.offset)
    if order != list(range(lay.ndim)) and _views.view_strides(perm.shape, perm.strides, new_shape):
        out.append(f"  - x.permute{tuple(order)}.view({spell}): a view, but of the elements in storage order "
                   "(a different permutation of the values)")
    sizes = [math.prod(lay.shape[lo:hi + 1]) for lo, hi in chunks]
    for k, n in enumerate(sizes):  # split one chunk, to show a shape other than the chunks
        f = next((f for f in (2, 3, 5, 7) if n % f == 0 and n > f), None)
        if f is not None:
            sizes[k:k + 1] = [f, n // f]
            break
    out.append(f"  - a shape that splits each chunk on its own is always a view, e.g. x.view{tuple(sizes)}")
    return out


# -- the report -----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Explanation:
    """What :func:`explain` returns: the report as text and the data it was drawn from.

    ``str(e)`` is the plain text (lines of at most 100 columns); ``e._repr_html_()`` is the
    same report for notebooks with the view's cells highlighted; :meth:`figure` draws it with
    matplotlib and :meth:`save` writes a PNG or SVG.

    Attributes:
      parts: the report's sections in order, ``(name, lines)`` with name ``"title"``,
        ``"grid"`` (the storage), ``"table"`` (coordinate -> storage index), ``"facts"``,
        ``"plans"`` and, when asked for, ``"view"``; each line is a tuple of ``(text, style)``
        pieces, style ``None``, ``"title"``, ``"dim"``, ``"view"`` (a slot of the view) or
        ``"overlap"`` (a slot shared by several elements).
      shape, strides, offset: the layout explained (strides may be negative); elements.
      storage_size: elements of the storage drawn.
      width: storage elements per grid row.
      coords: coordinates of every element in the view's order, shape ``(numel, ndim)``.
      indices: the storage index of every element, shape ``(numel,)``.
      colex: the coordinates enumerate column-major (a CuTe layout).
    """

    parts: tuple[tuple[str, tuple[tuple[tuple[str, str | None], ...], ...]], ...]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    storage_size: int
    width: int
    coords: np.ndarray = dataclasses.field(repr=False, compare=False)
    indices: np.ndarray = dataclasses.field(repr=False, compare=False)
    colex: bool = False

    @property
    def lines(self) -> tuple[tuple[tuple[str, str | None], ...], ...]:
        """Every line of the report, sections separated by an empty line."""
        out: list[tuple[tuple[str, str | None], ...]] = []
        for k, (_, body) in enumerate(self.parts):
            if k:
                out.append((("", None),))
            out.extend(body)
        return tuple(out)

    @property
    def text(self) -> str:
        """The report as plain text."""
        return "\n".join("".join(t for t, _ in line).rstrip() for line in self.lines)

    def section(self, name: str) -> str:
        """One section of the report as plain text: ``"title"``, ``"grid"``, ``"table"``,
        ``"facts"``, ``"plans"`` or ``"view"``.

        Raises:
          LayoutError: the report has no section of that name (``"view"`` needs ``view=``;
            ``"table"`` is left out with the grid for very large layouts)."""
        for part, body in self.parts:
            if part == name:
                return "\n".join("".join(t for t, _ in line).rstrip() for line in body)
        raise LayoutError(f"Explanation.section: no section {name!r}; this report has "
                          f"{[p for p, _ in self.parts]}.")

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return (f"<Explanation of {format_layout(self.shape, self.strides, self.offset)}: "
                f"{len(self.lines)} lines>")

    def _repr_html_(self) -> str:
        colors = {"title": "font-weight:bold", "dim": "color:#888", "view": "color:#0a6;font-weight:bold",
                  "overlap": "color:#c22;font-weight:bold"}
        body = []
        for line in self.lines:
            parts, keep = [], len("".join(t for t, _ in line).rstrip())
            for text, style in line:
                text, keep = text[:keep], keep - len(text[:keep])
                esc = html.escape(text)
                parts.append(f'<span style="{colors[style]}">{esc}</span>' if style in colors else esc)
            body.append("".join(parts).rstrip())
        return "<pre style=\"line-height:1.25\">" + "\n".join(body) + "</pre>"

    def print(self, *, color: bool | None = None, file: Any = None) -> None:
        """Print the report: with colour through ``rich`` when it is installed and ``file``
        (default ``sys.stdout``) is a terminal, or when ``color=True``; plain text otherwise."""
        file = sys.stdout if file is None else file
        console = _rich_console(file, color)
        if console is None:
            print(self.text, file=file)
            return
        from rich.text import Text

        styles = {"title": "bold", "dim": "dim", "view": "bold green", "overlap": "bold red"}
        for line in self.lines:
            console.print(Text.assemble(*((t, styles.get(s, "")) for t, s in line)), soft_wrap=True)

    def figure(self, *, max_cells: int = 4096) -> Any:
        """The picture of the report as a ``matplotlib.figure.Figure``: left, the storage grid
        with the view's slots highlighted and numbered in the view's order (shared slots in
        red, with their count); right, the view's logical grid holding storage indices.

        Raises:
          LayoutError: the storage grid or the view has more than ``max_cells`` cells.
          ImportError: matplotlib is not installed (``pip install matplotlib``)."""
        from ._explain_plot import figure

        return figure(self, max_cells=max_cells)

    def save(self, path: str, **kwargs: Any) -> None:
        """Save :meth:`figure` to ``path``; the format follows its suffix (``.png``, ``.svg``)."""
        fig = self.figure()
        fig.savefig(path, bbox_inches="tight", **kwargs)


def _rich_console(file: Any, color: bool | None) -> Any:
    if color is False:
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    isatty = getattr(file, "isatty", lambda: False)()
    if color is None and not isatty:
        return None
    return Console(file=file, force_terminal=True, width=COLUMNS, highlight=False)


def explain(x: Any, /, *, storage: Any = None, view: Sequence[Any] | None = None, width: int | None = None,
            label: str = "auto", show: bool = True, color: bool | None = None) -> Explanation:
    """Draw a layout over its storage and say what the library does with it; print and return it.

    Args:
      x: a ``StridedArray`` (one item of a batched one), a ``Layout``, a layout as text
        (``"(4,3):(20,2)+22"``, negative strides allowed), a NumPy array (its view of the
        buffer of its base) or a CuTe layout (``functional_strides.cute``, or any object with
        ``shape``, ``stride``, ``size()``, ``cosize()`` and a call ``layout(i)``).
      storage: the storage drawn: a size in elements, or a 2-D shape ``(rows, width)`` (or
        ``"10x10"``) to draw it as that grid. Default: the array's own storage, else the
        layout's required size.
      view: a shape (``(3, -1)``): also take PyTorch's ``view`` rule apart for it: which new
        dims fall in which chunk of old dims, why the strides do not merge, and the fixes.
      width: storage elements per drawn row (default: the storage shape's width, else the
        widest stride below which the smaller dims fit, within 100 columns).
      label: how the view's slots are marked: ``"coords"`` (their coordinates), ``"order"``
        (their position in the view's order) or ``"auto"`` (coordinates when they fit).
      show: print the report (with colour through ``rich`` on a terminal).
      color: force colour on (``True``) or off (``False``); default: only on a terminal.
    Returns:
      An :class:`Explanation`; ``str()`` of it is the printed text.
    Raises:
      LayoutError: ``x`` is none of these kinds, the text is no layout, the offset is
        traced, ``storage`` is malformed or differs from the array's own storage size,
        ``label`` is unknown, ``width`` < 1, or ``view`` is an invalid shape for the numel.
    Example:
      >>> import functional_strides as fs
      >>> e = fs.explain("(2,3):(1,2)+1", storage=8, show=False)
      >>> print(e.section("grid"))
              0     1
      0 |     . (0,0)
      2 | (1,0) (0,1)
      4 | (1,1) (0,2)
      6 | (1,2)     .
      (i,...): the element at those coordinates; .: a storage slot outside the view; rows of 2 elements
      >>> e.indices.tolist(), "internal overlap: none" in e.text
      ([1, 3, 5, 2, 4, 6], True)

    Semantics: a picture of ``torch.as_strided(storage, shape, strides, offset)`` as the
    stride diagrams of PyTorch's docs draw it, and CuTe's ``print_layout`` table."""
    if label not in ("auto", "coords", "order"):
        raise LayoutError(f"explain: label must be 'auto', 'coords' or 'order' (got label={label!r}).")
    if width is not None and operator.index(width) < 1:
        raise LayoutError(f"explain: width must be >= 1 storage element per row (got width={width}).")
    subject = _subject(x, storage)
    parts: dict[str, list[_Line]] = {}
    storage_text = (f"storage of {subject.storage_size} elements" if subject.storage_size is not None
                    else "storage not given (drawn to the required size)")
    if subject.storage_rows:
        storage_text += f" ({subject.storage_rows} x {subject.storage_size // subject.storage_rows})"
    parts["title"] = [[(f"layout {subject.name} ({subject.kind}); {storage_text}", "title")]]
    if subject.extra:
        parts["title"].append([(_wrap(subject.extra, "  ")[0], None)])
    numel = subject.numel
    coords = _coords(subject)
    idx = _indices(subject, coords) if numel else np.zeros(0, np.int64)
    w_used = width or 1
    drawable = numel <= MAX_DRAWN_ELEMENTS and (not numel or int(idx.min()) >= 0)
    if drawable:
        grid: list[_Line] = []
        for lab in (["coords", "order"] if label == "auto" else [label]):
            grid = _grid(subject, coords, idx, lab, width)
            if grid:
                break
        if not grid:
            grid = _grid(subject, coords, idx, "order", width, squeeze=True)
        parts["grid"] = grid
        w_used = _width_of(grid) or w_used
        parts["table"] = [[(t, None)] for t in _table(subject, coords, idx)]
    else:
        why = f"more than {MAX_DRAWN_ELEMENTS} elements" if numel > MAX_DRAWN_ELEMENTS else "indices below 0"
        parts["grid"] = [[(f"(grid and table left out: {why})", "dim")]]
    parts["facts"] = [[(t, None)] for fact in _facts(subject) for t in _wrap(fact, "  ")]
    parts["plans"] = [[(t, None)] for fact in _plans(subject) for t in _wrap(fact, "  ")]
    if view is not None:
        parts["view"] = [[(u, None)] for t in _view_section(subject, view)
                         for u in _wrap(t, "      " if t.startswith("  ") else "  ")]
    size = subject.storage_size if subject.storage_size is not None else (
        int(idx.max()) + 1 if numel and drawable else 0)
    result = Explanation(tuple((name, tuple(tuple(line) for line in body)) for name, body in parts.items()),
                         subject.shape, subject.strides, subject.offset, size, w_used, coords, idx,
                         subject.colex)
    if show:
        result.print(color=color)
    return result


def _width_of(grid: list[_Line]) -> int | None:
    """Storage elements per row of a drawn grid (its header holds the column numbers)."""
    if not grid:
        return None
    return len(grid[0][0][0].split())


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, COLUMNS, subsequent_indent=indent, break_on_hyphens=False) or [""]
