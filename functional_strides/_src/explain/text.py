"""The sections of the :func:`functional_strides._src.explain.explain` report, as text: the storage grid,
the coordinate -> storage-index table, the facts, the read and write plans and the ``view``
decomposition. Every line fits in ``COLUMNS`` (100) columns.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import views as _views
from ..core.config import config as _config
from ..core.layout import Layout, format_layout
from ..core.overlap import dfs as _dfs
from ..core.overlap import overlap as _overlap
from ..lowering import reads as _lowering
from ..lowering import writes as _scatter
from ..native import copy_kernel as _copy_kernel
from .subject import _coord_text, _Subject

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


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, COLUMNS, subsequent_indent=indent, break_on_hyphens=False) or [""]


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
        need = 0 if need is None else need  # an empty view needs no storage
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
    if dense and flipped:  # PyTorch's and Layout's rule read strides as they are
        dense, detail = False, detail + f"; dense once dims {list(flipped)} are reversed back"
    out.append("non-overlapping and dense (a permutation of dims is contiguous): " +
               ("yes" if dense else "no") + f" ({detail})")
    witness = _overlap.write_check(lay)
    if witness is None:
        out.append("internal overlap: none (every element has its own storage slot)")
    elif not isinstance(witness, tuple):  # UNDECIDED: past the bound
        out.append(f"internal overlap: undecided within fs.config.overlap_max_work="
                   f"{_config.overlap_max_work} units of work (writes are planned as overlapping, which "
                   "gives the same values; fs.config.update('overlap_max_work', -1) decides exactly, "
                   "which may take long)")
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

def _plans(subject: _Subject) -> list[str]:
    """The read and write plans: for each, a line naming the plan and its first reason, then one
    indented sentence per further fact."""
    lay, flipped = subject.analysis_layout()
    numel = subject.numel
    span_neg = sum((n - 1) * s for n, s in zip(subject.shape, subject.strides, strict=True) if s < 0)
    if numel and subject.offset + span_neg < 0:
        return ["read/write plans: none (the layout addresses indices below 0)."]
    out = []
    note = ""
    if flipped or subject.colex:
        what = []
        if flipped:
            what.append(f"negative strides on dims {list(flipped)} (read forwards from the lowest index, "
                        "then reversed with lax.rev; PyTorch's as_strided and x[::-1] refuse them)")
        if subject.colex:
            what.append("CuTe's column-major order (the modes reversed into row-major)")
        out.append("plans below are for " + str(lay) + ", the same slots with " + " and ".join(what) + ".")
        if flipped:
            out.append(f"  fs.flip(fs.as_strided(storage, {lay.shape}, {lay.strides}, {lay.offset}), "
                       f"{tuple(flipped)}) is the same view.")
    n = subject.storage_size if subject.storage_size is not None else lay.required_storage_size
    read = _lowering.read_plan_over(lay, n)
    out += _plan_lines("read plan (fs.read_plan)", read, list(read.reasons))
    if n < (lay.required_storage_size or 0):
        return [*out, "write plan: none (the storage is too small for the view)."]
    if numel and not subject.storage_size:
        note = f" (over {n} elements, the required size)"
    witness = _overlap.write_check(lay)
    for mode in ("set", "add"):
        path = _scatter.write_plan(lay, max(n, 1), mode=mode)
        why = list(path.reasons)
        if mode == "set" and witness.__class__ is tuple:
            why.append("Only with overlap='last' (the row-major last element wins), else OverlapError.")
        out += _plan_lines(f"write plan (fs.write_plan, mode={mode!r}){note}", path, why)
    out.append("eager use (outside jit): a contiguous view reads and writes with one dynamic_slice or "
               "dynamic_update_slice.")
    out.append("  Any other view uses one program compiled once per shape (strides and offset passed as "
               "arrays).")
    out += _native_lines()
    return out


def _plan_lines(name: str, path: str, sentences: list[str]) -> list[str]:
    """``name: path: first sentence`` and the other sentences indented, one a line."""
    first, *rest = sentences
    word = first.split()[0]
    if not (len(word) > 1 and word.isupper()):  # "A permute" -> "a permute"; "CPU" stays
        first = first[0].lower() + first[1:]
    return [f"{name}: {path}: {first}", *(f"  {t}" for t in rest)]


def _native_lines() -> list[str]:
    """Which compiled parts the plans above may take (``fs.config``), and why one is not."""
    if _copy_kernel.enabled():
        copy = "the strided copy and write on (fs.config.native_copy)"
    elif not _config.native_copy:
        copy = "the strided copy and write off (fs.config.native_copy is False): XLA's ops only"
    else:
        copy = "the strided copy and write not built (or stale): XLA's ops only"
    search = ("in C" if _dfs.compiled() is not None else
              "in Python (fs.config.native_overlap is False)" if not _config.native_overlap else
              "in Python (the C search is not built)")
    return [f"compiled parts: {copy}; the overlap search {search}.",
            "  A function already jitted keeps the path it was traced with."]


# -- the storage grid -----------------------------------------------------------------------------

def _grid_width(subject: _Subject, lay: Layout, high: int, room: int) -> tuple[int, bool]:
    """Storage elements per drawn row, and whether the layout chose it (``False``: only the
    room left did).

    The storage shape's width when given. Else the stride of a dim that has smaller-stride
    dims inside it, all of which fit in one row (so each row holds whole inner dims and the
    outer dim steps down the rows): the smallest such stride that draws at most
    ``MAX_GRID_ROWS`` rows, within ``MAX_PITCH``. Else the whole storage in one row when it
    fits, else as many elements as fit."""
    if subject.storage_rows is not None and subject.storage_size is not None:
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
            _, phi = chunks[k - 1]
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
