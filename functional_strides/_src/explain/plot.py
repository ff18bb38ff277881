"""The picture of an :class:`~functional_strides._src.explain.explain.Explanation`, drawn with matplotlib.

Two panels: the storage as a grid of rows with the view's slots highlighted and numbered in
the view's order (slots shared by several elements in red, with their count), and the view's
logical grid holding the storage index of every element. Imported on use: matplotlib is
optional (the ``demo`` and ``test`` extras install it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import LayoutError

_VIEW, _SHARED, _FREE, _PAST = "#9be3c3", "#f4a3a3", "#f2f2f2", "#ffffff"


def _logical(e: Any) -> tuple[np.ndarray, list[str], list[str]]:
    """The view's elements as a 2-D grid of storage indices, with row and column labels (as
    the text table: rows over the leading dims, the last dim across; CuTe: mode 0 down)."""
    shape, idx = e.shape, e.indices
    if not shape:
        return idx.reshape(1, 1), ["()"], [""]
    if e.colex:
        rows = shape[0]
        grid = idx.reshape(-1, rows).T if idx.size else np.zeros((rows, 0), np.int64)
        return grid, [str(r) for r in range(rows)], [str(c) for c in range(grid.shape[1])]
    cols = shape[-1]
    grid = idx.reshape(-1, cols) if idx.size else np.zeros((0, cols), np.int64)
    lead = np.indices(shape[:-1]).reshape(len(shape) - 1, -1).T if len(shape) > 1 else [()]
    names = ["(" + "".join(f"{int(v)}," for v in c) + ":)" for c in lead]
    return grid, names[: grid.shape[0]], [str(c) for c in range(cols)]


def figure(e: Any, *, max_cells: int = 4096) -> Any:
    """A ``matplotlib.figure.Figure`` of ``e`` (see the module docstring).

    Raises:
      LayoutError: the storage grid or the view has more than ``max_cells`` cells (the
        text report still covers it; draw a smaller part with ``storage=``)."""
    from matplotlib.figure import Figure

    width = max(1, e.width)
    size = max(e.storage_size, int(e.indices.max()) + 1 if e.indices.size else 0, 1)
    rows = -(-size // width)
    grid, row_names, col_names = _logical(e)
    if rows * width > max_cells or grid.size > max_cells:
        raise LayoutError(
            f"explain: the picture would hold {rows * width} storage cells and {grid.size} view cells, "
            f"more than max_cells={max_cells}; pass a smaller storage= or width=, or raise max_cells.")
    count: dict[int, int] = {}
    order: dict[int, int] = {}
    for k, i in enumerate(e.indices.tolist()):
        count[i] = count.get(i, 0) + 1
        order.setdefault(i, k)
    fig = Figure(figsize=(min(16.0, 2.0 + 0.45 * (width + max(grid.shape[1], 1))),
                          min(12.0, 1.5 + 0.42 * max(rows, grid.shape[0], 1))))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [max(width, 1), max(grid.shape[1], 1)]})
    font = 7 if max(width, grid.shape[1]) > 12 else 9
    for r in range(rows):
        for c in range(width):
            i = r * width + c
            shared = count.get(i, 0) > 1
            color = (_SHARED if shared else _VIEW) if i in count else (_FREE if i < e.storage_size else _PAST)
            left.add_patch(_cell(c, r, color))
            if i in count:
                text = str(order[i]) + (f"\n×{count[i]}" if shared else "")
                left.text(c + 0.5, r + 0.5, text, ha="center", va="center", fontsize=font)
    _frame(left, rows, width, [str(r * width) for r in range(rows)], [str(c) for c in range(width)],
           f"storage ({e.storage_size} elements, rows of {width}):\nview elements numbered in order")
    for r in range(grid.shape[0]):
        for c in range(grid.shape[1]):
            i = int(grid[r, c])
            right.add_patch(_cell(c, r, _SHARED if count.get(i, 0) > 1 else _VIEW))
            right.text(c + 0.5, r + 0.5, str(i), ha="center", va="center", fontsize=font)
    _frame(right, grid.shape[0], grid.shape[1], row_names, col_names,
           "the view: storage index of each element")
    from ..core.layout import format_layout

    fig.suptitle(f"layout {format_layout(e.shape, e.strides, e.offset)}")
    fig.tight_layout()
    return fig


def _cell(x: int, y: int, color: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), 1, 1, facecolor=color, edgecolor="#777777", linewidth=0.6)


def _frame(ax: Any, rows: int, cols: int, row_names: list[str], col_names: list[str], title: str) -> None:
    ax.set_xlim(0, max(cols, 1))
    ax.set_ylim(max(rows, 1), 0)
    ax.set_aspect("equal")
    ax.set_xticks([c + 0.5 for c in range(cols)], col_names, fontsize=7)
    ax.set_yticks([r + 0.5 for r in range(rows)], row_names, fontsize=7)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title(title, fontsize=9)
