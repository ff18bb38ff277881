"""What :func:`functional_strides._src.explain.explain` explains, read from each kind of input.

A StridedArray, a Layout, the text notation ``"(shape):(strides)+offset"``, a NumPy array or a
CuTe layout becomes one record of flat dims whose strides may be negative (NumPy, CuTe), with
the storage size when known. Strides, offsets and sizes are counted in elements.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..array.strided import StridedArray
from ..core.errors import LayoutError
from ..core.layout import Layout, format_layout

__all__ = ["parse_layout"]


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
