"""The ``"strided_copy"`` read and write (the C++ FFI handlers of ``_copy_native``): values
against the oracle for every kind of layout, element size and path of the handlers (plain
rows, long rows split into pieces, cache tiles with their edges, chunks over threads,
overlapping windows written by runs of storage slots, other overlapping views serially);
traced and clamped offsets; ``vmap`` (the XLA path, vmapped); ``jax.shard_map``;
derivatives; the programs they compile to (one custom call, in place when donated); the XLA
paths they leave to where they do not apply; calls from eight threads at once. The process
side (threads, forks, CPUs) is ``test_process.py``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import copy_kernel, numpy_read, numpy_write, run_pure_python
from hypothesis import given
from hypothesis import strategies as st
from strategies import layouts, storage_for

import functional_strides as fs
from functional_strides import Layout, LayoutError, materialize, oracle
from functional_strides._src.lowering.writes import _folded_layout
from functional_strides._src.native import copy_kernel as kernel_module
from functional_strides._src.native.copy_kernel import coalesced, ffi_read

pytestmark = pytest.mark.usefixtures("_built")


@pytest.fixture
def _built():
    copy_kernel()


def _copy(storage, layout):
    return jax.jit(lambda s: materialize(s, layout, method="strided_copy"))(storage)


@given(layout=layouts(max_rank=4, negative=True).filter(lambda lay: lay.numel > 0),
       dtype=st.sampled_from(["int8", "float16", "float32", "float64", "complex128", "bool"]),
       slack=st.integers(0, 3))
def test_values_match_the_oracle(layout, dtype, slack):
    if dtype in ("float64", "complex128") and not jax.config.jax_enable_x64:
        dtype = {"float64": "int32", "complex128": "complex64"}[dtype]
    storage = (storage_for(layout, slack) % 97).astype(dtype)
    got = _copy(jnp.asarray(storage), layout)
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


@given(layout=layouts(max_rank=4, negative=True).filter(lambda lay: lay.numel > 0),
       dtype=st.sampled_from(["int8", "float16", "float32", "complex64"]),
       order=st.sampled_from(sorted(kernel_module.ORDERS)),
       tiles=st.sampled_from(sorted(kernel_module.TILES)),
       stores=st.sampled_from(sorted(kernel_module.STORES)))
def test_every_forced_choice_of_the_read_matches_the_oracle(layout, dtype, order, tiles, stores):
    """The block order, tile shape and stores that ``lowering_choices.py`` forces change
    when and how each element is moved, never what lands where, on every kind of layout."""
    from functional_strides._src.native.copy_kernel import ffi_read

    storage = (storage_for(layout, 1) % 97).astype(dtype)
    got = jax.jit(lambda s: ffi_read(s, jnp.int32(layout.offset), layout.shape, layout.strides, order, tiles,
                                 stores))(jnp.asarray(storage))
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


@pytest.mark.sampled(3)
@pytest.mark.parametrize("layout", [
    Layout((70, 45), (1, 70)),  # a tiled transpose, partial tiles on both sides
    Layout((3, 40, 33), (1320, 1, 40)),  # a batch of them
    Layout((64, 40), (-1, 64), 63),  # the running dim reversed
    Layout((40, 64), (128, -2), 126),  # the last dim reversed, every other element
    Layout((33, 47), (2, 94)),  # the running dim strided by 2 (still a few bytes)
    Layout((6, 4, 5, 9), (180, 9, 36, 1)),  # whole rows of 9 move (memcpy blocks)
    Layout((5, 300), (0, 1)),  # expanded rows
    Layout((7, 300), (0, 0)),  # one element everywhere (fill)
    Layout((70000,), (1,), 3),  # one long row, split into pieces
    Layout((1024, 512), (1, 1024)),  # 2 MiB of output: several chunks, over the threads
    Layout((200, 100), (50, 1)),  # overlapping windows
    Layout((), (), 5),  # one element
    Layout((2, 3, 50, 16), (2400, 16, 48, 1)),  # heads: rows read in the storage's order
    Layout((3, 50, 16), (16, -48, 1), 49 * 48),  # the same, the storage's rows reversed
    Layout((2, 8, 1024, 64), (2**19, 64, 512, 1)),  # heads over several chunks and threads
    Layout((40, 20, 16), (16, 640, 1)),  # 40 runs of the output at once: the dense order
], ids=["tile-edges", "tile-batch", "tile-rev-rows", "rev-cols", "tile-step2", "rows", "expand",
        "fill", "long-row", "chunks", "windows", "scalar", "heads", "heads-rev", "heads-chunks",
        "rows-many-runs"])
def test_each_path_of_the_handler(layout):
    storage = np.arange(layout.required_storage_size + 5, dtype=np.float32)
    got = _copy(jnp.asarray(storage), layout)
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


@pytest.mark.parametrize("order", ["dense", "storage"])
@pytest.mark.parametrize("layout", [
    Layout((2, 3, 50, 16), (2400, 16, 48, 1)),  # heads (auto: the storage's order)
    Layout((40, 20, 16), (16, 640, 1)),  # 40 runs of rows (auto: the dense order)
    Layout((3, 50, 16), (16, -48, 1), 49 * 48),  # a reversed dim
    Layout((70, 45), (1, 70)),  # tiles: the order of the tiles' counters
    Layout((4, 30, 7), (7, 28 * 4, -1), 6),  # reversed rows
], ids=["heads", "many-runs", "reversed-dim", "tiles", "reversed-rows"])
def test_either_order_of_the_blocks_reads_the_same_values(layout, order):
    """The read handler's ``order`` attribute (forced by ``benchmarks/lowering_choices.py
    --only rows``) changes when each block is moved, never what lands where."""
    from functional_strides._src.native.copy_kernel import ffi_read

    storage = np.arange(layout.required_storage_size + 2, dtype=np.float32)
    got = jax.jit(lambda s: ffi_read(s, jnp.int32(layout.offset), layout.shape, layout.strides, order))(
        jnp.asarray(storage))
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


@pytest.mark.parametrize("attribute, value, message", [
    ("order", 3, "order must be 0"), ("tiles", 4, "tiles must be 0"), ("stores", 3, "stores must be 0"),
    ("stores", -1, "stores must be 0"),
])
def test_an_unknown_attribute_value_is_refused(attribute, value, message):
    call = jax.ffi.ffi_call(kernel_module.TARGET, jax.ShapeDtypeStruct((4, 4), jnp.float32))
    attrs = {"order": np.int64(0), "tiles": np.int64(0), "stores": np.int64(0)} | {attribute: np.int64(value)}
    with pytest.raises(Exception, match=message):
        jax.jit(lambda s: call(s, jnp.int32(0), sizes=np.asarray([4, 4], np.int64),
                               strides=np.asarray([1, 4], np.int64), below=np.int64(0),
                               reach=np.int64(16), **attrs))(jnp.zeros(16)).block_until_ready()


@pytest.mark.sampled(4)
@pytest.mark.parametrize("tiles", ["short", "tall", "wide"])
@pytest.mark.parametrize("dtype", ["int8", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("layout", [Layout((300, 40), (1, 300)), Layout((96, 70), (-1, 96), 95),
                                    Layout((2, 130, 33), (4290, 1, 130)), Layout((130, 131), (1, 130))],
                         ids=["short-last", "wide-last", "batch", "odd-edges"])
def test_every_tile_shape_reads_the_same_values(layout, dtype, tiles):
    """The read handler's ``tiles`` attribute (forced by ``benchmarks/lowering_choices.py
    --only tiles``) changes the cache tiles' shape, never what lands where: 32x32, up to
    128x32, and 64x64 (which elements of 8 and 16 bytes do not fit: they take 32x32)."""
    from functional_strides._src.native.copy_kernel import ffi_read

    if dtype in ("float64", "complex128") and not jax.config.jax_enable_x64:
        dtype = {"float64": "float32", "complex128": "complex64"}[dtype]
    storage = (np.arange(layout.required_storage_size + 2) % 113).astype(dtype)
    got = jax.jit(lambda s: ffi_read(s, jnp.int32(layout.offset), layout.shape, layout.strides, "auto",
                                     tiles))(jnp.asarray(storage))
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


@pytest.mark.sampled(4)
@pytest.mark.parametrize("stores", ["cached", "streaming", "auto"])
@pytest.mark.parametrize("dtype", ["int8", "bfloat16", "float32", "complex64"])
@pytest.mark.parametrize("layout", [
    Layout((96, 70), (1, 96)),  # tiles whose output rows start off 16-byte boundaries
    Layout((61, 133), (-1, 61), 60),  # tiles flipped, odd edges
    Layout((3, 7, 5, 33), (7 * 5 * 33, 33, 7 * 33, 1)),  # heads: rows of 33 elements, any alignment
    Layout((40, 20, 16), (16, 640, 1)),  # rows of 16 elements in the dense order
    Layout((200, 100), (50, 1), 3),  # overlapping windows
    Layout((7, 300), (0, 1)),  # expanded rows
    Layout((50, 9), (1, 50)),  # small tiles: rows of 9 elements
], ids=["tiles", "tiles-flipped", "heads", "rows", "windows", "expand", "narrow-tiles"])
def test_streaming_stores_write_the_same_values(layout, dtype, stores):
    """The read handler's ``stores`` attribute (forced by ``benchmarks/lowering_choices.py
    --only stores``): stores past the caches in aligned 16-byte groups, plain stores at the
    ends of each run, whatever the run's length and alignment."""
    from functional_strides._src.native.copy_kernel import ffi_read

    storage = (np.arange(layout.required_storage_size + 5) % 251).astype(dtype)
    got = jax.jit(lambda s: ffi_read(s, jnp.int32(layout.offset), layout.shape, layout.strides,
                                     stores=stores))(jnp.asarray(storage))
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


@pytest.mark.sampled(3)
@pytest.mark.parametrize("layout", [
    Layout((1024, 2048), (1, 1024)),  # a transpose of 8 MiB of float32: tiles
    Layout((2, 1024, 16, 64), (2**20, 64, 2**16, 1)),  # heads, 8 MiB: rows
    Layout((2, 512, 31, 64), (31 * 512 * 64, 64, 512 * 64, 1), 5),  # rows read 20 bytes off 16-byte bounds
], ids=["transpose", "heads", "heads-offset"])
def test_large_permutes_stream_their_output(layout):
    """From 8 MiB of output ``auto`` streams a permute's output (several chunks over the threads,
    each fenced before it is counted done): the values are NumPy's."""
    storage = np.arange(layout.required_storage_size + 7, dtype=np.float32)
    got = _copy(jnp.asarray(storage), layout)
    np.testing.assert_array_equal(np.asarray(got), numpy_read(storage, layout))


@pytest.mark.parametrize("dtype", ["int8", "bfloat16", "float32", "complex64", "uint64"])
@pytest.mark.parametrize("layout", [
    Layout((96, 70), (1, 96)), Layout((64, 70), (-1, 64), 63), Layout((2, 64, 33), (2112, 1, 64)),
    Layout((300, 40), (1, 300)), Layout((301, 64), (-1, 301), 300), Layout((2, 260, 7), (1820, 1, 260)),
    Layout((130, 134), (1, 130)), Layout((129, 130), (-1, 129), 128),
], ids=["forwards", "backwards", "batch", "tall", "tall-backwards-odd-edge", "tall-narrow",
        "wide-edges", "wide-backwards-odd-edges"])
def test_whole_tiles_of_every_element_size(layout, dtype):
    """Whole tiles of a read: 64x64 for elements of at most 4 bytes; 32x32 for wider ones, or,
    where the last dim spans at most two tiles of 32, up to 128 rows by 32 (16 KiB at most:
    64 rows of 8-byte elements, 32 of 16-byte); transposed in registers forwards and backwards
    (blocks of 16x16 elements of 1 byte, 8x8 of 2, 4x4 of 4, 2x2 of 8), element by element for
    16-byte ones; edge tiles in registers where their rows and columns are multiples of the
    block, else element by element."""
    if dtype == "uint64" and not jax.config.jax_enable_x64:
        dtype = "uint32"
    storage = (np.arange(layout.required_storage_size + 3) % 113).astype(dtype)
    got = _copy(jnp.asarray(storage), layout)
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


@given(layout=layouts(max_rank=4, negative=True).filter(lambda lay: lay.numel > 0),
       dtype=st.sampled_from(["int8", "float16", "float32", "complex64", "bool"]))
def test_eager_reads_take_the_handler_with_strides_as_operands(layout, dtype):
    """Outside ``jit`` a non-contiguous read is the handler with strides and offset as
    operands: one program per output shape, whatever the strides."""
    storage = (storage_for(layout, 2) % 101).astype(dtype)
    got = materialize(jnp.asarray(storage), layout)
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))


def test_eager_reads_compile_once_per_shape():
    from functional_strides._src.lowering import reads as _lowering

    storage = jnp.arange(4096.0)
    materialize(storage, Layout((16, 24), (1, 16)))
    before = _lowering._eager_copy._cache_size()
    for a, b, off in [(1, 16, 0), (2, 40, 3), (-1, 16, 15), (3, -100, 2500), (0, 7, 9)]:
        lay = Layout((16, 24), (a, b), off)
        np.testing.assert_array_equal(np.asarray(materialize(storage, lay)),
                                      oracle.materialize(np.asarray(storage), lay))
    assert _lowering._eager_copy._cache_size() == before
    text = _lowering._eager_copy.lower(storage, np.ones(2, np.int32), np.int32(0), shape=(16, 24)).as_text()
    assert "functional_strides_strided_copy_operands" in text


def test_traced_offsets_read_and_clamp_as_the_xla_path():
    storage = jnp.arange(4000.0)
    layout = Layout((30, 40), (1, 30))
    for method in ("strided_copy", "structured"):
        f = jax.jit(lambda s, o, m=method: materialize(s, Layout(layout.shape, layout.strides, o), method=m))
        for offset in (0, 17, 2800, 2801, 5000, -3):  # past the end and below 0: clamped
            want = oracle.materialize(np.asarray(storage), Layout(layout.shape, layout.strides,
                                                                  min(max(offset, 0), 4000 - 1200)))
            np.testing.assert_array_equal(np.asarray(f(storage, offset)), want, err_msg=f"{method} {offset}")


def test_traced_offset_of_a_reversed_view_clamps_at_its_lowest_index():
    storage = jnp.arange(100.0)
    shape, strides = (10,), (-3,)  # spans 28 elements below its offset
    f = jax.jit(lambda s, o: materialize(s, Layout(shape, strides, o), method="strided_copy"))
    for offset, low in ((27, 0), (99, 72), (5, 0), (400, 72)):
        want = oracle.materialize(np.asarray(storage), Layout(shape, strides, low + 27))
        np.testing.assert_array_equal(np.asarray(f(storage, offset)), want)


def test_vmap_over_offsets_storages_and_both():
    """Under ``vmap`` the XLA read runs, vmapped (no custom call a partitioner would have to
    gather onto every device)."""
    layout = Layout((20, 30), (1, 20))
    storages = jnp.arange(5 * 700.0).reshape(5, 700)
    offsets = jnp.arange(5) * 20

    def read(s, o):
        return materialize(s, Layout(layout.shape, layout.strides, o), method="strided_copy")

    def want(s, o):
        return oracle.materialize(np.asarray(s), Layout(layout.shape, layout.strides, int(o)))

    got = jax.vmap(read, (None, 0))(storages[0], offsets)
    np.testing.assert_array_equal(np.asarray(got), np.stack([want(storages[0], o) for o in offsets]))
    got = jax.vmap(read, (0, None))(storages, 7)
    np.testing.assert_array_equal(np.asarray(got), np.stack([want(s, 7) for s in storages]))
    got = jax.vmap(read)(storages, offsets)
    pairs = zip(storages, offsets, strict=True)
    np.testing.assert_array_equal(np.asarray(got), np.stack([want(s, o) for s, o in pairs]))
    nested = jax.vmap(jax.vmap(read, (None, 0)), (0, None))(storages, offsets[:3])
    np.testing.assert_array_equal(np.asarray(nested),
                                  np.stack([[want(s, o) for o in offsets[:3]] for s in storages]))
    text = jax.jit(jax.vmap(read)).lower(storages, offsets).compile().as_text()
    assert "custom-call" not in text


def test_batched_strided_arrays_read_through_the_handler():
    storage = jnp.arange(3 * 512 * 256.0).reshape(3, -1)
    x = fs.StridedArray(storage, Layout((256, 512), (1, 256)), batched=True)
    got = x.contiguous().storage
    want = np.stack([oracle.materialize(np.asarray(s), x.layout).reshape(-1) for s in storage])
    np.testing.assert_array_equal(np.asarray(got), want)


def test_derivatives_are_those_of_the_xla_read():
    layout = Layout((24, 20), (1, 24), 3)
    storage = jnp.linspace(-1.0, 1.0, 500)
    weights = jnp.cos(jnp.arange(480.0)).reshape(24, 20)

    def loss(s, method):
        return jnp.sum(jnp.sin(materialize(s, layout, method=method)) * weights)

    chex.assert_trees_all_close(jax.grad(loss)(storage, "strided_copy"),
                                jax.grad(loss)(storage, "structured"), rtol=1e-6)
    tangent = jnp.ones_like(storage)
    _, jvp_copy = jax.jvp(lambda s: loss(s, "strided_copy"), (storage,), (tangent,))
    _, jvp_xla = jax.jvp(lambda s: loss(s, "structured"), (storage,), (tangent,))
    chex.assert_trees_all_close(jvp_copy, jvp_xla, rtol=1e-6)
    # through the array layer, with a traced offset: the offset gets no gradient
    g = jax.grad(lambda s: jnp.sum(fs.as_strided(s, (24, 20), (1, 24), 3).contiguous().storage ** 2))(storage)
    read = oracle.element_indices(layout).reshape(-1)  # distinct: each read once
    want = np.zeros(500, np.float32)
    want[read] = 2 * np.asarray(storage)[read]
    chex.assert_trees_all_close(g, want, rtol=1e-6)


def test_auto_takes_the_handler_for_a_large_permute_and_compiles_to_one_custom_call():
    layout = Layout((512, 512), (1, 512))
    assert fs.read_plan(layout) == "strided_copy"
    hlo = jax.jit(lambda s: materialize(s, layout)).lower(jnp.zeros(512 * 512)).compile().as_text()
    assert hlo.count(" custom-call(") == 1 and "functional_strides_strided_copy" in hlo
    assert "conditional" not in hlo and "gather" not in hlo and "transpose" not in hlo


def test_auto_keeps_xla_where_it_is_as_fast():
    assert fs.read_plan(Layout((64, 64), (1, 64))) == "structured"  # small: the call costs more
    assert fs.read_plan(Layout((2048, 2048), (8192, 2))) == "structured"  # a strided slice
    assert fs.read_plan(Layout((2048, 2048), (0, 1))) == "structured"  # an expand
    assert fs.read_plan(Layout((511, 256), (64, 1))) == "row_gather"  # framed windows, < 2^17
    assert fs.read_plan(Layout((1024, 512), (1024, 1))) == "structured"  # rows of a plain slice


@pytest.mark.parametrize(("shape", "perm", "path"), [
    ((512, 4, 2, 2, 128), (0, 4, 1, 3, 2), "structured"),  # a last dim of 2 elements: tiles of 2 columns
    ((9, 5, 7, 64), (0, 2, 3, 1), "structured"),  # a last dim of 5
    ((29, 39, 31, 21, 23), (2, 3, 0, 1, 4), "structured"),  # 2^24 elements, rows of 23: the fresh rule too
    ((8, 2**20), (1, 0), "gather"),  # 2^23 elements, a last dim of 8: 8 far rows, one gather
    ((16, 2**14), (1, 0), "strided_copy"),  # a last dim of 16
    ((1131, 651, 64), (1, 0, 2), "strided_copy"),  # rows of 64
])
def test_auto_keeps_xla_for_permutes_of_short_rows(shape, perm, path):
    """A permute whose last dim runs fewer than ``COPY_TILE_MIN_COLS`` elements (tiles) or
    ``COPY_MIN_ROW`` (contiguous rows) stays with XLA's transpose at every size: the strided copy
    moves too little per tile or row there (``benchmarks/bench_permutes.py``)."""
    dense = Layout.contiguous(shape)
    layout = Layout(tuple(shape[p] for p in perm), tuple(dense.strides[p] for p in perm))
    assert fs.read_plan(layout) == path


@pytest.mark.sampled(3)
@pytest.mark.parametrize(("layout", "path"), [
    (Layout((4096, 4096), (0, 1)), "strided_copy"),  # a row expanded: 2^24 elements
    (Layout((4096, 4096), (1, 0)), "strided_copy"),  # a column expanded (fills)
    (Layout((2, 4096, 1024), (0, 1024, 1)), "strided_copy"),  # a block repeated
    (Layout((4096, 2048), (8192, 2)), "strided_copy"),  # every other element, 2^23 of them
    (Layout((4096, 4094), (4096, 1), 1), "strided_copy"),  # a slice of rows
    (Layout((2**23,), (-1,), 2**23 - 1), "strided_copy"),  # a vector reversed
    (Layout((2**24,), (1,), 5), "structured"),  # one contiguous run: XLA's slice
    (Layout((2**22, 4), (0, 1)), "structured"),  # rows of 4: a call per row
    (Layout((2048, 4094), (4096, 1), 1), "structured"),  # 2^23 - 2^12 elements: XLA's
], ids=["expand-row", "expand-col", "repeat", "every-other", "rows", "reversed", "run", "short-rows",
        "below"])
def test_auto_takes_the_handler_for_fresh_outputs(layout, path):
    """From ``COPY_FRESH_MIN_ELEMENTS`` output elements (32 MiB of float32, a fresh mapping of
    the allocator on every call) the handler, which advises its output to take 2 MiB pages,
    takes the slices and broadcasts XLA's ops would write; not one contiguous run (XLA's slice,
    which XLA may not even copy), nor a broadcast of short rows. The values are NumPy's."""
    assert fs.read_plan(layout) == path
    if layout.numel <= 2**23:
        storage = np.arange(layout.required_storage_size, dtype=np.float32) % 1000
        got = jax.jit(lambda s: materialize(s, layout))(jnp.asarray(storage))
        np.testing.assert_array_equal(np.asarray(got), numpy_read(storage, layout))


def test_auto_takes_the_handler_for_large_framed_windows():
    assert fs.read_plan(Layout((16381, 1024), (256, 1))) == "strided_copy"
    assert fs.read_plan(Layout((1024, 256), (64, 1))) == "strided_copy"
    assert fs.read_plan(Layout((8192, 32), (8, 1))) == "row_gather"  # rows of 32: a call per row


def test_sub_byte_dtypes_take_the_xla_path_or_refuse_the_forced_method():
    layout = Layout((512, 512), (1, 512))
    storage = jnp.arange(512 * 512).astype(jnp.int4)
    got = jax.jit(lambda s: materialize(s, layout))(storage)
    np.testing.assert_array_equal(np.asarray(got).astype(np.int8),
                                  oracle.materialize(np.asarray(storage).astype(np.int8), layout))
    with pytest.raises(LayoutError, match="strided_copy.*int4"):
        _copy(storage, layout)


def test_a_forced_copy_still_checks_bounds():
    with pytest.raises(LayoutError):
        _copy(jnp.arange(10.0), Layout((4, 4), (1, 4)))


def test_coalesced_keeps_the_row_major_order():
    assert coalesced((2, 3, 4), (12, 4, 1)) == ((24,), (1,))
    assert coalesced((2, 3, 4), (1, 9, 2)) == ((2, 3, 4), (1, 9, 2))
    assert coalesced((2, 3, 4), (1, 8, 2)) == ((2, 12), (1, 2))
    assert coalesced((4, 1, 5), (5, 0, 1)) == ((20,), (1,))
    assert coalesced((3, 4), (0, 0)) == ((12,), (0,))
    assert coalesced((3, 4), (-4, -1)) == ((12,), (-1,))


@pytest.mark.slow
def test_the_handler_can_be_switched_off():
    """``FUNCTIONAL_STRIDES_PURE_PYTHON=1`` at import: no handler loaded, XLA reads every view;
    ``fs.config.update("native_copy", True)`` then loads it and the next trace takes it."""
    code = ("import jax, jax.numpy as jnp, numpy as np\n"
            "import functional_strides as fs\n"
            "from functional_strides import Layout, materialize, read_plan\n"
            "from functional_strides._src.native import copy_kernel\n"
            "assert copy_kernel.native is None and fs.config.native_copy is False\n"
            "lay = Layout((512, 512), (1, 512))\n"
            "want = np.arange(512.0**2).reshape(512, 512).T\n"
            "got = np.asarray(jax.jit(lambda s: materialize(s, lay))(jnp.arange(512.0**2)))\n"
            "print(read_plan(lay), bool((got == want).all()))\n"
            "fs.config.update('native_copy', True)\n"
            "f = jax.jit(lambda s: materialize(s, lay))\n"
            "text = f.lower(jnp.arange(512.0**2)).as_text()\n"
            "got = np.asarray(f(jnp.arange(512.0**2)))\n"
            "print(read_plan(lay), copy_kernel.TARGET in text, bool((got == want).all()))")
    assert run_pure_python(code).split() == ["structured", "True", "strided_copy", "True", "True"]


# -- writes ---------------------------------------------------------------------------------

def _write(storage, layout, values, mode, overlap="error", donate=False):
    f = jax.jit(lambda s, v: fs.write(s, layout, v, mode=mode, overlap=overlap, method="strided_copy"),
                donate_argnums=0 if donate else ())
    return f(storage, values)


def _write_each(cases, mode, overlap="error"):
    """:func:`_write` of each ``(storage, layout, values)`` in ``cases``, all in one program
    (each write is its own call of the handler)."""
    layouts = [layout for _, layout, _ in cases]
    f = jax.jit(lambda ss, vs: [fs.write(s, lay, v, mode=mode, overlap=overlap, method="strided_copy")
                                for s, lay, v in zip(ss, layouts, vs, strict=True)])
    return f([jnp.asarray(s) for s, _, _ in cases], [jnp.asarray(v) for _, _, v in cases])


@given(layout=layouts(max_rank=4, negative=True).filter(lambda lay: lay.numel > 0),
       mode=st.sampled_from(["set", "add"]),
       dtype=st.sampled_from(["int8", "float16", "float32", "int32", "uint32", "complex64"]),
       slack=st.integers(0, 3))
def test_writes_match_the_oracle(layout, mode, dtype, slack):
    """Every layout, overlapping ones included (one thread, row-major order: the last
    element wins a set); "add" of dtypes the handler does not add is refused, unless the add
    folds its stride-0 contributions into the stored values first and sets the rest (which
    the handler does for every dtype)."""
    storage = (storage_for(layout, slack) % 89).astype(dtype)
    values = (np.arange(layout.numel).reshape(layout.shape) % 7 + 1).astype(dtype)
    folds = _folded_layout(layout, mode) is not None
    if mode == "add" and not kernel_module.supports_write(dtype, "add") and not folds:
        with pytest.raises(LayoutError, match="strided_copy"):
            _write(jnp.asarray(storage), layout, jnp.asarray(values), mode, overlap="last")
        return
    got = _write(jnp.asarray(storage), layout, jnp.asarray(values), mode, overlap="last")
    with np.errstate(over="ignore"):  # many contributions to one int8 slot wrap, as in PyTorch
        want = oracle.scatter(storage, layout, values, mode)
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("mode", ["set", "add"])
@pytest.mark.parametrize("layout", [
    Layout((70, 45), (1, 70)),  # tiles with edges
    Layout((64, 64), (-1, 64), 63),  # whole tiles, the running dim reversed
    Layout((4096,), (17,), 5),  # a column
    Layout((256, 512), (2048, 2)),  # every other element of every fourth row
    Layout((1024, 512), (1, 1024)),  # several chunks, over the threads
    Layout((100, 64), (16, 1)),  # overlapping windows: runs of slots
    Layout((100, 64), (-16, 1), 1584),  # windows backwards: one thread
    Layout((3, 500), (0, 1)),  # an expanded row: one thread
], ids=["tile-edges", "tile-rev", "column", "strided", "chunks", "overlap-rows", "overlap-rev", "expand"])
def test_each_path_of_the_write_handler(layout, mode):
    storage = np.arange(layout.required_storage_size + 7, dtype=np.float32)
    values = np.random.default_rng(0).standard_normal(layout.shape).astype(np.float32)
    got = _write(jnp.asarray(storage), layout, jnp.asarray(values), mode, overlap="last")
    want = oracle.scatter(storage, layout, values, mode)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)  # sums in another order


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int64"])
@pytest.mark.parametrize("length", [1, 3, 7, 8, 9, 16, 31, 33, 64, 67])
def test_additions_over_runs_of_every_length(length, dtype):
    """The additions through a view's contiguous runs (an AVX2 loop where the CPU has it, the
    SSE2 one elsewhere): every run length about the vector widths, the integers wrapping as
    two's complement does."""
    if dtype in ("float64", "int64") and not jax.config.jax_enable_x64:
        dtype = {"float64": "float32", "int64": "int32"}[dtype]
    layout = Layout((40, length), (length + 3, 1), 2)
    top = np.iinfo(dtype).max if dtype.startswith("int") else 1000
    storage = np.full(layout.required_storage_size + 4, top, dtype=dtype)
    values = (np.arange(layout.numel).reshape(layout.shape) % 11 + 1).astype(dtype)
    with np.errstate(over="ignore"):
        want = oracle.scatter(storage, layout, values, "add")
    got = _write(jnp.asarray(storage), layout, jnp.asarray(values), "add", overlap="last")
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.sampled(4)
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int64"])
@pytest.mark.parametrize("length", [2, 3, 8, 15, 16, 17, 31, 32, 33, 64, 67, 1024])
def test_additions_through_overlapping_windows_of_every_length(length, dtype):
    """Overlap-add (windows of ``length`` slots, hop ``length // 2`` and 1): the additions
    take the AVX-512 loop where the CPU has it (AVX2, else SSE2, elsewhere); every window
    length about the vector widths, the integers wrapping as two's complement does, every
    slot's additions in row-major order (exact here: integers, and floats of small values)."""
    if dtype in ("float64", "int64") and not jax.config.jax_enable_x64:
        dtype = {"float64": "float32", "int64": "int32"}[dtype]
    top = np.iinfo(dtype).max if dtype.startswith("int") else 1000
    for step in sorted({max(1, length // 2), 1}):
        layout = Layout((300 if length < 100 else 40, length), (step, 1), 3)
        storage = np.full(layout.required_storage_size + 5, top, dtype=dtype)
        values = (np.arange(layout.numel).reshape(layout.shape) % 13 + 1).astype(dtype)
        with np.errstate(over="ignore"):
            want = oracle.scatter(storage, layout, values, "add")
        got = _write(jnp.asarray(storage), layout, jnp.asarray(values), "add", overlap="last")
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"step {step}")


@pytest.mark.sampled(4)
@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "int32", "complex64"])
@pytest.mark.parametrize("length", [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 2049])
def test_sets_of_every_other_slot_keep_the_slots_between(length, dtype):
    """A set through a stride-2 last dim with every stride even (``x[::2, ::2] = v``; 4- and
    8-byte elements blend groups into whole loads of the view where the CPU has AVX2): every
    length about the group widths, rows forwards and backwards, a storage that ends at the
    view's last element; the slots between keep their values, and a view that fills them
    (an odd outer stride: two blocks interleave, on different threads) is set element by
    element."""
    rng = np.random.default_rng(length)
    row = 2 * length + 6
    cases = []
    for layout in (Layout((5, length), (row, 2), 1),  # the storage ends at the last element
                   Layout((4, length), (-row, 2), 3 * row + 2),
                   Layout((3, 2, length), (4 * length + 8, 2 * length + 4, 2)),
                   Layout((2, length), (1, 2)),  # interleaved: the view fills the gaps
                   Layout((length,), (-2,), 2 * length - 2)):
        storage = rng.integers(0, 100, layout.required_storage_size).astype(dtype)
        cases.append((storage, layout, rng.integers(100, 200, layout.shape).astype(dtype)))
    for got, (storage, layout, values) in zip(_write_each(cases, "set"), cases, strict=True):
        np.testing.assert_array_equal(np.asarray(got), oracle.scatter(storage, layout, values, "set"),
                                      err_msg=str(layout))


@pytest.mark.sampled(4)
@pytest.mark.parametrize("stores", ["cached", "streaming"])
@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "complex64"])  # 1, 2, 4, 8 bytes
@pytest.mark.parametrize("length", [1, 3, 5, 8, 9, 16, 17, 32, 33, 2049])
def test_reads_of_every_other_slot(length, dtype, stores):
    """A read through a stride-2 last dim (``x[::2]``, ``x[::2, ::2]``; 1- to 8-byte elements
    picked out of whole loads of the view where the CPU has AVX2, streamed from the first
    aligned group of the output): every length about the group widths, rows forwards and
    backwards, a storage that ends at the view's last element, stores cached and streamed,
    elements of every bit pattern (compared as bytes)."""
    rng = np.random.default_rng(length)
    row = 2 * length + 6
    for layout in (Layout((5, length), (row, 2), 1),  # the storage ends at the last element
                   Layout((4, length), (-row, 2), 3 * row + 2),
                   Layout((3, 2, length), (4 * length + 8, 2 * length + 4, 2), 3),
                   Layout((length,), (2,), 1),
                   Layout((length,), (-2,), 2 * length - 2)):
        itemsize = np.dtype(dtype).itemsize  # every bit pattern, high bits included
        storage = rng.integers(0, 256, layout.required_storage_size * itemsize, dtype=np.uint8).view(dtype)
        got = jax.jit(lambda s, lay=layout: ffi_read(s, jnp.int32(lay.offset), lay.shape, lay.strides,
                                                  stores=stores))(jnp.asarray(storage))
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8),
                                      oracle.materialize(storage, layout).view(np.uint8), err_msg=str(layout))


@pytest.mark.parametrize("layout", [Layout((512, 2048), (8192, 2)),  # many chunks over the threads
                                    Layout((2, 300000), (1, 2))],  # interleaved halves over the threads
                         ids=["every-other", "interleaved"])
def test_large_sets_of_every_other_slot(layout):
    storage = np.arange(layout.required_storage_size, dtype=np.float32)
    values = -np.arange(1, layout.numel + 1, dtype=np.float32).reshape(layout.shape)
    got = _write(jnp.asarray(storage), layout, jnp.asarray(values), "set", donate=True)
    np.testing.assert_array_equal(np.asarray(got), numpy_write(storage, layout, values, "set"))


@given(count=st.integers(1, 300), length=st.integers(2, 1100), step=st.integers(1, 1100),
       offset=st.integers(0, 9), mode=st.sampled_from(["set", "add"]),
       dtype=st.sampled_from(["float32", "int32", "uint8"]))
def test_overlapping_windows_are_written_in_row_major_order(count, length, step, offset, mode, dtype):
    """Windows (count, length):(step, 1) that overlap are split over threads by runs of storage
    slots (a slot in w windows costs w elements, so long windows a step of 1 apart run in
    runs of some 60 slots, many chunks): bit for bit the serial loop's result (the last
    window wins a set, a slot's additions arrive in row-major order)."""
    if mode == "add" and dtype == "uint8":
        mode = "set"  # the handler adds 32- and 64-bit elements only
    step = min(step, length - 1)
    layout = Layout((count, length), (step, 1), offset)
    rng = np.random.default_rng(count * 7919 + length)
    storage = (rng.standard_normal(layout.required_storage_size + 5) * 50).astype(dtype)
    values = (rng.standard_normal(layout.shape) * 50).astype(dtype)
    got = _write(jnp.asarray(storage), layout, jnp.asarray(values), mode, overlap="last")
    np.testing.assert_array_equal(np.asarray(got), oracle.scatter(storage, layout, values, mode))


@pytest.mark.sampled(4)
@pytest.mark.parametrize("windows", [2, 3, 4, 5])
@pytest.mark.parametrize("step", [1, 5, 16, 64, 256])
def test_overlap_add_adds_every_slot_in_one_pass_in_row_major_order(windows, step):
    """Windows whose hop divides them into 2 to 4 parts are added a run of ``step`` slots at a
    time, all the windows over a run in one pass (5 parts: the window loop); the runs at the
    ends of the view and of the chunks (tens of thousands of slots each) take the window loop.
    Bit for bit the serial loop's sums, random floats included; a hop that does not divide the
    window takes the window loop too."""
    count = max(3, 200_000 // (step * windows))
    cases = [((count, windows * step), (step, 1), 3, "float32"),
             ((count, windows * step), (step, 1), 0, "int32"),
             ((count // 2, windows * step + 1), (step, 1), 1, "float32")]  # the hop does not divide it
    writes = []
    for shape, strides, offset, dtype in cases:
        layout = Layout(shape, strides, offset)
        rng = np.random.default_rng(step * 31 + windows)
        storage = (rng.standard_normal(layout.required_storage_size + 7) * 50).astype(dtype)
        writes.append((storage, layout, (rng.standard_normal(layout.shape) * 50).astype(dtype)))
    got = _write_each(writes, "add", overlap="last")
    for out, (storage, layout, values) in zip(got, writes, strict=True):
        np.testing.assert_array_equal(np.asarray(out), numpy_write(storage, layout, values, "add"),
                                      err_msg=f"{layout} {storage.dtype}")


def test_overlap_add_in_one_pass_of_eight_byte_elements():
    with jax.enable_x64(True):
        for dtype in ("float64", "int64"):
            layout = Layout((5000, 64), (16, 1), 2)
            rng = np.random.default_rng(1)
            storage = (rng.standard_normal(layout.required_storage_size + 3) * 50).astype(dtype)
            values = (rng.standard_normal(layout.shape) * 50).astype(dtype)
            got = _write(jnp.asarray(storage), layout, jnp.asarray(values), "add", overlap="last")
            np.testing.assert_array_equal(np.asarray(got), oracle.scatter(storage, layout, values, "add"),
                                          err_msg=dtype)


def test_auto_writes_overlapping_windows_with_the_handler():
    frames = Layout((16381, 1024), (256, 1))
    assert fs.write_plan(frames, 4194304, mode="add") == "strided_copy"
    assert fs.write_plan(Layout((4096, 4), (1, 1)), 4099, mode="add") == "strided_copy"
    assert fs.write_plan(Layout((4096, 2), (1, 1)), 4097, mode="add") != "strided_copy"  # a call per pair
    assert fs.write_plan(Layout((100, 64), (-16, 1), 1584), 1648, mode="add") != "strided_copy"  # one thread


SHARD_MAP = textwrap.dedent(
    """
    import os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, PartitionSpec as P
    import functional_strides as fs
    from functional_strides import Layout, oracle

    mesh = Mesh(np.array(jax.devices()), ("x",))
    frames, t = Layout((400, 32), (8, 1), 4), Layout((40, 32), (1, 40))
    storage = np.arange(2 * 3236, dtype=np.float32).reshape(2, 3236) % 97
    values = np.arange(2 * 12800, dtype=np.float32).reshape(2, 400, 32) % 13

    def run(body, in_specs, *args):
        f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=P("x")))
        assert "functional_strides_strided" in f.lower(*args).compile().as_text()
        return np.asarray(f(*args))

    # storage and values vary over x; the storage replicated, the values varying
    got = run(lambda s, v: fs.write(s[0], frames, v[0], mode="add")[None], (P("x"), P("x")), storage, values)
    for i in range(2):
        np.testing.assert_array_equal(got[i], oracle.scatter(storage[i], frames, values[i], "add"))
    got = run(lambda s, v: fs.write(s, t, v[0, :40], mode="set")[None], (P(), P("x")), storage[0], values)
    for i in range(2):
        np.testing.assert_array_equal(got[i], oracle.scatter(storage[0], t, values[i, :40], "set"))
    # reads: windows and a transpose
    got = run(lambda s: fs.materialize(s[0], Layout((8192, 64), (16, 1)))[None], (P("x"),),
              np.arange(2 * 131120, dtype=np.float32).reshape(2, 131120))
    np.testing.assert_array_equal(got[1], oracle.materialize(np.arange(131120, 262240, dtype=np.float32),
                                                             Layout((8192, 64), (16, 1))))
    got = run(lambda s: fs.materialize(s[0], t, method="strided_copy")[None], (P("x"),), storage)
    np.testing.assert_array_equal(got[1], oracle.materialize(storage[1], t))
    print("OK")
    """
)


@pytest.mark.slow
def test_the_handlers_run_inside_shard_map():
    """Inside ``jax.shard_map`` (which checks what varies over which mesh axis) the custom
    call takes operands that vary alike and returns what they vary over, as XLA's ops do."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", SHARD_MAP], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.split() == ["OK"], proc.stdout + proc.stderr


# -- the split over XLA's pool ----------------------------------------------------------------

def test_pool_tasks_add_in_the_calling_threads_floating_point_environment():
    """The tasks on XLA's pool that share a call's chunks take on the calling thread's
    floating-point environment: XLA:CPU runs with subnormal floats flushed to zero, so an
    addition of subnormals through the handler (16 MiB: chunks on every thread) gives the
    zeros of XLA's own scatter on every chunk."""
    layout = Layout((4096, 1024), (1024, 1))
    tiny = np.float32(1e-39)
    storage = np.full(layout.required_storage_size, tiny, np.float32)
    values = np.full(layout.shape, tiny, np.float32)
    want = jax.jit(lambda s, v: fs.write(s, layout, v, mode="add", method="scatter"))(storage, values)
    for _ in range(3):
        got = _write(jnp.asarray(storage), layout, jnp.asarray(values), "add")
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.slow
def test_calls_from_eight_threads_at_once():
    """Eight Python threads, each calling its own jitted read and a shared jitted write through
    the kernel at once (their parts on XLA's one pool, side by side): every result is the
    oracle's."""
    from concurrent.futures import ThreadPoolExecutor

    layouts = [Layout((1024, 1024), (1, 1024)), Layout((2045, 1024), (256, 1)),
               Layout((512, 1024), (4096, 2)), Layout((16, 8, 256, 64), (131072, 64, 512, 1)),
               Layout((1024, 512), (1, 1024)), Layout((4093, 256), (256, 1), 7),
               Layout((2048, 512), (-1, 2048), 2047), Layout((64, 64, 256), (256, 16384, 1))]
    cases = []
    for k, layout in enumerate(layouts):
        storage = np.arange(layout.required_storage_size, dtype=np.float32) * (k + 1)
        cases.append((layout, storage, oracle.materialize(storage, layout),
                      jax.jit(lambda s, lay=layout: materialize(s, lay, method="strided_copy"))))
    values = -np.ones(layouts[0].shape, np.float32)
    write = jax.jit(lambda s, v: fs.write(s, layouts[0], v, mode="add", method="strided_copy"))
    want_write = oracle.scatter(cases[0][1], layouts[0], values, "add")
    for _, storage, _, read in cases:
        read(jnp.asarray(storage)).block_until_ready()

    def work(k):
        layout, storage, want, read = cases[k % len(cases)]
        for _ in range(8):
            np.testing.assert_array_equal(np.asarray(read(jnp.asarray(storage))).reshape(want.shape), want)
            np.testing.assert_array_equal(np.asarray(write(jnp.asarray(cases[0][1]), jnp.asarray(values))),
                                          want_write)
        return k

    with ThreadPoolExecutor(8) as pool:
        assert sorted(pool.map(work, range(8))) == list(range(8))


def test_a_donated_write_updates_the_storage_in_place():
    layout = Layout((1024,), (1024,), 3)  # one column of a 1024x1024 storage
    storage = jnp.arange(1024 * 1024.0)
    f = jax.jit(lambda s, v: fs.write(s, layout, v), donate_argnums=0)
    compiled = f.lower(storage, jnp.ones(1024)).compile()
    text = compiled.as_text()
    assert "functional_strides_strided_write" in text and " copy(" not in text
    assert compiled.memory_analysis().temp_size_in_bytes < 4096  # no second storage
    got = f(storage, jnp.ones(1024))
    want = np.arange(1024 * 1024.0, dtype=np.float32)
    want[3::1024] = 1.0
    np.testing.assert_array_equal(np.asarray(got), want)


def test_writes_with_traced_offsets_clamp_as_the_xla_path():
    storage = jnp.arange(3000.0)
    layout = Layout((30, 40), (1, 30))
    values = jnp.arange(1200.0).reshape(30, 40)
    def put(method):
        return jax.jit(lambda s, v, o: fs.write(s, Layout(layout.shape, layout.strides, o), v, mode="add",
                                                method=method))

    for offset in (0, 11, 1800, 1801, 9000, -4):  # past the end and below 0: clamped
        got, want = put("strided_copy")(storage, values, offset), put("scatter")(storage, values, offset)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=str(offset))


def test_writes_vmap_over_storages_values_and_offsets():
    """Under ``vmap`` the XLA write runs, vmapped."""
    layout = Layout((20, 30), (1, 20))
    storages = jnp.arange(4 * 700.0).reshape(4, 700)
    values = jnp.arange(4 * 600.0).reshape(4, 20, 30)
    offsets = jnp.arange(4) * 25

    def put(s, v, o):
        return fs.write(s, Layout(layout.shape, layout.strides, o), v, method="strided_copy")

    got = jax.vmap(put)(storages, values, offsets)
    want = [oracle.scatter(np.asarray(s), Layout(layout.shape, layout.strides, int(o)), np.asarray(v))
            for s, v, o in zip(storages, values, offsets, strict=True)]
    np.testing.assert_array_equal(np.asarray(got), np.stack(want))
    one = jax.vmap(put, (None, 0, None))(storages[0], values, 5)  # one storage, several values
    np.testing.assert_array_equal(np.asarray(one), np.stack(
        [oracle.scatter(np.asarray(storages[0]), Layout(layout.shape, layout.strides, 5), np.asarray(v))
         for v in values]))


@pytest.mark.parametrize("mode", ["set", "add"])
def test_write_derivatives_are_those_of_the_xla_write(mode):
    layout = Layout((24, 20), (1, 24), 3)
    storage = jnp.linspace(-1.0, 1.0, 500)
    values = jnp.sin(jnp.arange(480.0)).reshape(24, 20)

    def loss(s, v, method):
        return jnp.sum(jnp.cos(fs.write(s, layout, v, mode=mode, method=method)) * jnp.arange(500.0))

    for argnums in (0, 1):
        chex.assert_trees_all_close(jax.grad(loss, argnums)(storage, values, "strided_copy"),
                                    jax.grad(loss, argnums)(storage, values, "scatter"), rtol=1e-5)
    t = (jnp.ones_like(storage), jnp.ones_like(values))
    chex.assert_trees_all_close(jax.jvp(lambda s, v: loss(s, v, "strided_copy"), (storage, values), t),
                                jax.jvp(lambda s, v: loss(s, v, "scatter"), (storage, values), t), rtol=1e-5)


def test_auto_writes_through_the_handler_except_runs_and_other_modes():
    n = 4096 * 4096
    assert fs.write_plan(Layout((4096,), (4096,), 7), n) == "strided_copy"  # a column
    assert fs.write_plan(Layout((2048, 2048), (8192, 2)), n, mode="add") == "strided_copy"
    assert fs.write_plan(Layout((4096,), (1,), 7), n) == "block"  # one contiguous run
    assert fs.write_plan(Layout((2048, 2048), (8192, 2)), n, mode="mul") != "strided_copy"
    assert fs.write_plan(Layout((8, 8), (1, 8)), 64) != "strided_copy"  # small: XLA's ops


def test_offsets_at_the_ends_of_int32_clamp_alike_on_every_path():
    """A traced int32 offset within |below| of its minimum (a reversed dim): every read and
    write path, with and without ``vmap``, clamps it to the storage's start (no wrap-around)."""
    storage = jnp.arange(100.0)
    shape, strides = (4,), (-1,)
    for offset, low in ((jnp.int32(-2**31), 0), (jnp.int32(-2**31 + 2), 0), (jnp.int32(2**31 - 1), 96)):
        want = oracle.materialize(np.asarray(storage), Layout(shape, strides, low + 3))
        for method in ("strided_copy", "structured", "gather"):
            read = jax.jit(lambda s, o, m=method: materialize(s, Layout(shape, strides, o), method=m))
            got = read(storage, offset)
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{method} {offset}")
        batched = jax.vmap(lambda o: materialize(storage, Layout(shape, strides, o), method="strided_copy"))(
            jnp.stack([offset]))
        np.testing.assert_array_equal(np.asarray(batched)[0], want)
        slots = [np.flatnonzero(np.asarray(jax.jit(
            lambda s, o, m=m: fs.write(s, Layout(shape, strides, o), -1.0, method=m))(storage, offset)) == -1)
            for m in ("strided_copy", "scatter")]
        assert slots[0].tolist() == slots[1].tolist() == list(range(low, low + 4))


@pytest.mark.parametrize("layout", [Layout((70, 45), (1, 70)), Layout((64, 64), (-1, 64), 63),
                                    Layout((3, 5, 7), (1, 21, 3), 2)], ids=["tiles", "tiles-rev", "rows"])
def test_eight_and_sixteen_byte_elements_under_x64(layout):
    """float64 (8 bytes: the 2x2 register transposes, and "add") and complex128 (16 bytes)."""
    with jax.enable_x64(True):
        for dtype in ("float64", "complex128", "int64"):
            storage = (np.arange(layout.required_storage_size + 2) % 53 - 20).astype(dtype)
            if dtype == "complex128":
                storage = storage + 1j * storage[::-1]
            got = _copy(jnp.asarray(storage), layout)
            np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout), err_msg=dtype)
            values = (np.arange(layout.numel).reshape(layout.shape) % 7).astype(dtype)
            for mode in ("set", "add") if dtype != "complex128" else ("set",):
                written = _write(jnp.asarray(storage), layout, jnp.asarray(values), mode)
                want = oracle.scatter(storage, layout, values, mode)
                np.testing.assert_array_equal(np.asarray(written), want, err_msg=f"{dtype} {mode}")
