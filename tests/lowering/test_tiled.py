"""Tests of the cache-tiled transpose (functional_strides._src.lowering.tiled): which permutes it takes,
values against NumPy's transpose (edges included), the structured read through it against
the oracle, its HLO (a loop, no gather, no temporary beyond the output) and its gradient. The
loop is part of the XLA structured read (``method="structured"``, and "auto" off CPU or where
the strided copy is not built)."""

from __future__ import annotations

import itertools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from functional_strides import oracle, views
from functional_strides._src.core.layout import Layout
from functional_strides._src.lowering import tiled as _tiled
from functional_strides._src.lowering.reads import materialize, xla_read_plan

_GATHER_OP = re.compile(r"=\s*\S+\s+gather\(")


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 2 rows (8 bytes of float32) by at most 3 columns, from 1 element up: the
    tiled form, with edges in both directions, on arrays small enough to test many."""
    monkeypatch.setattr(_tiled, "TILED_MIN_ELEMENTS", 1)
    monkeypatch.setattr(_tiled, "TILED_MIN_ROWS", 1)
    monkeypatch.setattr(_tiled, "P_TILE_BYTES", 8)
    monkeypatch.setattr(_tiled, "Q_TILE_MAX", 3)


@pytest.mark.parametrize(("shape", "perm", "want"), [
    ((4096, 4096), (1, 0), _tiled.TiledPlan(1, 4096, 4096, 16, 1024)),
    ((32, 512, 3136), (0, 2, 1), _tiled.TiledPlan(32, 512, 3136, 16, 784)),  # 784 divides 3136
    ((2, 32, 64, 64, 32), (0, 4, 1, 2, 3), _tiled.TiledPlan(2, 131072, 32, 16, 32)),
    ((2, 32, 32, 4096), (0, 2, 3, 1), _tiled.TiledPlan(2, 32, 131072, 16, 1024)),
    ((1000, 1000), (1, 0), _tiled.TiledPlan(1, 1000, 1000, 16, 1000)),
    ((300, 1500), (1, 0), _tiled.TiledPlan(1, 300, 1500, 16, 750)),
    ((1021, 1021), (1, 0), _tiled.TiledPlan(1, 1021, 1021, 16, 1021)),
], ids=["square", "many-rows", "ndhwc", "ncdhw-3", "1000", "300x1500", "prime"])
def test_plan_of_large_permutes(shape, perm, want):
    assert _tiled.tiled_plan(shape, perm, 4) == want


@pytest.mark.parametrize(("shape", "perm", "why"), [
    ((16, 1024, 16, 64), (0, 2, 1, 3), "the innermost dim stays innermost: whole rows move"),
    ((128, 128), (1, 0), "fewer elements than TILED_MIN_ELEMENTS"),
    ((64, 64, 64), (1, 0, 2), "the innermost dim stays innermost"),
    ((64, 64, 64), (2, 0, 1), "a rotation, but the plan needs it as two swapped blocks"),
    ((64, 64, 64), (1, 2, 0), "two swapped blocks"),
    ((64, 64, 64), (0, 1, 2), "the identity"),
    ((8, 65536), (1, 0), "fewer than two tiles of rows"),
    ((32, 64, 3136), (0, 2, 1), "NCHW->NHWC: 64 rows, 12544 bytes apart (no 4 KiB multiple)"),
    ((4, 100, 40000), (0, 2, 1), "100 rows, 160000 bytes apart"),
    ((64, 64, 64), (2, 1, 0), "not two swapped blocks"),
])
def test_plan_keeps_xla_transpose(shape, perm, why):
    got = _tiled.tiled_plan(shape, perm, 4)
    if why == "two swapped blocks":  # (1, 2, 0): blocks (0,) and (1, 2) swapped -> tiled
        assert got == _tiled.TiledPlan(1, 64, 4096, 16, 1024)
    elif why.startswith("a rotation"):  # (2, 0, 1): blocks (0, 1) and (2,) swapped -> tiled
        assert got == _tiled.TiledPlan(1, 4096, 64, 16, 64)
    else:
        assert got is None, why


def test_plan_rows_are_a_cache_line_of_the_dtype():
    assert _tiled.tiled_plan((4096, 4096), (1, 0), 2).p_tile == 32
    assert _tiled.tiled_plan((4096, 4096), (1, 0), 8).p_tile == 8
    assert _tiled.tiled_plan((4096, 4096), (1, 0), 1).p_tile == 64


@st.composite
def permutes(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank)))
    perm = tuple(draw(st.permutations(range(rank))))
    return shape, perm


@examples(13, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=permutes(), dtype=st.sampled_from([np.float32, np.int8, np.float16]))
def test_transpose_equals_numpy(small_tiles, case, dtype):
    shape, perm = case
    x = np.arange(int(np.prod(shape))).astype(dtype).reshape(shape)
    got = jax.jit(lambda a: _tiled.transpose(a, perm, read=lambda: a))(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(got), np.transpose(x, perm))


def test_every_permute_of_rank_4_with_edges(small_tiles):
    shape = (3, 5, 2, 7)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    tiled = 0
    for perm in itertools.permutations(range(4)):
        tiled += _tiled.tiled_plan(shape, perm, 4) is not None
        got = jax.jit(lambda a, p=perm: _tiled.transpose(a, p, read=lambda: a))(jnp.asarray(x))
        np.testing.assert_array_equal(np.asarray(got), np.transpose(x, perm), err_msg=str(perm))
    # the block swaps whose first block has two tiles of rows (p >= 4): (1,2,3,0) is p=3, no;
    # (2,3,0,1) p=15, (3,0,1,2) p=30, (0,2,3,1) p=5, (0,3,1,2) p=10; (0,1,3,2) is p=2, no
    assert tiled == 4


@examples(10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(2, 9), cols=st.integers(2, 9), offset=st.integers(0, 3),
       step=st.sampled_from([1, 2]))
def test_structured_read_through_tiles_equals_oracle(small_tiles, rows, cols, offset, step):
    layout = views.t(Layout((rows, (cols + step - 1) // step), (cols, step), offset))
    storage = np.arange(offset + rows * cols + 3, dtype=np.float32)
    assert xla_read_plan(layout) == "structured"
    compiled = jax.jit(lambda s: materialize(s, layout, method="structured")).lower(
        jnp.asarray(storage)).compile()
    assert not _GATHER_OP.search(compiled.as_text())
    np.testing.assert_array_equal(np.asarray(compiled(jnp.asarray(storage))),
                                  oracle.materialize(storage, layout))


def test_large_transpose_is_a_loop_without_gather_or_temporary():
    layout = views.t(Layout.contiguous((512, 512)))
    compiled = jax.jit(lambda s: materialize(s, layout, method="structured")).lower(
        jax.ShapeDtypeStruct((512 * 512,), jnp.float32)).compile()
    text = compiled.as_text()
    assert " while(" in text and not _GATHER_OP.search(text)
    assert compiled.memory_analysis().temp_size_in_bytes <= 1024  # loop counters only
    storage = np.arange(512 * 512, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(compiled(jnp.asarray(storage))),
                                  storage.reshape(512, 512).T)


@pytest.mark.slow
def test_every_reversal_of_every_permute_of_rank_4(small_tiles):
    """``rev`` reverses output axes: inside the tiles where each reversed axis is a whole block
    (or all of a block's axes are reversed), else by XLA's rev after its transpose."""
    shape = (3, 5, 2, 7)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    inside = 0
    for perm in itertools.permutations(range(4)):
        if _tiled.tiled_plan(shape, perm, 4) is None:
            continue
        for k in range(5):
            for rev in itertools.combinations(range(4), k):
                inside += _tiled._block_axes(perm, rev) is not None
                fn = jax.jit(lambda a, p=perm, r=rev: _tiled.transpose(a, p, r, read=lambda: a))
                got = fn(jnp.asarray(x))
                np.testing.assert_array_equal(np.asarray(got), np.flip(np.transpose(x, perm), rev),
                                              err_msg=f"{perm} {rev}")
    assert 0 < inside < 4 * 16  # both kinds occur


@pytest.mark.sampled(3)
@pytest.mark.parametrize("layout", [
    Layout((2048, 1024), (-1, 4096), 2047),          # x[:, ::-1][::2].t() of a 2048x2048 x
    Layout((2048, 2048), (1, -2048), 2047 * 2048),   # x[::-1].t()
    Layout((2048, 2048), (-1, -2048), 2**22 - 1),    # x[::-1, ::-1].t()
])
def test_flipped_transposes_are_one_loop_without_temporary(layout):
    """A large transpose of a reversed view reverses each tile in cache: one loop, no gather,
    no temporary (the rev once ran over the loop's output, a temporary the size of it)."""
    storage = np.arange(2**22, dtype=np.float32)
    compiled = jax.jit(lambda s: materialize(s, layout, method="structured")).lower(
        jnp.asarray(storage)).compile()
    text = compiled.as_text()
    assert " while(" in text and not _GATHER_OP.search(text)
    assert compiled.memory_analysis().temp_size_in_bytes <= 1024
    np.testing.assert_array_equal(np.asarray(compiled(jnp.asarray(storage))),
                                  oracle.materialize(storage, layout))


@pytest.mark.parametrize("extra", [0, 3])
def test_offsets_and_edges_stay_in_place(extra):
    """A transposed block at offset 7 of a matrix of pitch 2048, with edge pieces (1500 rows
    is not a multiple of the tile's 16). Storage of whole rows (``extra=0``): the box is a
    reshape of the storage and one slice, read tile by tile inside the loop; the edges are
    written first, into the fresh output that the loop then updates in place: no temporary.
    Storage that is not whole rows (``extra=3``): the box needs a slice of the storage first,
    which a loop would hoist into a temporary the size of the output, so XLA's transpose
    (fused with the slice) is kept: no loop, no temporary."""
    layout = Layout((500, 1500), (1, 2048), 7)
    storage = np.arange(2**22 + extra, dtype=np.float32)
    compiled = jax.jit(lambda s: materialize(s, layout, method="structured")).lower(
        jnp.asarray(storage)).compile()
    assert (" while(" in compiled.as_text()) == (extra == 0)
    assert compiled.memory_analysis().temp_size_in_bytes <= 1024
    np.testing.assert_array_equal(np.asarray(compiled(jnp.asarray(storage))),
                                  oracle.materialize(storage, layout))


def test_traced_offset_and_gradient_through_tiles(small_tiles):
    layout = Layout((6, 5), (1, 6), 2)  # a transpose of 5x6 at offset 2
    storage = jnp.arange(40.0)

    def read(s, off):
        from functional_strides import StridedArray
        return jnp.asarray(StridedArray(s, Layout(layout.shape, layout.strides, off)))

    got = jax.jit(read)(storage, jnp.int32(2))
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(np.asarray(storage), layout))
    w = jnp.arange(30.0).reshape(6, 5)
    grad = jax.grad(lambda s: jnp.sum(materialize(s, layout, method="structured") * w))(storage)
    want = np.zeros(40)
    np.add.at(want, layout.indices().reshape(-1), np.asarray(w).reshape(-1))
    np.testing.assert_array_equal(np.asarray(grad), want)
