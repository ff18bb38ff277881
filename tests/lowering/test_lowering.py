"""Tests of functional_strides._src.lowering.reads: every path against the oracle, the HLO it compiles
to, the eager no-compile property, transforms (jit, vmap, grad), dtypes and 64-bit indices."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import copy_kernel, seed_cases
from hypothesis import given
from hypothesis import strategies as st
from jax.test_util import check_grads
from strategies import sliced_permuted_expanded

from functional_strides import oracle
from functional_strides._src.core.errors import LayoutError, StorageError
from functional_strides._src.core.layout import Layout
from functional_strides._src.lowering import reads as lowering
from functional_strides._src.lowering.reads import METHODS, index_dtype, materialize, read_plan

PATHS = METHODS[1:]  # every forced path
XLA_PATHS = tuple(m for m in PATHS if m != "strided_copy")  # those made of XLA ops (any platform)


def _forced(method: str) -> str:
    """``method``, after skipping (or, where the extension is required, failing) a test of
    the strided copy when its extension is not built."""
    if method == "strided_copy":
        copy_kernel()
    return method
REPO = Path(__file__).parents[2]


def applicable(layout: Layout) -> list[str]:
    """Forced paths that apply to ``layout`` (``plan`` raises LayoutError for the others)."""
    out = []
    for method in XLA_PATHS:
        try:
            read_plan(layout, method)
        except LayoutError:
            continue
        out.append(method)
    return out


def read_all(storage, layout: Layout, methods) -> list[jax.Array]:
    """Every path in ``methods`` inside one jit (one compile per layout)."""
    return jax.jit(lambda s: [materialize(s, layout, method=m) for m in methods])(storage)


@st.composite
def layouts(draw, max_rank=4, max_extent=5, max_stride=9):
    shape = tuple(draw(st.lists(st.integers(0, max_extent), max_size=max_rank)))
    strides = tuple(draw(st.integers(0, max_stride)) for _ in shape)
    return Layout(shape, strides, draw(st.integers(0, 5)))


_GATHER_OP = re.compile(r"=\s*\S+\s+gather\(")  # an HLO gather instruction (not a name)


def has_gather(hlo_text: str) -> bool:
    return _GATHER_OP.search(hlo_text) is not None


def _storage(size: int, dtype=np.float32) -> np.ndarray:
    return np.arange(size).astype(dtype)


# -- values: every path equals the oracle ----------------------------------------------------

@given(layout=layouts(), slack=st.integers(0, 3))
def test_every_path_matches_the_oracle(layout, slack):
    storage = _storage(layout.required_storage_size + slack)
    expected = oracle.materialize(storage, layout)
    methods = applicable(layout) if not layout.is_empty else ["gather"]
    assert "gather" in methods
    for method, got in zip(methods, read_all(jnp.asarray(storage), layout, methods), strict=True):
        assert got.shape == layout.shape and got.dtype == storage.dtype, method
        np.testing.assert_array_equal(np.asarray(got), expected, err_msg=f"{method} on {layout}")


@pytest.mark.parametrize(
    ("layout", "size", "methods"),
    [
        (Layout((7, 16), (4, 1)), 40, ("slices", "row_gather", "gather")),  # unfold(16, 4): shifted slices
        (Layout((2, 8), (1, 1)), 9, ("slices", "row_gather", "gather")),  # 2 windows of 8: stacked reads
        (Layout((3, 5, 4), (40, 3, 1), 2), 120, ("slices", "row_gather", "gather")),  # framed batch
        (Layout((4, 4, 3, 3), (6, 1, 6, 1)), 36, ("row_gather", "gather")),  # 3x3 patches
        (Layout((3, 2), (10, 1), 5), 27, ("structured", "row_gather", "gather")),  # last row padded
        (Layout((2, 3, 2), (0, 7, 2), 1), 18, ("structured", "row_gather", "gather")),
        (Layout((5,), (6,), 3), 30, ("structured", "gather")),  # a diagonal
    ],
    ids=["shifted-slices", "stacked-slices", "batched-frames", "patches", "padded", "expand+stride",
         "diagonal"],
)
def test_forced_paths_on_chosen_layouts(layout, size, methods):
    assert tuple(applicable(layout)) == methods
    storage = _storage(size)
    for method, got in zip(methods, read_all(jnp.asarray(storage), layout, methods), strict=True):
        np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout), err_msg=method)


def test_padded_read_pads_only_the_last_row():
    layout = Layout((3, 2), (10, 1), 5)  # the last row's unread tail runs past 27 elements
    text = jax.jit(lambda s: materialize(s, layout)).lower(jnp.zeros(27)).as_text()
    assert "stablehlo.pad" in text and "stablehlo.gather" not in text


def _seed_cases():
    # cases whose result is a view of the storage (a copy has storage of its own)
    return [c for c in seed_cases()
            if "values" in c["expect"] and c["expect"].get("shares_storage_with_base")]


@pytest.mark.parametrize("case", _seed_cases(), ids=lambda c: c["id"])
def test_seed_examples_on_every_path(case):
    spec, expect = case["storage"], case["expect"]
    dtype = spec.get("dtype", "float32")
    storage = np.arange(spec["arange"]) if "arange" in spec else np.asarray(spec["values"])
    storage = storage.astype(dtype)
    layout = Layout(tuple(expect["shape"]), tuple(expect["strides"]), expect["offset"])
    methods = applicable(layout)
    for method, got in zip(methods, read_all(jnp.asarray(storage), layout, methods), strict=True):
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), np.asarray(expect["values"], dtype),
                                      err_msg=f"{case['id']} via {method}")


# -- HLO: structured layouts never gather --------------------------------------------------

@given(case=st.one_of(sliced_permuted_expanded(), sliced_permuted_expanded(flips=True)))
def test_slicing_permutation_and_expansion_compile_without_gather(case):
    """Flips (negative strides) included: the reversed dims are read forwards and reversed
    with ``rev``, never gathered."""
    layout, size = case
    assert read_plan(layout) in ("structured", "empty")
    storage = _storage(size)
    compiled = jax.jit(lambda s: materialize(s, layout)).lower(jnp.asarray(storage)).compile()
    assert not has_gather(compiled.as_text())
    np.testing.assert_array_equal(np.asarray(compiled(jnp.asarray(storage))),
                                  oracle.materialize(storage, layout))


BENCHMARK_LAYOUTS = [
    # (name, layout, storage size, path of "auto" among the XLA strategies, whether "auto"
    # takes the strided copy instead where it is built)
    ("nchw-to-nhwc", Layout((32, 56, 56, 64), (200704, 56, 1, 3136)), 32 * 64 * 56 * 56, "structured", True),
    ("transpose-4096", Layout((4096, 4096), (1, 4096)), 4096 * 4096, "structured", True),
    ("every-other-row-col", Layout((2048, 2048), (8192, 2)), 4096 * 4096, "structured", False),
    ("row-expanded", Layout((4096, 4096), (0, 1)), 4096 * 4096, "structured", True),  # a fresh output
    ("frames-1024-256", Layout((16381, 1024), (256, 1)), 2**22, "row_gather", True),
    ("heads", Layout((16, 16, 1024, 64), (2**20, 64, 1024, 1)), 2**24, "structured", True),
]


@pytest.mark.parametrize(("name", "layout", "size", "path", "copy"), BENCHMARK_LAYOUTS,
                         ids=[c[0] for c in BENCHMARK_LAYOUTS])
def test_benchmark_layouts_plan_hlo_size_and_memory(name, layout, size, path, copy):
    assert lowering.xla_read_plan(layout) == path
    built = lowering._copy_kernel.native is not None
    assert read_plan(layout) == ("strided_copy" if copy and built else path)
    for method in {path, read_plan(layout)}:
        compiled = jax.jit(lambda s, m=method: materialize(s, layout, method=m)).lower(
            jax.ShapeDtypeStruct((size,), jnp.float32)).compile()
        text = compiled.as_text()
        assert has_gather(text) == (method in ("row_gather", "gather"))
        assert len(text) < 50_000
        memory = compiled.memory_analysis()
        if memory is not None:
            assert memory.temp_size_in_bytes <= layout.numel * 4


# -- eager use: no compile per layout ------------------------------------------------------

def eager_read():
    """The program eager reads use: the strided copy with strides as operands on CPU where it
    is built, else the gather; either takes strides and offset as arrays."""
    return lowering._eager_copy if lowering._copy_kernel.supports(jnp.float32) else lowering._eager_gather


def test_eager_distinct_layouts_share_one_compiled_gather():
    storage = jnp.arange(200.0)
    materialize(storage, Layout((8, 8), (9, 2)))  # compile the (8, 8) program once
    before = eager_read()._cache_size()
    layouts = [Layout((8, 8), (a, b), off) for a in range(1, 11) for b in range(2, 12) for off in (0,)]
    layouts = [lay for lay in layouts if not lay.is_contiguous()][:100]
    assert len(set(layouts)) == 100
    for lay in layouts:
        got = materialize(storage, lay)
        if lay.strides[0] == 3:
            np.testing.assert_array_equal(np.asarray(got), oracle.materialize(np.asarray(storage), lay))
    assert eager_read()._cache_size() == before


class EagerAndJitTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_eager_and_jit_agree(self):
        layouts = [Layout((3, 4), (1, 3)), Layout((4, 3), (2, 1), 1), Layout((2, 2, 3), (0, 6, 2)),
                   Layout((0, 3), (1, 1)), Layout((2, 3), (3, 1), 4)]
        storage = _storage(16)
        for layout in layouts:
            got = self.variant(lambda s, lay=layout: materialize(s, lay))(jnp.asarray(storage))
            np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


# -- transforms -----------------------------------------------------------------------------

FAR_LAYOUTS = [
    # (layout, storage size, whether "auto" takes the strided copy where it is built)
    (Layout((2**14,), (17,), 5), 2**14 * 17 + 5, True),            # every 17th element, from 5
    (Layout((2**14,), (-16,), 2**18 - 1), 2**18, True),             # reversed, a line apart
    (Layout((2**12,), (4097,)), 4096 * 4096, True),                 # the 4096^2 diagonal: a page apart
    (Layout((2**12,), (1023,)), 2**12 * 1023, False),               # under a page apart: too few
    (Layout((2**11,), (4097,)), 2**11 * 4097, False),               # a page apart, too few
    (Layout((2**14,), (15,)), 2**14 * 15, False),                   # under a line apart
]

EVERY_OTHER_LAYOUTS = [
    # (layout, storage size, whether "auto" takes the strided copy where it is built)
    (Layout((2**15,), (2,)), 2**16, False),                         # under 2^16 elements: the call costs more
    (Layout((2**16,), (2,)), 2**17, True),                          # x[::2] from 2^16 elements
    (Layout((2**20,), (2,)), 2**21, True),                          # up to 2^20
    (Layout((2**18,), (-2,), 2**19 - 2), 2**19, False),              # reversed: XLA's slice and rev
    (Layout((512, 512), (2048, -2), 1022), 2**20, False),            # rows reversed, alike
    (Layout((1024, 1024), (4096, 2)), 2**22, True),                 # x[::2, ::2] of 2048^2
    (Layout((2048, 2048), (8192, 2)), 2**24, False),                # of 4096^2: the slice is as fast
    (Layout((512, 512), (512, 1)), 2**18, False),                   # a plain slice of rows
]


@pytest.mark.sampled(3)
@pytest.mark.parametrize(("layout", "size", "copy"), FAR_LAYOUTS + EVERY_OTHER_LAYOUTS,
                         ids=[str(c[0]) for c in FAR_LAYOUTS + EVERY_OTHER_LAYOUTS])
def test_far_apart_and_every_other_elements_take_the_strided_copy_in_the_measured_sizes(layout, size, copy):
    """One dim whose stride jumps a cache line (COPY_TILE_JUMP elements) or more, with at
    least COPY_FAR_MIN_ELEMENTS elements (COPY_FAR_PAGE_MIN_ELEMENTS a page apart), and a last
    dim of stride 2 (not reversed) without a permute, with COPY_EVERY_OTHER_MIN_ELEMENTS to
    COPY_EVERY_OTHER_MAX_ELEMENTS elements: the strided copy where it is built (the "far" and
    "every_other" tables of benchmarks/lowering_choices.py), else XLA's strided slice; the
    values are the oracle's either way."""
    built = lowering._copy_kernel.native is not None
    assert lowering.xla_read_plan(layout) == "structured"
    assert read_plan(layout) == ("strided_copy" if copy and built else "structured")
    storage = _storage(size)
    out = jax.jit(lambda s: materialize(s, layout))(jnp.asarray(storage))
    np.testing.assert_array_equal(np.asarray(out), oracle.materialize(storage, layout))


TRANSFORM_LAYOUTS = {
    # one overlapping layout per path: expansion for the structured path, windows for the others
    "structured": Layout((3, 4), (0, 2), 1),
    "slices": Layout((5, 4), (2, 1)),
    "row_gather": Layout((5, 4), (2, 1)),
    "gather": Layout((4, 3), (2, 3)),   # (0, 1) and (3, 0)... share slots: 3 = 0 + 3, 6 = 3 * 2
    "strided_copy": Layout((4, 3), (2, 3)),
}


@pytest.mark.parametrize("method", PATHS)
def test_jit_does_not_retrace_for_equal_layouts(method):
    _forced(method)
    layout = TRANSFORM_LAYOUTS[method]
    chex.clear_trace_counter()  # the counter is keyed on the function's code, shared by parameters

    @jax.jit
    @chex.assert_max_traces(n=1)
    def read(storage, lay):
        return materialize(storage, lay, method=method)

    storage = jnp.arange(16.0)
    first = read(storage, layout)
    read(storage + 1, Layout(layout.shape, layout.strides, layout.offset))  # equal layout: cached
    np.testing.assert_array_equal(np.asarray(first), oracle.materialize(np.arange(16.0), layout))
    with pytest.raises(AssertionError, match="traced > 1"):
        read(storage, Layout(layout.shape, tuple(s + 1 for s in layout.strides), 0))


@pytest.mark.parametrize("method", PATHS)
def test_vmap_over_a_batch_of_storages(method):
    _forced(method)
    layout = TRANSFORM_LAYOUTS[method]
    batch = np.arange(3 * 16, dtype=np.float32).reshape(3, 16)
    got = jax.vmap(lambda s: materialize(s, layout, method=method))(jnp.asarray(batch))
    expected = np.stack([oracle.materialize(row, layout) for row in batch])
    np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("method", PATHS)
def test_grad_through_overlapping_views(method):
    _forced(method)
    layout = TRANSFORM_LAYOUTS[method]
    assert oracle.has_internal_overlap(layout) and read_plan(layout, method) == method
    storage = jnp.asarray(np.linspace(-1.0, 1.0, 16), jnp.float32)
    read = jax.jit(lambda s: materialize(s, layout, method=method))
    check_grads(read, (storage,), order=2, modes=("fwd", "rev"), eps=1e-2)
    # the cotangent of every storage slot counts the elements that read it
    counts = np.bincount(oracle.element_indices(layout), minlength=16).astype(np.float32)
    grad = jax.grad(lambda s: read(s).sum())(storage)
    np.testing.assert_array_equal(np.asarray(grad), counts)


# -- dtypes ---------------------------------------------------------------------------------

DTYPES = [jnp.bool_, jnp.int8, jnp.int16, jnp.int32, jnp.uint8, jnp.float16, jnp.bfloat16,
          jnp.float32, jnp.complex64]


@pytest.mark.sampled(3)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: jnp.dtype(d).name)
def test_every_path_for_every_dtype(dtype):
    storage = (np.arange(40) % 7).astype(jnp.dtype(dtype))
    for layout in (Layout((3, 2), (10, 1), 5), Layout((7, 16), (4, 1)), Layout((2, 3, 2), (0, 7, 2), 1)):
        methods = applicable(layout)
        for method, got in zip(methods, read_all(jnp.asarray(storage), layout, methods), strict=True):
            assert got.dtype == jnp.dtype(dtype)
            np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout),
                                          err_msg=method)


# -- errors ---------------------------------------------------------------------------------

def test_unknown_method_is_refused():
    with pytest.raises(LayoutError, match=r"unknown method 'fast'; use one of \('auto'"):
        materialize(jnp.arange(4.0), Layout((2,), (1,)), method="fast")


def test_forced_method_that_does_not_apply_is_refused():
    with pytest.raises(LayoutError, match=r"method='structured' does not apply to layout \(5,4\):\(2,1\)\+0"):
        jax.jit(lambda s: materialize(s, Layout((5, 4), (2, 1)), method="structured"))(jnp.arange(16.0))
    with pytest.raises(LayoutError, match="method='slices' does not apply"):
        materialize(jnp.arange(16.0), Layout((4, 4), (1, 4)), method="slices")


@pytest.mark.parametrize("transform", [jax.jit, lambda f: f], ids=["jit", "eager"])
def test_layout_past_the_storage_end_is_refused(transform):
    with pytest.raises(StorageError, match=r"require a storage of 13 elements .*, but the storage has 12"):
        transform(lambda s: materialize(s, Layout((3, 3), (4, 1), 2)))(jnp.arange(12.0))


# -- 64-bit indices -----------------------------------------------------------------------

BIG = 2**31 + 10


def test_index_dtype_switches_past_int32():
    assert index_dtype(Layout((4,), (1,)), 2**31) == np.int32
    message = r"Enable 64-bit indices with jax.config.update\('jax_enable_x64', True\)"
    with pytest.raises(StorageError, match=message):
        index_dtype(Layout((4,), (1,)), BIG)


def test_big_storage_without_x64():
    big = jax.ShapeDtypeStruct((BIG,), jnp.int8)
    windows = Layout((3, 4), (2, 1), 2**31)  # overlapping: index arrays needed
    with pytest.raises(StorageError, match="past int32"):
        jax.jit(lambda s: materialize(s, windows, method="gather")).lower(big)
    with pytest.raises(StorageError, match="past int32"):
        jax.jit(lambda s: materialize(s, windows, method="row_gather")).lower(big)
    # every path refuses, the index-free ones too: whether a program runs never depends on
    # which lowering was picked
    strided = Layout((2, 3), (2**30, 2), 5)
    with pytest.raises(StorageError, match="past int32"):
        jax.eval_shape(lambda s: materialize(s, strided), big)
    with pytest.raises(StorageError, match="past int32"):
        jax.jit(lambda s: materialize(s, windows, method="slices")).lower(big)
    with pytest.raises(StorageError, match="past int32"):
        jax.jit(lambda s: materialize(s, Layout((4,), (1,)))).lower(big)


_X64_SCRIPT = textwrap.dedent(f"""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from functional_strides._src.core.layout import Layout
    from functional_strides._src.lowering.reads import materialize, read_plan
    big = jax.ShapeDtypeStruct(({BIG},), jnp.int8)
    windows = Layout((3, 4), (2, 1), 2**31)
    for method in ("gather", "row_gather"):
        text = jax.jit(lambda s: materialize(s, windows, method=method)).lower(big).as_text()
        assert "stablehlo.gather" in text and "i64" in text, method
    assert jax.eval_shape(lambda s: materialize(s, windows), big).shape == (3, 4)
    strided = Layout((2, 3), (2**30, 2), 5)
    text = jax.jit(lambda s: materialize(s, strided)).lower(big).as_text()
    assert "stablehlo.gather" not in text
    print("x64 ok", read_plan(windows))
""")


@pytest.mark.slow
def test_big_storage_with_x64_uses_int64_indices():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", _X64_SCRIPT], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "x64 ok" in result.stdout


def test_a_permute_of_few_rows_far_apart_is_one_gather_over_the_views_dims():
    """NCDHW->NDHWC: 32 channels, each 1024 elements apart, moved to the innermost dim: one
    gather with indices over the view's own five dims (GATHER_MAX_ROWS); NCHW->NHWC of rows
    3136 apart (not a multiple of GATHER_ROWS_APART) and smaller permutes stay structured.
    (The XLA strategies' choice; on CPU the strided copy reads these where it is built.)"""
    from functional_strides._src.lowering import reads as _lowering

    ncdhw = Layout((2, 4, 16, 16, 32), (32 * 1024, 256, 16, 1, 1024))  # (N, D, H, W, C) of NCDHW
    assert _lowering.xla_read_plan(ncdhw) == "gather"
    storage = np.arange(2 * 32 * 1024, dtype=np.float32)
    text = jax.jit(lambda s: materialize(s, ncdhw, method="gather")).lower(jnp.asarray(storage)).as_text()
    assert "tensor<2x4x16x16x32xi32>" in text  # the indices, over the view's five dims
    xla_read = jax.jit(_lowering._lower_xla, static_argnums=1)
    np.testing.assert_array_equal(np.asarray(xla_read(jnp.asarray(storage), ncdhw)),
                                  oracle.materialize(storage, ncdhw))
    assert _lowering.GATHER_MAX_ROWS == 32 and _lowering.GATHER_ROWS_APART == 1024
    assert _lowering.xla_read_plan(Layout((2, 56, 56, 64), (64 * 3136, 56, 1, 3136))) == "structured"
    small = Layout((2, 4, 16, 8, 32), (32 * 512, 128, 8, 1, 512))  # 2^15 elements
    assert _lowering.xla_read_plan(small) == "structured"
