"""The picture of ``fs.explain`` for layouts of any rank: every element drawn once in the
view's small multiples at the place :func:`view_grid` gives it, no two labels overlapping
(their bounding boxes measured by matplotlib's renderer), every label inside its cell and
the figure, and a bounded size; ``figure`` and ``save`` take the same options."""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
import pytest

import functional_strides as fs
from functional_strides import Layout, LayoutError
from functional_strides._src.explain import plot

pytest.importorskip("matplotlib")


def _swin_windows() -> fs.StridedArray:
    """Swin's window partition: (B, H, W, C) -> (B, H/2, W/2, 2, 2, C), 6-D."""
    x = fs.from_array(jnp.arange(32.0).reshape(1, 4, 4, 2))
    return x.view(1, 2, 2, 2, 2, 2).permute(0, 1, 3, 2, 4, 5)


def _im2col() -> fs.StridedArray:
    """Every 3 x 3 patch of a 2-channel 6 x 6 image: (C, oh, ow, kh, kw), 5-D, overlapping."""
    return fs.from_array(jnp.arange(72.0).reshape(2, 6, 6)).unfold(1, 3, 1).unfold(2, 3, 1)


def _heads() -> fs.StridedArray:
    """Attention heads: (B, S, H, D) read as (B, H, S, D), 4-D."""
    return fs.from_array(jnp.arange(48.0).reshape(2, 3, 2, 4)).permute(0, 2, 1, 3)


CASES = {
    "rank0": lambda: "():()+3",
    "rank1-reversed": lambda: "(5,):(-2,)+9",
    "frames": lambda: fs.from_array(jnp.zeros(10)).unfold(0, 4, 2),
    "expanded": lambda: "(3,4):(0,1)",
    "heads-4d": _heads,
    "im2col-5d": _im2col,
    "swin-6d": _swin_windows,
    "rank6-wide": lambda: Layout((2, 1, 3, 2, 1, 5), (1, 7, 60, 2, 3, 12)),
    "empty": lambda: "(0,3):(3,1)",
    "cute": lambda: fs.cute.Layout((2, (2, 3)), (1, (6, 2))),
}


def _texts(fig):
    """(text artist, window extent) of every label drawn, tick labels included."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    artists = list(fig.texts)
    for ax in fig.axes:
        artists += list(ax.texts) + ax.get_xticklabels() + ax.get_yticklabels()
    return [(t, t.get_window_extent(renderer)) for t in artists if t.get_visible() and t.get_text().strip()]


@pytest.mark.sampled(3)
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_any_rank_draws_every_element_legibly(case):
    e = fs.explain(CASES[case](), show=False)
    fig = e.figure()
    storage, view = fig.axes
    # every element of the view is one cell holding its storage index
    assert len(view.patches) == e.indices.size
    drawn = [t for t in view.texts if t.get_gid() == "index"]
    if drawn:
        assert sorted(int(t.get_text()) for t in drawn) == sorted(e.indices.tolist())
    assert len(storage.patches) >= e.storage_size
    # no label overlaps another, and each lies in the figure
    texts = _texts(fig)
    width, height = fig.bbox.width, fig.bbox.height
    for t, box in texts:
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, t.get_text()
    for (a, ba), (b, bb) in itertools.combinations(texts, 2):
        overlap_w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
        overlap_h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
        assert overlap_w <= 0.5 or overlap_h <= 0.5, (case, a.get_text(), b.get_text())
    # each cell label fits its cell
    cell_px = view.bbox.width / view.get_xlim()[1]
    for t in drawn:
        assert t.get_window_extent().width <= cell_px, (case, t.get_text())
    w, h = fig.get_size_inches()
    assert w <= plot.MAX_INCHES[0] + 0.5 and h <= plot.MAX_INCHES[1] + 2.0


def test_small_multiples_nest_without_overlap():
    shape = (2, 3, 2, 2, 3)  # three leading dims: across, down, across
    coords, rows, cols, xs, ys = plot.view_grid(shape)
    assert (rows, cols) == (2, 3) and len(coords) == 12
    boxes = [(x, y, x + cols, y + 1 + rows) for x, y in zip(xs, ys, strict=True)]  # header row included
    for a, b in itertools.combinations(boxes, 2):
        assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
    place = dict(zip(coords, zip(xs, ys, strict=True), strict=True))
    # the innermost leading dim goes across with a gap of 1, the next down, the outermost
    # across again with a wider gap
    assert place[(0, 0, 1)][0] - place[(0, 0, 0)][0] == cols + 1
    assert place[(0, 1, 0)][1] - place[(0, 0, 0)][1] == rows + 1 + 1
    assert place[(1, 0, 0)][0] - place[(0, 0, 1)][0] == cols + 2
    assert plot.view_grid(())[1:3] == (1, 1) and plot.view_grid((4,))[1:3] == (1, 4)


def test_cells_show_the_elements_they_hold():
    e = fs.explain(_swin_windows(), show=False)
    view = e.figure().axes[1]
    coords, rows, cols, xs, ys = plot.view_grid(e.shape)
    at = {(round(t.get_position()[0] - 0.5), round(t.get_position()[1] - 0.5)): int(t.get_text())
          for t in view.texts if t.get_gid() == "index"}
    values = np.asarray(e.indices).reshape(e.shape)
    for c, x, y in zip(coords, xs, ys, strict=True):
        for r in range(rows):
            for q in range(cols):
                assert at[(x + q, y + 1 + r)] == values[c + (r, q)]


def test_save_takes_the_options_of_figure(tmp_path):
    e = fs.explain("(3,4):(4,1)", show=False)
    with pytest.raises(LayoutError, match=r"max_cells=10.*e\.save\(path, max_cells=\.\.\.\)"):
        e.save(str(tmp_path / "small.png"), max_cells=10)
    e.save(str(tmp_path / "ok.png"), max_cells=12, dpi=40)
    assert (tmp_path / "ok.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(LayoutError, match="max_cells=10"):
        e.figure(max_cells=10)
