"""The picture of an :func:`functional_strides.explain` report, drawn with matplotlib, for a
layout of any rank.

Two panels, one above the other:

* the storage, as rows of ``e.width`` slots: the view's slots highlighted and numbered in
  the view's order (slots shared by several elements in red, with their count);
* the view, as nested small multiples of its last two dims (CuTe's ``print_layout`` of
  every 2-D slice): each small grid is ``x[i, j, ..., :, :]`` holding the storage index of
  every element, headed by its leading coordinates ``i,j,...``. The leading dims alternate
  between across and down, the innermost of them across, and each level of nesting leaves a
  wider gap, so a 6-D window view reads as windows of windows.

Cells are sized so that the whole picture fits in about 16 x 14 inches; a label is drawn
only at a font size that fits its cell (no text overlaps another). Imported on use:
matplotlib is optional (the ``demo``, ``test`` and ``docs`` extras install it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import LayoutError

_VIEW, _SHARED, _FREE, _PAST = "#9be3c3", "#f4a3a3", "#f2f2f2", "#ffffff"
#: Largest picture drawn, in inches (width, height), and the largest cell.
MAX_INCHES = (16.0, 14.0)
MAX_CELL_INCHES = 0.42
#: Smallest font drawn, in points: a label that would need a smaller one is left out.
MIN_FONT = 4.0
_CHAR = 0.62  # width of a digit in em (DejaVu Sans), with a margin
_POINTS = 72.0


def view_grid(shape: tuple[int, ...], colex: bool = False) -> tuple[list[tuple[int, ...]], int, int,
                                                                    list[int], list[int]]:
    """Where each small grid of a view of ``shape`` goes: ``(leading coordinates, rows,
    cols, x, y)`` with one entry of ``x``/``y`` (in cells, from the top left) per coordinate.

    The last two dims form each small grid (``rows x cols``; a rank-1 view is one row, rank 0
    one cell). For a CuTe layout (``colex``) the first two modes do, as ``print_layout``
    draws mode 0 down. The other dims nest: the innermost goes across, the next down, and so
    on, a gap of ``1 + level`` cells between grids at each level (a grid's header takes one
    row above it)."""
    dims = list(shape[::-1]) if colex else list(shape)
    if colex and len(dims) >= 2:  # mode 0 down, mode 1 across, as print_layout
        dims[-2], dims[-1] = dims[-1], dims[-2]
    if len(dims) == 0:
        rows, cols, lead = 1, 1, []
    elif len(dims) == 1:
        rows, cols, lead = 1, dims[0], []
    else:
        rows, cols, lead = dims[-2], dims[-1], dims[:-2]
    header = 1 if lead else 0
    across = lead[::-1][0::2]  # innermost leading dim first
    down = lead[::-1][1::2]
    pitch_x, pitch_y = [], []
    ex, ey = cols, rows + header  # extent of one group of the level below, in cells
    for level, n in enumerate(across):
        pitch_x.append(ex + 1 + level)
        ex += pitch_x[-1] * (n - 1)
    for level, n in enumerate(down):
        pitch_y.append(ey + 1 + level)
        ey += pitch_y[-1] * (n - 1)
    coords = [tuple(int(v) for v in c) for c in np.ndindex(*lead)] if lead else [()]
    xs, ys = [], []
    for c in coords:
        rev = c[::-1]
        xs.append(sum(rev[2 * k] * pitch_x[k] for k in range(len(across))))
        ys.append(sum(rev[2 * k + 1] * pitch_y[k] for k in range(len(down))))
    return coords, rows, cols, xs, ys


def _extent(coords_x: list[int], coords_y: list[int], rows: int, cols: int, header: int) -> tuple[int, int]:
    return (max(coords_x, default=0) + cols, max(coords_y, default=0) + rows + header)


def figure(e: Any, *, max_cells: int = 4096) -> Any:
    """A ``matplotlib.figure.Figure`` of ``e`` (see the module docstring).

    Args:
      e: an :class:`functional_strides.Explanation`.
      max_cells: the most cells drawn, storage and view each.
    Returns:
      A figure with two axes: the storage (``fig.axes[0]``) and the view (``fig.axes[1]``).
    Raises:
      LayoutError: the storage grid or the view has more than ``max_cells`` cells (the
        text report still covers it; draw a smaller part with ``storage=``, or raise
        ``max_cells``, which :meth:`~functional_strides.Explanation.save` passes on)."""
    from matplotlib.figure import Figure

    numel = int(np.prod(e.shape)) if e.shape else 1
    size = max(e.storage_size, int(e.indices.max()) + 1 if e.indices.size else 0, 1)
    width = _storage_width(max(1, e.width), size, _extent(*view_grid(tuple(e.shape), e.colex)[3:],
                                                          *view_grid(tuple(e.shape), e.colex)[1:3], 1)[0])
    rows = -(-size // width)
    if rows * width > max_cells or numel > max_cells:
        raise LayoutError(
            f"explain: the picture would hold {rows * width} storage cells and {numel} view cells, "
            f"more than max_cells={max_cells}; pass a smaller storage= or width=, or raise max_cells "
            f"(e.figure(max_cells=...), e.save(path, max_cells=...), --max-cells).")
    if numel and e.indices.size != numel:
        raise LayoutError(f"explain: the layout has {numel} elements, more than the report draws; "
                          "explain a smaller part of it.")
    count: dict[int, int] = {}
    order: dict[int, int] = {}
    for k, i in enumerate(e.indices.tolist()):
        count[i] = count.get(i, 0) + 1
        order.setdefault(i, k)
    coords, vrows, vcols, xs, ys = view_grid(tuple(e.shape), e.colex)
    header = 1 if coords != [()] else 0
    view_w, view_h = _extent(xs, ys, vrows, vcols, header)
    view_w, view_h = max(view_w, 1), max(view_h, 1)
    # one cell size for both panels, so that the storage and the view read at one scale
    cells_w = max(width + 1.5, view_w)
    cell = min(MAX_CELL_INCHES, (MAX_INCHES[0] - 0.5) / cells_w, (MAX_INCHES[1] - 2.0) / (rows + 1 + view_h))
    cell_pt = cell * _POINTS
    fig_w = max(4.0, cells_w * cell + 0.5)
    from ..core.layout import format_layout

    titles = [_wrap(t, fig_w) for t in (
        f"layout {format_layout(e.shape, e.strides, e.offset)}",
        f"storage: {e.storage_size} elements in rows of {width}; a slot of the view holds its element's "
        "place in the view's order",
        f"the view {tuple(e.shape)}: " + (f"one grid per {'first two modes' if e.colex else 'last two dims'} "
                                          "slice, headed by its leading coordinates; " if header else "")
        + "each cell holds its element's storage index")]
    line = 0.2  # inches per line of a 9-point title
    heights = [len(t.splitlines()) * line + 0.1 for t in titles]
    heights[2] += 0.15  # room between the storage and the view's title
    fig_h = heights[0] + heights[1] + (rows + 1) * cell + heights[2] + view_h * cell + 0.3
    fig = Figure(figsize=(fig_w, fig_h))
    y = fig_h - heights[0] - heights[1]  # top of the storage axes (its column numbers above)
    left = 0.25 + 1.5 * cell
    storage_ax = fig.add_axes((left / fig_w, (y - (rows + 1) * cell) / fig_h, width * cell / fig_w,
                               rows * cell / fig_h))
    y -= (rows + 1) * cell + heights[2]
    view_ax = fig.add_axes((0.25 / fig_w, (y - view_h * cell) / fig_h, view_w * cell / fig_w,
                            view_h * cell / fig_h))
    fig.text(0.25 / fig_w, 1 - 0.05 / fig_h, titles[0], fontsize=11, va="top", ha="left", gid="title")
    fig.text(0.25 / fig_w, 1 - (heights[0] + 0.05) / fig_h, titles[1], fontsize=9, va="top", ha="left",
             gid="title")
    fig.text(0.25 / fig_w, (y + heights[2] - 0.05) / fig_h, titles[2], fontsize=9, va="top", ha="left",
             gid="title")
    # storage
    labels = {i: str(order[i]) + (f"\n×{count[i]}" if count[i] > 1 else "") for i in count}
    font = _font(cell_pt, max((len(s.split("\n")[0]) for s in labels.values()), default=1),
                 lines=2 if any(v > 1 for v in count.values()) else 1)
    for r in range(rows):
        for c in range(width):
            i = r * width + c
            shared = count.get(i, 0) > 1
            color = (_SHARED if shared else _VIEW) if i in count else (_FREE if i < e.storage_size else _PAST)
            storage_ax.add_patch(_cell(c, r, color))
            if i in count and font:
                storage_ax.text(c + 0.5, r + 0.5, labels[i], ha="center", va="center", fontsize=font,
                                gid="slot", linespacing=0.9)
    tick_font = _font(cell_pt, len(str(max((rows - 1) * width, width - 1))), fill=0.9)
    _frame(storage_ax, rows, width, tick_font, [str(r * width) for r in range(rows)],
           [str(c) for c in range(width)])
    # view
    idx = e.indices.reshape(-1)
    per = vrows * vcols
    font = _font(cell_pt, max((len(str(int(v))) for v in idx.tolist()), default=1))
    head_font = _font(cell_pt * vcols, max((len(_head(c, e.colex)) for c in coords), default=1), fill=1.0)
    for p, (c, x0, y0) in enumerate(zip(coords, xs, ys, strict=True)):
        block = idx[p * per:(p + 1) * per]
        grid = block.reshape(vcols, vrows).T if e.colex and len(e.shape) >= 2 else block.reshape(vrows, vcols)
        if header and head_font:
            view_ax.text(x0, y0 + 0.5, _head(c, e.colex), ha="left", va="center", fontsize=head_font,
                         gid="header", color="#555555")
        for r in range(grid.shape[0]):
            for q in range(grid.shape[1]):
                i = int(grid[r, q])
                view_ax.add_patch(_cell(x0 + q, y0 + header + r, _SHARED if count.get(i, 0) > 1 else _VIEW))
                if font:
                    view_ax.text(x0 + q + 0.5, y0 + header + r + 0.5, str(i), ha="center", va="center",
                                 fontsize=font, gid="index")
    _frame(view_ax, view_h, view_w, None, [], [])
    return fig


def _storage_width(width: int, size: int, view_w: int) -> int:
    """Storage slots per drawn row: the report's ``width`` (a stride of the view, so that rows
    line up with a dim), times the largest factor that keeps the row within the view's width
    (or 16 slots) and leaves no empty row."""
    room = max(view_w, 16)
    k = max(1, min(room // width, -(-size // width)))
    return width * k


def _wrap(text: str, fig_w: float) -> str:
    """``text`` wrapped to the figure's width (a 9-point character is about 0.075 inches)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, max(20, int((fig_w - 0.4) / 0.075))))


def _head(coord: tuple[int, ...], colex: bool = False) -> str:
    """The header of the small grid of leading coordinates ``coord``: ``i,j,:,:`` (a CuTe
    layout, whose leading modes come last: ``:,:,i,j``)."""
    if colex:
        return ":,:," + ",".join(str(v) for v in coord[::-1])
    return ",".join(str(v) for v in coord) + ",:,:"


def _font(room_pt: float, chars: int, *, lines: int = 1, fill: float = 0.8) -> float:
    """The font size (points) at which ``chars`` digits on ``lines`` lines fit in a box of
    ``room_pt`` points, at most 9; 0 when that is below :data:`MIN_FONT` (not drawn)."""
    size = min(9.0, fill * room_pt / (max(chars, 1) * _CHAR), 0.8 * room_pt / (1.25 * lines))
    return 0.0 if size < MIN_FONT else math.floor(size * 2) / 2


def _cell(x: float, y: float, color: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), 1, 1, facecolor=color, edgecolor="#777777", linewidth=0.6)


def _frame(ax: Any, rows: int, cols: int, tick_font: float | None, row_names: list[str],
           col_names: list[str]) -> None:
    ax.set_xlim(0, max(cols, 1))
    ax.set_ylim(max(rows, 1), 0)
    ax.set_aspect("auto")  # the axes are sized to the cells already
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if tick_font:
        ax.set_xticks([c + 0.5 for c in range(cols)], col_names, fontsize=tick_font)
        ax.set_yticks([r + 0.5 for r in range(rows)], row_names, fontsize=tick_font)
        ax.xaxis.tick_top()
        ax.tick_params(pad=1)
    else:
        ax.set_xticks([])
        ax.set_yticks([])
