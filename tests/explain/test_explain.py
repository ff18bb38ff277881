"""``fs.explain``: the text report, its picture, the CLI and the notebook display.

The drawn grid is parsed back and checked against the layout's own index map (every element
marked at its storage slot, shared slots flagged); facts and plans are checked against the
modules that decide them (``overlap``, ``read_plan``, ``write_plan``); the ``view``
decomposition is checked against PyTorch's rule (``views.view``) and its suggested shapes
are checked to be views; every line fits in 100 columns.
"""

from __future__ import annotations

import io
import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import copy_kernel, examples
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import layouts, view_shapes

import functional_strides as fs
from functional_strides import Layout, LayoutError, ViewError, views
from functional_strides.__main__ import main
from functional_strides._src.explain.explain import COLUMNS, parse_layout
from functional_strides._src.native import copy_kernel as _copy_kernel

_ROW = re.compile(r"^\s*(\d+) \| (.*)$")


def _grid_cells(e: fs.Explanation) -> dict[int, str]:
    """Storage index -> the token drawn in its cell, for every drawn grid row."""
    cells = {}
    for line in e.text.splitlines():
        m = _ROW.match(line)
        if m is None or "->" in line:
            continue
        start = int(m.group(1))
        for j, token in enumerate(m.group(2).split()):
            cells[start + j] = token
        if line.startswith("coordinate"):
            break
    return cells


def _check_grid(e: fs.Explanation, lay: Layout, label: str) -> None:
    idx = lay.indices().reshape(-1)
    cells = _grid_cells(e)
    coords = list(np.ndindex(*lay.shape)) if lay.shape else [()]
    first: dict[int, int] = {}
    count: dict[int, int] = {}
    for k, i in enumerate(idx.tolist()):
        first.setdefault(i, k)
        count[i] = count.get(i, 0) + 1
    for i, token in cells.items():
        if i not in count:
            assert token in (".", "!"), (i, token, e.text)
            continue
        want = str(first[i]) if label == "order" else "(" + ",".join(map(str, coords[first[i]])) + ")"
        assert token == want + ("*" if count[i] > 1 else ""), (i, token, want, e.text)
    if "not drawn" not in e.text:  # every row holding an element is drawn, unless said
        assert set(count) <= set(cells), e.text


def _fits(e: fs.Explanation) -> None:
    for line in e.text.splitlines():
        assert len(line) <= COLUMNS, line


@examples(13)
@given(layouts(), st.sampled_from(["order", "coords"]), st.integers(0, 3))
def test_grid_marks_every_element_at_its_slot(lay, label, slack):
    e = fs.explain(lay, storage=lay.required_storage_size + slack, label=label, show=False)
    _fits(e)
    assert e.indices.tolist() == lay.indices().reshape(-1).tolist()
    cells = _grid_cells(e)
    if label == "coords" and lay.numel and not any(t.startswith("(") for t in cells.values()):
        label = "order"  # the grid may fall back to order numbers where coordinates do not fit
    _check_grid(e, lay, label)


@examples(13)
@given(layouts())
def test_facts_and_plans_agree_with_the_deciding_modules(lay):
    n = lay.required_storage_size
    text = fs.explain(lay, show=False).text
    flat = " ".join(text.split())  # undo the wrapping
    assert f"numel: {lay.numel} element" in flat
    assert f"required storage size: {n}" in flat
    assert ("contiguous (row-major, PyTorch's is_contiguous): yes" in flat) == lay.is_contiguous()
    assert (f"(a permutation of dims is contiguous): {'yes' if lay.is_non_overlapping_and_dense() else 'no'}"
            in flat)
    witness = fs.internal_overlap_witness(lay)
    if witness is None:
        assert "internal overlap: none" in flat
    else:
        m = re.search(r"coordinates \(([\d,]*)\) and \(([\d,]*)\) both address storage index (\d+)", flat)
        a, b = (tuple(int(v) for v in g.split(",") if v) for g in m.groups()[:2])
        assert a != b and lay(*a) == lay(*b) == int(m.group(3))
    assert f"read plan (fs.read_plan): {fs.read_plan(lay)}:" in flat
    for mode in ("set", "add"):
        path = fs.write_plan(lay, max(n, 1), mode=mode)
        assert re.search(rf"write plan \(fs.write_plan, mode='{mode}'\)[^:]*: {path}:", flat), flat


@examples(20)
@given(layouts(min_rank=1).flatmap(lambda lay: st.tuples(st.just(lay), view_shapes(lay.shape))))
def test_view_section_follows_pytorchs_rule(case):
    lay, shape = case
    try:
        expected = views.view(lay, shape)
    except ViewError:
        expected = None
    except LayoutError:  # an invalid shape: explain raises as view does
        with pytest.raises(LayoutError):
            fs.explain(lay, view=shape, show=False)
        return
    e = fs.explain(lay, view=shape, show=False)
    _fits(e)
    flat = " ".join(e.text.split())
    if expected is not None:
        assert f"a view, {expected} (no copy)" in flat
        return
    assert "refused, as PyTorch's view (aten computeStride) refuses it" in flat
    assert "overshoots" in flat and "x.reshape(" in flat and ".contiguous().view(" in flat
    suggested = re.search(r"always a view, e.g. x.view\(([\d, ]+)\)", flat).group(1)
    assert views.view_strides(lay.shape, lay.strides, tuple(int(v) for v in suggested.split(","))) is not None
    perm = re.search(r"x.permute\(([\d, ]+)\).view", flat)
    if perm:
        order = tuple(int(v) for v in perm.group(1).split(","))
        views.view(views.permute(lay, order), shape)  # a view indeed: does not raise


def test_refused_transpose_view_is_taken_apart():
    x = fs.from_array(jnp.arange(12.0)).view(3, 4).t()
    text = fs.explain(x, view=(3, -1), show=False).text
    assert "view(3, -1) of (4,3):(1,4)+0: new shape (3, 4): refused" in text
    assert "chunk 0: dim 0, 4 elements, stride 1" in text
    assert "chunk 1: dim 1, 3 elements, stride 4" in text
    assert "new dim 1 (4) would span" in " ".join(text.split())
    assert "dim 0 has stride 1, but continuing chunk 1 needs 3 * 4 = 12" in text
    assert "x.permute(1, 0).view(3, -1)" in text
    with pytest.raises(ViewError):  # and the library refuses it, as the report says
        x.view(3, -1)


def test_seed_picture_of_a_block_of_a_grid():
    e = fs.explain("(4,3):(20,2)+22", storage="10x10", show=False)
    lines = e.text.splitlines()
    assert lines[0] == "layout (4,3):(20,2)+22 (layout); storage of 100 elements (10 x 10)"
    assert lines[4] == "10 |     .     .     .     .     .     .     .     .     .     ."
    assert lines[5] == "20 |     .     . (0,0)     . (0,1)     . (0,2)     .     .     ."
    assert "(3,:) | 82 84 86" in lines
    assert e.width == 10 and e.storage_size == 100


def test_overlapping_expanded_empty_rank0_and_negative_strides():
    frames = fs.explain(fs.from_array(jnp.zeros(10)).unfold(0, 4, 2), show=False)
    assert "coordinates (0,2) and (1,0) both address storage index 2" in frames.text
    assert "0 |  (0,0)  (0,1) (0,2)* (0,3)* (1,2)*" in frames.text
    assert "read plan (fs.read_plan): gather:" in frames.text
    expanded = fs.explain(fs.from_array(jnp.zeros(4)).expand(3, 4), show=False)
    assert "0 | (0,0)* (0,1)* (0,2)* (0,3)*" in expanded.text
    assert "a broadcast along stride-0 dims [0]" in " ".join(expanded.text.split())
    empty = fs.explain("(0,3):(3,1)+2", storage=10, show=False)
    assert "no elements (shape (0, 3))" in empty.text and "read plan (fs.read_plan): empty:" in empty.text
    scalar = fs.explain("():()+3", show=False)
    assert "() -> 3" in scalar.text and scalar.indices.tolist() == [3]
    base = np.arange(10)
    rev = fs.explain(base[::-2], show=False)
    assert rev.text.splitlines()[0] == "layout (5,):(-2,)+9 (NumPy array); storage of 10 elements"
    assert rev.indices.tolist() == base[::-2].tolist()  # the values of arange are their indices
    assert "plans below are for (5,):(2,)+1" in rev.text
    assert fs.explain("(5,):(-2,)+9", show=False).indices.tolist() == [9, 7, 5, 3, 1]
    below = fs.explain("(3,):(-1,)+1", show=False)
    assert "addresses storage indices from -1: below 0" in below.text


def test_numpy_views_match_numpy():
    base = np.arange(24.0).reshape(4, 6)
    for view in (base[1:, ::2], base.T, base[::-1, 1:5:3], base[2], np.broadcast_to(base[0], (3, 6))):
        e = fs.explain(view, show=False)
        assert e.indices.tolist() == view.reshape(-1).astype(int).tolist()
    with pytest.raises(LayoutError, match="not whole elements"):
        fs.explain(np.lib.stride_tricks.as_strided(np.arange(8, dtype=np.int32), (3,), (6,)), show=False)


def test_strided_array_storage_and_batches():
    x = fs.from_array(jnp.arange(20.0))[2:12:3]
    e = fs.explain(x, show=False)
    assert e.text.splitlines()[:2] == ["layout (4,):(3,)+2 (StridedArray); storage of 20 elements",
                                       "dtype float32"]
    with pytest.raises(LayoutError, match="differs from the array's own storage of 20"):
        fs.explain(x, storage=30, show=False)
    assert fs.explain(x, storage="4x5", show=False).width == 5
    batch = fs.StridedArray(jnp.zeros((2, 6)), Layout((2, 3), (1, 2)), batched=True)
    assert "batch_shape (2,), one item shown" in fs.explain(batch, show=False).text


def test_read_plan_names_the_strided_copy_and_its_fallback():
    copy_kernel()
    text = " ".join(fs.explain(Layout((1024, 512), (1, 1024)), show=False).text.split())
    assert ("read plan (fs.read_plan): strided_copy: a permute of 524288 >= 16384 elements whose last dim "
            "jumps >= 16 elements and runs 512 >= 16. On CPU: one call of the compiled strided copy.") in text
    assert "tiles of 64 columns by 64 rows (32 by 32 for elements of 8 bytes or more)" in text
    assert "It stores a large permute's output past the caches where its rows are whole cache lines." in text
    assert ("On other platforms, for jax.export and under a vmap split across devices: structured. "
            "Canonical dims") in text
    frames = " ".join(fs.explain(Layout((1024, 256), (64, 1)), show=False).text.split())
    assert ("strided_copy: 262144 >= 131072 elements in overlapping windows of 256 >= 64 contiguous "
            "elements. On CPU: one call") in frames and "across devices: row_gather." in frames
    assert ("strided_copy: 262144 >= 1024 elements, mode 'add'. Overlapping windows [1024x64, 256x1]: "
            "split over the threads by runs of storage slots, each slot's elements in row-major order."
            ) in frames
    every_other = " ".join(fs.explain(Layout((512, 512), (2048, 2)), show=False).text.split())
    assert ("strided_copy: every other element, 65536 <= 262144 <= 1048576 elements (last dim of "
            "stride 2). On CPU: one call") in every_other and "across devices: structured." in every_other


def _unwrapped(text: str) -> str:
    return " ".join(text.split())


@examples(13)
@given(layouts())
def test_explain_prints_the_plans_own_reasons(lay):
    """The plans section is the plans' own reasons (``fs.Plan.reasons``), in order, the first
    on the plan's line: explain derives nothing of its own."""
    assume(all(s >= 0 for s in lay.strides))  # negative strides are planned for the flipped view
    n = lay.required_storage_size
    flat = _unwrapped(fs.explain(lay, show=False).section("plans"))
    plans = [("read plan (fs.read_plan)", fs.read_plan(lay))]
    plans += [(f"write plan (fs.write_plan, mode={mode!r})", fs.write_plan(lay, max(n, 1), mode=mode))
              for mode in ("set", "add")]
    for name, plan in plans:
        assert isinstance(plan, fs.Plan) and isinstance(plan, str) and plan.reasons, (name, plan)
        first, *rest = plan.reasons
        if not (len(first.split()[0]) > 1 and first.split()[0].isupper()):
            first = first[0].lower() + first[1:]
        assert f"{name}" in flat and f": {plan}: {' '.join([first, *rest])}" in flat, (name, plan, flat)


def test_plans_carry_their_reasons():
    """``read_plan``/``write_plan`` answer a ``fs.Plan``: the path's name as a ``str`` (equal,
    hashed and pickled as it) and the reasons of the rule that chose it: a path asked for by
    ``method=`` says so first, a fold through stride-0 dims says so first, and the strided
    copy's reasons end with those of the XLA path it falls back to."""
    import pickle

    lay = Layout((3, 3), (2, 3))
    plan = fs.read_plan(lay)
    assert plan == "gather" and {plan: 1}["gather"] == 1 and pickle.loads(pickle.dumps(plan)) == "gather"
    assert plan.reasons[0].startswith("Canonical dims [3x3, 3x2]")
    assert plan.reasons[1] == "They form no strided box."
    assert plan.reasons is plan.reasons  # worked out once
    forced = fs.read_plan(Layout((4, 4), (1, 4)), method="gather")
    assert forced == "gather" and forced.reasons[0] == "Asked for with method='gather'."
    x = fs.from_array(jnp.zeros(64)).view(8, 8).t()
    assert fs.read_plan(x) == fs.read_plan(x.layout)  # a StridedArray or its layout alike
    fold = fs.write_plan(Layout((4, 1024), (0, 1)), 1024, mode="add")
    assert fold.reasons[0].startswith("The stride-0 dims' contributions are folded into the stored values")
    assert fs.write_plan(Layout((4, 1024), (0, 1)), 1024, mode="set").reasons[0] != fold.reasons[0]
    copy_kernel()
    big = fs.read_plan(Layout((1024, 512), (1, 1024)))
    xla = fs.read_plan(Layout((1024, 512), (1, 1024)), method="structured")
    assert big == "strided_copy" and big.reasons[-len(xla.reasons) + 1:] == xla.reasons[1:]


def _logical_lines(section: str) -> list[str]:
    """The lines of the plans with their wrapped continuations joined (facts are indented by
    2, continuations by 4)."""
    out: list[str] = []
    for line in section.splitlines():
        depth = len(line) - len(line.lstrip())
        if out and depth >= 4:
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


@pytest.mark.parametrize("layout", ["(1024,512):(1,1024)", "(1024,256):(64,1)", "(512,512):(2048,2)",
                                    "(5,):(-2,)+9", "(4,3):(20,2)+22", "(3,4):(0,1)", "(0,3):(3,1)"])
def test_plans_say_one_fact_a_sentence(layout):
    copy_kernel()
    plans = _logical_lines(fs.explain(layout, show=False).section("plans"))
    for line in plans:
        assert line.endswith("."), line
        body = line.strip()
        if not line.startswith(" "):  # "read plan (...): path: the first fact."
            body = body.split(": ", 2)[-1] if "plan" in body.split(":")[0] else body
        sentences = [s for s in re.split(r"(?<=[.)])\s+(?=[A-Z])", body) if s]
        assert len(sentences) == 1, (layout, line)


def test_large_layouts_stay_within_limits():
    x = fs.from_array(jnp.zeros(10000)).unfold(0, 64, 32)[::7]
    e = fs.explain(x, show=False)
    _fits(e)
    assert len(e.text.splitlines()) < 100
    assert "rows not drawn" in e.text
    big = fs.explain(Layout((1 << 12, 1 << 12), (1, 1 << 12)), show=False)
    read = "strided_copy" if _copy_kernel.native is not None else "structured"
    assert "grid and table left out" in big.text and f"read plan (fs.read_plan): {read}" in big.text
    assert big.indices.size == 0  # no per-element arrays for layouts that are not drawn
    _fits(big)
    traced = Layout((2,), (1,), jax.ShapeDtypeStruct((), jnp.int32))
    assert traced._repr_html_() is None  # a plain repr shows instead


def test_wide_ranks_fall_back_to_order_numbers():
    lay = Layout((2, 2, 2, 2, 2, 2), (64, 32, 16, 8, 4, 2))
    e = fs.explain(lay, show=False)
    _fits(e)
    _check_grid(e, lay, "order")
    assert "rows of 8 elements" in e.text  # the smallest pitch drawing at most 24 rows


class _CuteStandIn:
    """The duck type ``explain`` accepts for CuTe layouts: nested ``shape``/``stride``,
    ``size()``, ``cosize()``, and ``layout(i)`` with the first mode fastest."""

    def __init__(self, shape, stride):
        self.shape, self.stride = shape, stride

    @staticmethod
    def _flat(t):
        return tuple(v for p in t for v in _CuteStandIn._flat(p)) if isinstance(t, tuple) else (t,)

    def size(self):
        return math.prod(self._flat(self.shape))

    def cosize(self):
        return max(self(i) for i in range(self.size())) + 1

    def __call__(self, i):
        out = 0
        for n, s in zip(self._flat(self.shape), self._flat(self.stride), strict=True):
            out, i = out + (i % n) * s, i // n
        return out


@pytest.mark.parametrize("shape,stride", [((4, 2), (1, 4)), ((4, 2), (2, 1)), (((2, 2), 3), ((1, 6), 2)),
                                          ((3, (2, 2)), (4, (1, 12))), ((2, 3), (0, 1)), (8, 2)],
                         ids=["compact", "row-major", "nested", "nested-2", "broadcast", "rank1"])
def test_cute_layouts_by_duck_type(shape, stride):
    layout = _CuteStandIn(shape, stride)
    e = fs.explain(layout, show=False)
    _fits(e)
    assert e.indices.tolist() == [layout(i) for i in range(layout.size())]  # column-major order
    assert "column-major (CuTe: the first mode is fastest)" in e.text
    cells = _grid_cells(e)
    for k, i in enumerate(e.indices.tolist()):
        assert cells[i].rstrip("*") in (str(k), "(" + ",".join(map(str, e.coords[k])) + ")") or \
            e.indices.tolist().index(i) < k


def test_cute_compactness_and_table():
    e = fs.explain(_CuteStandIn((4, 2), (1, 4)), show=False)
    assert "compact (column-major, CuTe's default): yes" in e.text
    assert "(1,...) | 1 5" in e.text  # CuTe's print_layout: mode 0 down, mode 1 across
    row = fs.explain(_CuteStandIn((4, 2), (2, 1)), show=False)
    assert "compact (column-major, CuTe's default): no (the compact layout is (4,2):(1,4)+0)" in row.text


def test_cute_module_layouts():
    cute = pytest.importorskip("functional_strides.cute",
                               reason="functional_strides.cute is not part of this checkout")
    layout = cute.Layout(((2, 2), 3), ((1, 6), 2))
    e = fs.explain(layout, show=False)
    assert e.indices.tolist() == [layout(i) for i in range(layout.size())]


def test_errors_name_the_problem():
    with pytest.raises(LayoutError, match=r"cannot read layout '\(4,3\):\(20,2'"):
        fs.explain("(4,3):(20,2", show=False)
    with pytest.raises(LayoutError, match="2 extents but 1 strides"):
        parse_layout("(2,3):(1,)")
    with pytest.raises(LayoutError, match="cannot explain an object of type dict"):
        fs.explain({}, show=False)
    with pytest.raises(LayoutError, match="must be 2-D"):
        fs.explain("(2,):(1,)", storage=(2, 2, 2), show=False)
    with pytest.raises(LayoutError, match="label must be"):
        fs.explain("(2,):(1,)", label="colour", show=False)
    with pytest.raises(LayoutError, match="is invalid for input of size 6"):
        fs.explain("(2,3):(3,1)", view=(4, -1), show=False)

    @jax.jit
    def traced(storage, offset):
        fs.explain(fs.StridedArray(storage, Layout((2,), (1,), offset)), show=False)
        return storage

    with pytest.raises(LayoutError, match="offset of layout .* is traced"):
        traced(jnp.zeros(4), 1)


def test_sections():
    e = fs.explain("(2,2):(1,2)", view=(4,), show=False)
    assert [name for name, _ in e.parts] == ["title", "grid", "table", "facts", "plans", "view"]
    assert "\n\n".join(e.section(name) for name, _ in e.parts) == e.text
    assert e.section("view").startswith("view(4,) of (2,2):(1,2)+0: new shape (4,): refused")
    with pytest.raises(LayoutError, match="no section 'views'"):
        e.section("views")


def test_printing_plain_and_coloured():
    buf = io.StringIO()
    e = fs.explain("(2,2):(1,2)", show=False)
    e.print(file=buf)
    assert buf.getvalue() == e.text + "\n" and "\x1b[" not in buf.getvalue()
    pytest.importorskip("rich", reason="rich (optional) is not installed")
    buf = io.StringIO()
    e.print(file=buf, color=True)
    assert "\x1b[" in buf.getvalue()
    assert re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue()).splitlines() == e.text.splitlines()


def test_repr_html_highlights_the_view():
    lay = Layout((2, 2), (1, 2), 1)
    out = lay._repr_html_()
    assert out.startswith("<pre") and out.endswith("</pre>")
    assert re.sub(r"<[^>]+>", "", out).replace("&gt;", ">").replace("&#x27;", "'").splitlines() == \
        fs.explain(lay, show=False).text.splitlines()
    assert '<span style="color:#0a6;font-weight:bold">(1,0) </span>' in out
    x = fs.from_array(jnp.arange(4.0)).expand(2, 4)
    assert "color:#c22" in x._repr_html_()  # shared slots


def test_figure_draws_both_panels(tmp_path):
    pytest.importorskip("matplotlib")
    e = fs.explain(fs.from_array(jnp.zeros(10)).unfold(0, 4, 2), show=False)
    fig = e.figure()
    storage, view = fig.axes
    texts = [t.get_text() for t in storage.texts]
    assert texts[:2] == ["0", "1"] and "2\n×2" in texts
    assert sorted(int(t.get_text()) for t in view.texts) == sorted(e.indices.tolist())
    e.save(str(tmp_path / "f.svg"))
    assert (tmp_path / "f.svg").read_text().lstrip().startswith("<?xml")
    with pytest.raises(LayoutError, match="max_cells"):
        fs.explain(Layout((100, 100), (100, 1)), show=False).figure(max_cells=100)


def test_cli_explain(capsys, tmp_path):
    png, svg = tmp_path / "v.png", tmp_path / "v.svg"
    rc = main(["explain", "(4,3):(20,2)+22", "--storage", "10x10", "--png", str(png), "--svg", str(svg),
               "--view", "3,-1", "--color", "never"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.splitlines()[0] == "layout (4,3):(20,2)+22 (layout); storage of 100 elements (10 x 10)"
    assert "refused, as PyTorch's view" in out and f"wrote {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and svg.stat().st_size > 1000
    assert all(len(line) <= COLUMNS for line in out.splitlines())
    assert main(["explain", "(4,3):(20,2"]) == 2
    assert "cannot read layout" in capsys.readouterr().err
    assert main(["explain", "8:-1+7", "--label", "order"]) == 0
    assert "0 | 7 6 5 4 3 2 1 0" in capsys.readouterr().out


@pytest.mark.parametrize("layout,storage,expect", [
    ("(0,3):(3,1)+2", "10", "no elements (shape (0, 3))"),
    ("(4,4):(2,1)", None, "coordinates (0,2) and (1,0) both address storage index 2"),
    ("(3,4):(0,1)", "2x2", "coordinates (0,0) and (1,0) both address storage index 0"),
    ("(4,):(-3,)+9", "12", "negative strides on dims [0]"),
    ("(2,3):(3,1)+4", "8", "too small by 2"),
    ("():()+5", None, "() -> 5"),
], ids=["empty", "overlapping", "expanded", "negative", "too-small", "rank0"])
def test_cli_every_layout_kind(capsys, layout, storage, expect):
    argv = ["explain", layout] + (["--storage", storage] if storage else [])
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"layout {layout} (layout); storage")
    assert expect in " ".join(out.split()) or expect in out
    assert all(len(line) <= COLUMNS for line in out.splitlines())


@examples(10)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 7)), min_size=1, max_size=3), st.booleans())
def test_cute_stand_ins_agree_with_their_own_index_map(modes, nest):
    shape, stride = tuple(n for n, _ in modes), tuple(s for _, s in modes)
    if nest and len(modes) >= 2:  # fold the first two modes into one nested mode
        shape, stride = ((shape[0], shape[1]), *shape[2:]), ((stride[0], stride[1]), *stride[2:])
    layout = _CuteStandIn(shape, stride)
    e = fs.explain(layout, show=False)
    _fits(e)
    assert e.indices.tolist() == [layout(i) for i in range(layout.size())]
    flat = " ".join(e.text.split())
    assert f"required storage size: {layout.cosize()}" in flat
    cells = _grid_cells(e)
    first = {}
    for k, i in enumerate(e.indices.tolist()):
        first.setdefault(i, k)
    for i, k in first.items():
        if i in cells:
            assert cells[i].rstrip("*") in (str(k), "(" + ",".join(map(str, e.coords[k])) + ")")


def test_read_plan_names_the_tile_loop_and_the_gather_of_few_far_rows():
    """Among the XLA strategies (all of the plan off CPU; after the strided copy's reason on
    CPU where it is built): a large transpose over whole rows of the storage is read as a tile
    loop; a permute of 32 rows 2^17 elements apart (NCDHW->NDHWC) as one gather over the
    user's dims; a box that must be sliced out of the storage first keeps XLA's transpose."""
    def said(layout, n):
        return " ".join(fs.explain(layout, storage=n, show=False).text.split())

    built = _copy_kernel.native is not None
    tiles = said(Layout((4096, 4096), (1, 4096), 0), 4096 * 4096)
    assert "as a loop over tiles (16 x 1024 for a 4-byte dtype) of a batch of 1 (4096, 4096)" in tiles
    ncdhw = said(Layout((2, 32, 64, 64, 32), (4194304, 4096, 64, 1, 131072), 0), 2**23)
    reason = ("On other platforms, for jax.export and under a vmap split across devices: gather." if built
              else "read plan (fs.read_plan): gather:")
    assert reason in ncdhw
    assert "Its permute moves 32 rows, 131072 elements apart, to the innermost dim" in ncdhw
    sliced = said(Layout((500, 1500), (1, 2048), 7), 2**22 + 3)
    assert "Then a transpose back to your order of dims. write plan" in sliced
