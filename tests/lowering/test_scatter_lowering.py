"""Tests of the write paths of functional_strides._src.lowering.writes: every path against the oracle for
every mode it supports, the HLO each compiles to, the rule ``"auto"`` follows, eager use
(one compile per shape), transforms (jit, vmap, grad), dtypes, identities, errors and
sharded batches."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import textwrap

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import copy_kernel
from hypothesis import given
from hypothesis import strategies as st
from jax.test_util import check_grads
from strategies import sliced_permuted_expanded

from functional_strides import oracle
from functional_strides._src.core.errors import LayoutError, StorageError
from functional_strides._src.core.layout import Layout
from functional_strides._src.lowering import writes as scatter
from functional_strides._src.lowering.writes import (
    METHODS,
    MODES,
    lower_impl,
    write,
    write_plan,
    xla_write_plan,
)

PATHS = METHODS[1:]  # every forced path
XLA_PATHS = tuple(m for m in PATHS if m != "strided_copy")  # those made of XLA ops (any platform)
BUILT = scatter._copy_kernel.native is not None


def _forced(method: str) -> str:
    """``method``, after skipping (or, where the extension is required, failing) a test of
    the strided write when its extension is not built."""
    if method == "strided_copy":
        copy_kernel()
    return method
_SCATTER_OP = re.compile(r'"stablehlo\.scatter"\(')  # a scatter op (not its attributes)


def applicable(layout: Layout, n: int, mode: str) -> list[str]:
    """Forced paths that apply (``plan`` raises LayoutError for the others)."""
    out = []
    for method in XLA_PATHS:
        try:
            write_plan(layout, n, mode=mode, method=method)
        except LayoutError:
            continue
        out.append(method)
    return out


def _storage(n: int, dtype=np.float32) -> np.ndarray:
    shift = 0 if np.dtype(dtype).kind in "ub" else 6  # no wrap-around for unsigned dtypes
    return ((np.arange(n) * 7) % 13 - shift).astype(dtype)


def _src(layout: Layout, mode: str, dtype=np.float32) -> np.ndarray:
    """Small values whose sums and products stay exact in every dtype tested."""
    k = np.arange(layout.numel).reshape(layout.shape)
    if mode == "mul":
        return (1.0 + (k % 3) * 0.5 if np.dtype(dtype).kind in "fc" else 1 + k % 2).astype(dtype)
    return ((k * 5) % 11 - (0 if np.dtype(dtype).kind in "ub" else 5)).astype(dtype)


def write_all(storage, layout: Layout, srcs: dict, combos) -> list[jax.Array]:
    """Every (mode, method) in ``combos`` inside one jit (one compile per layout)."""
    def run(s, vs):
        return [write(s, layout, vs[mode], mode=mode, overlap="last", method=method)
                for mode, method in combos]
    return jax.jit(run)(jnp.asarray(storage), {m: jnp.asarray(v) for m, v in srcs.items()})


def check_paths(layout: Layout, n: int, modes, dtype=np.float32) -> list[tuple[str, str]]:
    storage = _storage(n, dtype)
    srcs = {mode: _src(layout, mode, dtype) for mode in modes}
    combos = [(mode, method) for mode in modes for method in applicable(layout, n, mode)]
    for (mode, method), got in zip(combos, write_all(storage, layout, srcs, combos), strict=True):
        expected = oracle.scatter(storage, layout, srcs[mode], mode)
        assert got.dtype == storage.dtype and got.shape == storage.shape
        np.testing.assert_array_equal(np.asarray(got), expected,
                                      err_msg=f"{mode} by {method} through {layout}")
    return combos


@st.composite
def layouts(draw, max_rank=4, max_extent=4, max_stride=9):
    shape = tuple(draw(st.lists(st.integers(0, max_extent), max_size=max_rank)))
    strides = tuple(draw(st.integers(0, max_stride)) for _ in shape)
    return Layout(shape, strides, draw(st.integers(0, 5)))


# -- values: every path equals the oracle ----------------------------------------------------

@given(layout=layouts(), slack=st.integers(0, 3), mode=st.sampled_from(MODES))
def test_every_path_matches_the_oracle(layout, slack, mode):
    n = layout.required_storage_size + slack
    combos = check_paths(layout, max(n, 1), [mode])
    assert layout.is_empty or ("scatter" in [m for _, m in combos])


# (layout, storage size, paths that apply for "add", for "set")
CHOSEN = [
    (Layout((3, 4), (5, 1), 1), 20, ("block", "structured", "row_scatter", "scatter"),
     ("block", "structured", "row_scatter", "scatter")),  # x[:, 1:] of a 4x5 matrix: every path
    (Layout((2, 3), (1, 4)), 12, ("block", "structured", "row_scatter", "scatter"),
     ("block", "structured", "row_scatter", "scatter")),  # a transpose: rows of 2
    (Layout((3, 2), (6, 2)), 18, ("block", "structured", "scatter"),
     ("block", "structured", "scatter")),  # x[:, :4:2]: no dense rows (a row would span gaps)
    (Layout((3, 2, 4), (0, 8, 1), 1), 17, ("structured", "row_scatter", "scatter"),
     ("structured", "row_scatter", "scatter")),  # expanded rows, no grid of 17
    (Layout((5, 4), (2, 1)), 12, ("row_scatter", "scatter"), ("scatter",)),  # windows
    (Layout((3, 3, 2, 2), (4, 1, 4, 1)), 16, ("row_scatter", "scatter"), ("scatter",)),  # patches
    (Layout((4,), (5,), 1), 20, ("block", "structured", "scatter"), ("block", "structured", "scatter")),
    (Layout((4,), (6,)), 20, ("structured", "scatter"), ("structured", "scatter")),  # diagonal-like
    (Layout((2, 3), (0, 0), 3), 5, ("block", "structured", "scatter"), ("block", "structured", "scatter")),
]


@pytest.mark.sampled(3)
@pytest.mark.parametrize(("layout", "size", "add_paths", "set_paths"), CHOSEN,
                         ids=["rows", "transpose", "strided-rows", "expanded-rows", "windows", "patches",
                              "column", "diagonal", "one-slot"])
def test_every_path_and_mode_on_chosen_layouts(layout, size, add_paths, set_paths):
    assert tuple(applicable(layout, size, "add")) == add_paths
    assert tuple(applicable(layout, size, "set")) == set_paths
    for mode in ("mul", "min", "max"):
        assert tuple(applicable(layout, size, mode)) == add_paths
    combos = check_paths(layout, size, MODES)
    assert {m for _, m in combos} == set(add_paths)


# -- HLO: structured paths emit no scatter, the others exactly one ---------------------------

def scatter_count(layout: Layout, storage, mode: str, method: str = "auto") -> int:
    text = jax.jit(lambda s, v: write(s, layout, v, mode=mode, overlap="last", method=method)).lower(
        storage, jax.ShapeDtypeStruct(layout.shape, storage.dtype)).as_text()
    assert "stablehlo.gather" not in text
    return len(_SCATTER_OP.findall(text))


@given(case=sliced_permuted_expanded(), mode=st.sampled_from(["set", "add"]))
def test_composed_views_hlo_and_values(case, mode):
    layout, size = case
    path = xla_write_plan(layout, size, mode)
    if path != "empty":
        storage = jax.ShapeDtypeStruct((size,), jnp.float32)
        expected = 0 if path in ("block", "structured", "permutation") else 1
        assert scatter_count(layout, storage, mode, path) == expected, path
    storage, src = _storage(size), _src(layout, mode)
    methods = ["auto"] + (["structured"] if "structured" in applicable(layout, size, mode) else [])
    for method, got in zip(methods, write_all(storage, layout, {mode: src}, [(mode, m) for m in methods]),
                           strict=True):
        np.testing.assert_array_equal(np.asarray(got), oracle.scatter(storage, layout, src, mode),
                                      err_msg=method)


BIG = 4096 * 4096


@pytest.mark.parametrize(
    ("layout", "size", "mode", "path"),
    [
        (Layout((4096,), (4096,), 7), BIG, "set", "scatter"),  # a column: a tiny part of the storage
        (Layout((2048, 2048), (8192, 2)), BIG, "set", "structured"),  # x[::2, ::2]
        (Layout((4096, 4096), (1, 4096)), BIG, "set", "permutation"),  # x.t() = v: the values transposed
        (Layout((16, 16, 1024, 64), (2**20, 64, 1024, 1)), BIG, "add", "structured"),  # attention heads
        (Layout((16381, 1024), (256, 1)), 2**22, "add", "row_scatter"),  # overlap-add of frames
        (Layout((4096, 4096), (0, 1)), 4096, "add", "block"),  # a row expanded to 4096^2
        (Layout((3072, 4096), (4096, 1), 2**21), BIG, "set", "block"),  # contiguous rows
        (Layout((4094, 4094), (4097, 1), 4098), 4096 * 4097, "set", "row_scatter"),  # x[1:-1, 1:-1]
        (Layout((2048, 2048), (1, 4096)), BIG, "add", "row_scatter"),  # a transposed quarter block
        (Layout((4096,), (4097,)), BIG, "set", "scatter"),  # the diagonal
        (Layout((2048, 2048), (8190, 2)), 4095 * 4095, "set", "scatter"),  # x[::2, ::2], no grid
        (Layout((1022, 1022, 3, 3), (1024, 1, 1024, 1)), 2**20, "add", "scatter"),  # 3x3 patches
        # rows half gaps: no dense rows (a row update would cover the gaps); a quarter of the grid
        (Layout((4096, 1024), (4096, 2)), BIG, "add", "structured"),
        (Layout((4096, 256), (4096, 8)), BIG, "add", "scatter"),  # rows 1/8 dense
        (Layout((32, 64), (2, 64)), 4096, "set", "scatter"),  # small: x.t()[::2] of 64x64
        (Layout((128, 128), (512, 2)), 2**16, "set", "scatter"),  # small: x[::2, ::2] of 256x256
    ],
    ids=["column", "every-other", "transpose", "heads-add", "overlap-add", "row-expanded-add",
         "contiguous-rows", "inner-block", "transposed-quarter-add", "diagonal", "every-other-no-grid",
         "patches-add", "half-dense-rows", "sparse-rows", "small-transposed-rows", "small-every-other"],
)
def test_auto_rule_on_measured_cases(layout, size, mode, path):
    """The XLA strategies' choice (all of the plan off CPU); on CPU the strided write takes
    every one of these where it is built, but one contiguous run, a set that permutes the whole
    storage and views whose elements share slots other than overlapping windows (the overlap-add)."""
    assert xla_write_plan(layout, size, mode) == path
    storage = jax.ShapeDtypeStruct((size,), jnp.float32)
    assert scatter_count(layout, storage, mode, path) == (0 if path in ("block", "structured", "permutation")
                                                          else 1)
    windows = len(layout.shape) == 2 and layout.strides[1] == 1 and 0 < layout.strides[0] < layout.shape[1]
    copy = BUILT and path not in ("block", "permutation") and (
        windows or not scatter._overlap.has_internal_overlap(layout))
    assert write_plan(layout, size, mode=mode) == ("strided_copy" if copy else path)


@pytest.mark.parametrize(("layout", "size", "op", "auto"), [
    # all of the storage: a transpose ("auto" reads the values back through the inverse view)
    (Layout((512, 512), (1, 512)), 512 * 512, "transpose(", "permutation"),
    (Layout((512, 512), (2048, 2)), 1024 * 1024, "select(", "structured"),  # x[::2, ::2]: keep the rest
], ids=["transpose", "every-other"])
def test_structured_write_compiles_without_scatter_or_gather(layout, size, op, auto):
    assert xla_write_plan(layout, size) == auto
    compiled = jax.jit(lambda s, v: write(s, layout, v, method="structured")).lower(
        jax.ShapeDtypeStruct((size,), jnp.float32), jax.ShapeDtypeStruct(layout.shape, jnp.float32)).compile()
    hlo = compiled.as_text()
    assert not re.search(r"= \S+ (scatter|gather)\(", hlo), hlo
    assert op in hlo


def test_block_write_is_a_dynamic_update_slice():
    layout = Layout((3072, 64), (64, 1), 64)
    text = jax.jit(lambda s, v: write(s, layout, v, mode="add")).lower(
        jax.ShapeDtypeStruct((4096 * 64,), jnp.float32),
        jax.ShapeDtypeStruct(layout.shape, jnp.float32)).as_text()
    assert "stablehlo.dynamic_update_slice" in text and not _SCATTER_OP.search(text)


# -- eager use: one compile per shape, not per layout ---------------------------------------

def test_eager_writes_compile_once_per_shape():
    storage = jnp.asarray(_storage(300))
    src = jnp.asarray(_src(Layout((8, 8), (1, 1)), "add"))
    strided = [Layout((8, 8), (a, b), off) for a in range(9, 14) for b in range(1, 6) for off in (0, 3)]
    strided = [lay for lay in strided if not oracle.has_internal_overlap(lay)]  # one kernel: unique indices
    assert len(strided) >= 20
    contiguous = [Layout((8, 8), (8, 1), off) for off in range(0, 200, 17)]
    write(storage, strided[0], src, mode="add")  # compile the (8, 8) kernels once
    write(storage, contiguous[0], src, mode="add")
    before = (scatter._eager_write._cache_size(), scatter._eager_update._cache_size())
    for lay in strided + contiguous:
        got = write(storage, lay, src, mode="add")
        expected = oracle.scatter(np.asarray(storage), lay, np.asarray(src), "add")
        np.testing.assert_array_equal(np.asarray(got), expected)
    assert (scatter._eager_write._cache_size(), scatter._eager_update._cache_size()) == before
    # a forced path compiles for its layout
    jit_before = scatter._jit_write._cache_size()
    for lay in strided[:3]:
        write(storage, lay, src, mode="add", method="scatter")
    assert scatter._jit_write._cache_size() == jit_before + 3


@pytest.mark.parametrize("mode", MODES)
def test_eager_contiguous_writes_match_the_oracle(mode):
    storage = _storage(40)
    for layout in (Layout((3, 4), (4, 1), 5), Layout((7,), (1,), 33), Layout((2, 1, 3), (3, 9, 1))):
        src = _src(layout, mode)
        got = write(jnp.asarray(storage), layout, jnp.asarray(src), mode=mode)
        np.testing.assert_array_equal(np.asarray(got), oracle.scatter(storage, layout, src, mode))


# -- transforms -------------------------------------------------------------------------------

# (path, mode) -> a layout over 16 elements that path applies to, overlapping where it can
TRANSFORM_CASES = {
    ("block", "set"): Layout((2, 2, 3), (0, 4, 1), 1),  # expanded rows of a 4x4 grid
    ("block", "add"): Layout((2, 2, 3), (0, 4, 1), 1),
    ("structured", "set"): Layout((3, 4), (0, 2), 1),  # expanded, strided
    ("structured", "add"): Layout((3, 4), (0, 2), 1),
    ("row_scatter", "set"): Layout((3, 4), (5, 1), 1),  # disjoint dense rows
    ("row_scatter", "add"): Layout((5, 4), (2, 1)),  # overlapping windows
    ("scatter", "set"): Layout((5, 4), (2, 1)),  # overlapping windows: the last wins
    ("scatter", "add"): Layout((5, 4), (2, 1)),
    ("strided_copy", "set"): Layout((5, 4), (2, 1)),  # one thread, row-major: the last wins
    ("strided_copy", "add"): Layout((3, 4), (1, 4), 1),  # a transpose
}
CASE_IDS = [f"{p}-{m}" for p, m in TRANSFORM_CASES]


@pytest.mark.parametrize(("path", "mode"), list(TRANSFORM_CASES), ids=CASE_IDS)
def test_jit_does_not_retrace_for_equal_layouts(path, mode):
    # The layout is a static argument here (hashable), so the forced path is planned for its
    # offset; a layout passed as a pytree argument has a traced offset instead (see
    # tests/test_dynamic_offsets.py).
    layout = TRANSFORM_CASES[_forced(path), mode]
    assert write_plan(layout, 16, mode=mode, method=path) == path
    chex.clear_trace_counter()  # the counter is keyed on the function's code, shared by parameters

    @functools.partial(jax.jit, static_argnums=2)
    @chex.assert_max_traces(n=1)
    def f(storage, values, lay):
        return write(storage, lay, values, mode=mode, overlap="last", method=path)

    src = jnp.asarray(_src(layout, mode))
    for k in range(3):
        storage = _storage(16) + k
        got = f(jnp.asarray(storage), src + k, Layout(layout.shape, layout.strides, layout.offset))
        expected = oracle.scatter(storage, layout, np.asarray(src) + k, mode)
        np.testing.assert_array_equal(np.asarray(got), expected)
    with pytest.raises(AssertionError, match="traced > 1"):
        f(jnp.asarray(_storage(16)), src, Layout(layout.shape, layout.strides, layout.offset + 1))
    chex.clear_trace_counter()


@pytest.mark.sampled(3)
@pytest.mark.parametrize(("path", "mode"), list(TRANSFORM_CASES), ids=CASE_IDS)
def test_vmap_over_storages_and_sources(path, mode):
    layout = TRANSFORM_CASES[_forced(path), mode]
    storages = np.stack([_storage(16) + k for k in range(3)])
    srcs = np.stack([_src(layout, mode) * (k + 1) for k in range(3)])
    got = jax.vmap(lambda s, v: write(s, layout, v, mode=mode, overlap="last", method=path))(
        jnp.asarray(storages), jnp.asarray(srcs))
    expected = np.stack([oracle.scatter(s, layout, v, mode) for s, v in zip(storages, srcs, strict=True)])
    np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.sampled(2)
@pytest.mark.parametrize("path", sorted({p for p, _ in TRANSFORM_CASES}))
def test_grads_through_every_path(path):
    """``set`` and ``add`` through the path, both in one program: derivatives to second order
    against finite differences, and d(sum)/d(src) counting the elements that land."""
    layouts = {mode: TRANSFORM_CASES[_forced(path), mode] for mode in ("set", "add")}

    def f(storage, values):
        return [jnp.sin(write(storage, layouts[mode], values[mode], mode=mode, overlap="last", method=path))
                * jnp.linspace(0.1, 1.0, 16) for mode in layouts]

    with jax.enable_x64(True):  # float64 keeps the finite differences of check_grads accurate
        storage = jnp.linspace(-1.0, 1.0, 16)
        values = {mode: jnp.linspace(0.5, 1.5, lay.numel).reshape(lay.shape) for mode, lay in layouts.items()}
        check_grads(jax.jit(f), (storage, values), order=2, modes=("fwd", "rev"))
        # d(sum)/d(src) is 1 for each element that lands in the storage: every one for "add",
        # the last writer of each slot for "set"
        for mode, layout in layouts.items():
            g = jax.grad(lambda v, mode=mode, layout=layout: write(
                storage, layout, v, mode=mode, overlap="last", method=path).sum())(values[mode])
            positions = np.arange(1.0, layout.numel + 1).reshape(layout.shape)
            won = oracle.scatter(np.zeros(16), layout, positions, "set")[layout.indices()] == positions
            np.testing.assert_array_equal(np.asarray(g), np.ones(layout.shape) if mode == "add" else won)


# -- dtypes and identities ------------------------------------------------------------------

DTYPES = [jnp.bool_, jnp.int8, jnp.int32, jnp.uint8, jnp.float16, jnp.bfloat16, jnp.float32, jnp.complex64]


@pytest.mark.sampled(3)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: jnp.dtype(d).name)
def test_every_path_for_every_dtype(dtype):
    dtype = jnp.dtype(dtype)
    modes = ("set", "add", "mul") if dtype.kind == "c" else MODES  # bool: add is "or", mul "and"
    for layout, size in ((Layout((3, 4), (5, 1), 1), 20), (Layout((5, 4), (2, 1)), 12),
                         (Layout((2, 3, 2), (0, 7, 2), 1), 18)):
        check_paths(layout, size, modes, dtype)


ROW_GAP_LAYOUTS = [
    Layout((2, 2, 3), (12, 4, 1)),  # rows of 3 slots, pitch 4: slots 3, 7, 11, ... are gaps
    Layout((3, 2, 3), (4, 4, 1)),  # overlapping windows of two such rows each
]


@pytest.mark.parametrize("layout", ROW_GAP_LAYOUTS, ids=["block", "windows"])
@pytest.mark.parametrize("mode", ["add", "mul", "min", "max"])
def test_row_gaps_keep_their_values_bit_for_bit(mode, layout):
    size = layout.required_storage_size + 2
    specials = np.array([np.nan, -0.0, np.inf, -np.inf], np.float32)
    storage = np.resize(specials, size).copy()
    bits = storage.view(np.uint32)
    bits[::4] = 0x7FC0_1234  # NaNs with a payload, which an identity combine may canonicalise
    gaps = np.setdiff1d(np.arange(size), layout.indices().reshape(-1))
    assert gaps.size
    src = np.full(layout.shape, 2.0, np.float32)
    got = np.asarray(write(jnp.asarray(storage), layout, jnp.asarray(src), mode=mode, method="row_scatter"))
    np.testing.assert_array_equal(got.view(np.uint32)[gaps], bits[gaps])
    np.testing.assert_array_equal(got, oracle.scatter(storage, layout, src, mode))


@pytest.mark.parametrize("layout", ROW_GAP_LAYOUTS, ids=["block", "windows"])
@pytest.mark.parametrize("mode", ["add", "min", "max", "set"])
def test_row_scatter_updates_cover_only_the_views_slots(mode, layout):
    """By construction: every row update is one dense row of the view (3 slots here), so the
    slots between rows are never written, on any backend."""
    size = layout.required_storage_size + 2
    if mode == "set" and layout.has_internal_overlap():
        return
    overlapping = layout.has_internal_overlap()
    jaxpr = jax.make_jaxpr(lambda s, v: lower_impl(s, layout, v, mode=mode, overlapping=overlapping,
                                                   method="row_scatter", op="write", kernel=False))(
        jnp.zeros(size), jnp.zeros(layout.shape))  # the XLA plan the primitive lowers to
    scatters = [e for e in jaxpr.jaxpr.eqns if e.primitive.name.startswith("scatter")]
    assert scatters
    for eqn in scatters:
        window = eqn.params["dimension_numbers"].update_window_dims
        updates = eqn.invars[2].aval.shape
        assert tuple(updates[d] for d in window) == (3,), (eqn.primitive.name, updates, window)


# -- traced offsets and errors --------------------------------------------------------------

def test_unknown_method_and_mode_are_refused():
    with pytest.raises(LayoutError, match=r"add: unknown method 'fast'; use one of \('auto', 'block'"):
        write(jnp.zeros(4), Layout((2,), (1,)), 1.0, mode="add", op="add", method="fast")
    with pytest.raises(LayoutError, match="unknown mode"):
        write_plan(Layout((2,), (1,)), 4, mode="div")


@pytest.mark.parametrize(
    ("layout", "size", "mode", "method"),
    [(Layout((4,), (6,)), 20, "set", "block"),  # 6 does not divide 20
     (Layout((5, 4), (2, 1)), 12, "add", "structured"),  # windows are no box
     (Layout((3, 2), (6, 2)), 18, "set", "row_scatter"),  # rows with gaps
     (Layout((6,), (2,)), 12, "add", "row_scatter")],  # one canonical dim: no rows
    ids=["block-no-grid", "structured-windows", "row-set-gaps", "row-one-dim"],
)
def test_forced_method_that_does_not_apply_is_refused(layout, size, mode, method):
    message = f"write: method={method!r} does not apply to mode={mode!r}"
    with pytest.raises(LayoutError, match=re.escape(message)):
        write_plan(layout, size, mode=mode, method=method)
    with pytest.raises(LayoutError, match=re.escape(f"{mode}: method={method!r} does not apply")):
        jax.jit(lambda s: write(s, layout, 1.0, mode=mode, op=mode, method=method))(jnp.zeros(size))


@pytest.mark.parametrize("transform", [jax.jit, lambda f: f], ids=["jit", "eager"])
def test_layout_past_the_storage_end_is_refused(transform):
    message = r"write: size \[3, 3\], stride \[4, 1\] and storage offset 2 require a storage of 13 elements"
    with pytest.raises(StorageError, match=message):
        transform(lambda s: write(s, Layout((3, 3), (4, 1), 2), 1.0))(jnp.zeros(12))


@pytest.mark.parametrize("method", PATHS)
def test_storages_past_int32_need_x64_on_every_path(method):
    _forced(method)
    layout = Layout((2, 4), (8, 1), 2**31)
    storage = jax.ShapeDtypeStruct((2**31 + 16,), jnp.float32)
    with pytest.raises(StorageError, match="jax_enable_x64"):
        jax.jit(lambda s: write(s, layout, 1.0, mode="add", method=method)).lower(storage)


SHARDED = textwrap.dedent(
    """
    import os, re
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from functional_strides import Layout
    from functional_strides._src.lowering.writes import write
    from functional_strides._src.native import copy_kernel as _copy_kernel

    assert len(jax.devices()) == 8, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("batch",))
    plain = jnp.arange(8 * 4096, dtype=jnp.float32).reshape(8, 4096)
    storage = jax.device_put(plain, NamedSharding(mesh, P("batch", None)))
    collectives = re.compile(r"all-gather|all-to-all|collective-permute|all-reduce|reduce-scatter")
    cases = {"block": (Layout((2, 64, 60), (0, 64, 1), 2), "add"),
             "structured": (Layout((64, 32), (1, 128)), "set"),
             "row_scatter": (Layout((63, 128), (64, 1)), "add"),
             "scatter": (Layout((64,), (65,)), "set"),
             "strided_copy": (Layout((64, 32), (1, 128)), "add"),  # vmapped: XLA's write
             "permutation": (Layout((64, 64), (1, 64)), "set")}
    if _copy_kernel.native is None:
        del cases["strided_copy"]
    for method, (layout, mode) in cases.items():
        f = jax.jit(jax.vmap(lambda s: write(s, layout, 1.5, mode=mode, overlap="last", method=method)))
        found = sorted(set(collectives.findall(f.lower(storage).compile().as_text())))
        assert not found, (method, found)
        out = f(storage)
        # a permutation's result is the values alone (here one scalar): XLA may place it anywhere
        assert method == "permutation" or out.sharding.spec[0] == "batch", (method, out.sharding)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(f(plain)))
        print(method, "local")
    print("OK")
    """
)


@pytest.mark.slow
def test_every_path_stays_local_on_a_sharded_batch():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", SHARDED], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    paths = PATHS if BUILT else XLA_PATHS
    assert proc.stdout.split() == [w for m in paths for w in (m, "local")] + ["OK"], proc.stdout
