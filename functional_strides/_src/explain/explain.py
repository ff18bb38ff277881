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
import operator
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..array.strided import StridedArray
from ..core.errors import LayoutError
from ..core.layout import Layout, format_layout
from .subject import _coords, _indices, _subject, parse_layout
from .text import (
    COLUMNS,
    MAX_DRAWN_ELEMENTS,
    MAX_GRID_ROWS,
    MAX_PITCH,
    MAX_TABLE_ROWS,
    _facts,
    _grid,
    _Line,
    _plans,
    _table,
    _view_section,
    _wrap,
)

__all__ = ["COLUMNS", "MAX_DRAWN_ELEMENTS", "MAX_GRID_ROWS", "MAX_PITCH", "MAX_TABLE_ROWS", "Explanation",
           "explain", "parse_layout"]


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
        ``"plans"``, ``"sharding"`` (a storage sharded across devices: how the read is
        partitioned and the collectives of its compiled program, with their bytes) and, when
        asked for, ``"view"``; each line is a tuple of ``(text, style)``
        pieces, style ``None``, ``"title"``, ``"dim"``, ``"view"`` (a slot of the view) or
        ``"overlap"`` (a slot shared by several elements).
      shape, strides, offset: the layout explained (strides may be negative); elements.
      storage_size: elements of the storage drawn.
      width: storage elements per grid row.
      coords: coordinates of every element in the view's order, shape ``(numel, ndim)``
        (empty for layouts of more than ``MAX_DRAWN_ELEMENTS`` elements, which are not drawn).
      indices: the storage index of every element, shape ``(numel,)`` (empty likewise).
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
        ``"facts"``, ``"plans"``, ``"sharding"`` or ``"view"``.

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
            console.print(Text.assemble(*((t, styles.get(s or "", "")) for t, s in line)), soft_wrap=True)

    def figure(self, *, max_cells: int = 4096) -> Any:
        """The picture of the report as a ``matplotlib.figure.Figure``, for a layout of any
        rank: above, the storage in rows with the view's slots highlighted and numbered in the
        view's order (shared slots in red, with their count); below, the view as nested small
        multiples of its last two dims (CuTe: its first two modes), each cell holding the
        storage index of its element and each small grid headed by its leading coordinates.

        Args:
          max_cells: the most cells drawn, in the storage and in the view each.
        Returns:
          The figure; ``fig.axes`` are the storage and the view.
        Raises:
          LayoutError: the storage grid or the view has more than ``max_cells`` cells.
          ImportError: matplotlib is not installed (``pip install matplotlib``).
        Example:
          >>> e = fs.explain("(2,2,3):(1,6,2)", show=False)
          >>> [len(ax.patches) for ax in e.figure().axes]         # 12 storage slots, 12 elements
          [12, 12]"""
        from .plot import figure

        return figure(self, max_cells=max_cells)

    def save(self, path: str, *, max_cells: int = 4096, **kwargs: Any) -> None:
        """Save :meth:`figure` to ``path``; the format follows its suffix (``.png``, ``.svg``).

        Args:
          path: the file written.
          max_cells: as in :meth:`figure`.
          kwargs: passed to matplotlib's ``savefig`` (``dpi=``, ...).
        Raises:
          LayoutError: as :meth:`figure`.
          ImportError: matplotlib is not installed (``pip install matplotlib``).
        Example:
          >>> import tempfile, pathlib
          >>> with tempfile.TemporaryDirectory() as d:
          ...     fs.explain("(4,4):(2,1)", show=False).save(f"{d}/windows.svg")
          ...     pathlib.Path(f"{d}/windows.svg").read_text().startswith("<?xml")
          True"""
        fig = self.figure(max_cells=max_cells)
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
    if subject.storage_rows and subject.storage_size is not None:
        storage_text += f" ({subject.storage_rows} x {subject.storage_size // subject.storage_rows})"
    parts["title"] = [[(f"layout {subject.name} ({subject.kind}); {storage_text}", "title")]]
    if subject.extra:
        parts["title"].append([(_wrap(subject.extra, "  ")[0], None)])
    numel = subject.numel
    small = numel <= MAX_DRAWN_ELEMENTS  # per-element arrays only for layouts that are drawn
    coords = _coords(subject) if small else np.zeros((0, len(subject.shape)), np.int64)
    idx = _indices(subject, coords) if numel and small else np.zeros(0, np.int64)
    w_used = width or 1
    drawable = small and (not numel or int(idx.min()) >= 0)
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
    # a plan's facts are indented by 2, the wrapped rest of any line by 4
    parts["plans"] = [[(t, None)] for fact in _plans(subject) for t in _wrap(fact, "    ")]
    sharded = _sharded_report(x)
    if sharded:
        parts["sharding"] = [[(t, None)] for fact in sharded for t in _wrap(fact, "  ")]
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


def _sharded_report(x: Any) -> list[str]:
    """For a ``StridedArray`` over one storage sharded across devices: how its read is
    partitioned and the collectives it uses (compiled; see ``sharded.read_report``)."""
    from ..sharding import sharded

    storage = getattr(x, "storage", None)
    if storage is None or sharded.partition(storage) is None:
        return []
    return sharded.read_report(storage, x.layout)


def repr_html(x: Any) -> str | None:
    """Notebook display of a ``Layout`` or ``StridedArray``: the :func:`explain` report as
    HTML, or ``None`` (so that the plain repr shows) when there is nothing to draw, e.g. a
    traced offset."""
    try:
        return explain(x, show=False)._repr_html_()
    except LayoutError:
        return None


# Notebook display of a Layout and a StridedArray (the layers below stay free of this one).
setattr(Layout, "_repr_html_", repr_html)  # noqa: B010 - an attribute the classes do not declare
setattr(StridedArray, "_repr_html_", repr_html)  # noqa: B010


def _width_of(grid: list[_Line]) -> int | None:
    """Storage elements per row of a drawn grid (its header holds the column numbers)."""
    if not grid:
        return None
    return len(grid[0][0][0].split())
