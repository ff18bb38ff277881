"""Reads and writes through views of a ``jax.Ref`` (``_src/lowering/refs.py``): every path forced
against the oracle, with static and traced offsets, eagerly and under ``jit``; the plan rule;
and the property the paths exist for: the ref is updated in place, with temporary memory
bounded by the written window (``compiled.memory_analysis()``)."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples
from hypothesis import HealthCheck, assume, given
from jax import lax
from strategies import layouts

import functional_strides as fs
from functional_strides import Layout, LayoutError
from functional_strides._src.lowering import refs
from functional_strides._src.native import copy_kernel

WRITE_PATHS = ("slice", "strided_copy", "row_scatter", "structured", "scatter")


def _set(old, values):
    return values


def _add(old, values):
    return old + values


def _storage(layout: Layout, slack: int = 3) -> np.ndarray:
    return (np.arange(layout.required_storage_size + slack) * 10).astype(np.float32)


def _values(layout: Layout) -> np.ndarray:
    return (np.arange(layout.numel) + 1).astype(np.float32).reshape(layout.shape)


def _applies(path: str, layout: Layout, n: int, traced: bool) -> bool:
    local = Layout(layout.shape, layout.strides, np.asarray(-layout.low_reach, np.int32))  # not static
    probe = local if traced else layout
    try:
        refs.plan(probe, n, np.float32, method=path)
    except LayoutError:
        return False
    return True


def _write(storage, layout, values, *, traced, transform, method):
    """The ref's value after ``update`` of ``values`` through ``layout``: the offset a jit
    argument (traced) or a Python int (static), the call eager or jitted."""
    r = jax.new_ref(jnp.asarray(storage))
    offset = int(layout.offset)

    def run(ref, v, k):
        lay = Layout(layout.shape, layout.strides, k if traced else offset)
        refs.update(ref, lay, _set, (v,), reads_old=False, method=method)

    if transform == "jit":
        jax.jit(run)(r, jnp.asarray(values), jnp.int32(offset))
    else:
        run(r, jnp.asarray(values), np.int32(offset) if traced else offset)
    return np.asarray(r[...])


@pytest.mark.parametrize("transform", ["jit", "eager"])
@pytest.mark.parametrize("traced", [True, False], ids=["traced-offset", "static-offset"])
@pytest.mark.parametrize("method", ["auto", *WRITE_PATHS])
@examples(9, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(layout=layouts(max_rank=3, negative=True, kinds=("contiguous", "permuted", "sliced", "random")))
def test_every_write_path_matches_the_oracle(transform, traced, method, layout):
    """Each path, forced where it applies, writes exactly the view's slots (the oracle's
    ``scatter``), with the offset static or traced, eagerly or inside ``jit``."""
    assume(not layout.has_internal_overlap())
    storage = _storage(layout)
    if method != "auto":
        # an eager call passes the offset to its program: planned as a traced one
        assume(_applies(method, layout, storage.size, traced or transform == "eager"))
    values = _values(layout)
    got = _write(storage, layout, values, traced=traced, transform=transform, method=method)
    np.testing.assert_array_equal(got, fs.oracle.scatter(storage, layout, values))


@pytest.mark.parametrize("traced", [True, False], ids=["traced-offset", "static-offset"])
@examples(13, deadline=None)
@given(layout=layouts(max_rank=3, negative=True))
def test_read_value_matches_the_oracle(traced, layout):
    """Reads of any view (overlapping and expanded ones included) inside ``jit``: the read
    table for a static offset, a slice, the strided copy or a gather for a traced one."""
    storage = _storage(layout)
    offset = int(layout.offset)

    @jax.jit
    def read(r, k):
        return refs.read_value(r[...], Layout(layout.shape, layout.strides, k if traced else offset))

    got = read(jax.new_ref(jnp.asarray(storage)), jnp.int32(offset))
    np.testing.assert_array_equal(np.asarray(got), fs.oracle.materialize(storage, layout))
    eager = refs.read(jax.new_ref(jnp.asarray(storage)), layout)
    np.testing.assert_array_equal(np.asarray(eager), fs.oracle.materialize(storage, layout))


def test_traced_offset_is_clamped_as_reads_and_functional_writes_clamp():
    """A traced offset past the end puts the view at the last offset that fits, as
    ``lax.dynamic_slice`` and the functional write clamp it."""
    lay = Layout((2, 2), (3, 1), 0)
    storage = np.arange(10, dtype=np.float32)

    @jax.jit
    def f(r, k, v):
        view = Layout(lay.shape, lay.strides, k)
        refs.update(r, view, _set, (v,), reads_old=False)
        return refs.read_value(r[...], view)

    for method_offset in (7, 100):
        r = jax.new_ref(jnp.asarray(storage))
        got = f(r, jnp.int32(method_offset), -jnp.ones((2, 2)))
        expected = jax.jit(lambda s, k: fs.write(s, Layout(lay.shape, lay.strides, k), -jnp.ones((2, 2))))(
            jnp.asarray(storage), jnp.int32(method_offset))
        np.testing.assert_array_equal(np.asarray(r[...]), np.asarray(expected))
        np.testing.assert_array_equal(np.asarray(got), -np.ones((2, 2)))


def test_plan_rule():
    n = 2**22
    assert refs.plan(Layout((0, 3), (1, 1)), n) == "empty"
    assert refs.plan(Layout((16,), (1,), 5), n) == "slice"
    assert refs.plan(Layout((4, 4), (1, 4), 5), n) == "slice"  # a transposed run is one run
    assert refs.plan(Layout((16,), (2048,)), n) == "scatter"
    assert refs.plan(Layout((8, 64), (1024, 1)), n) == "row_scatter"
    assert refs.plan(Layout((8, 64), (1024, 1), jnp.int32(3)), n) == "row_scatter"
    # a transposed half of the storage: the write table's "structured" for a static offset
    # (its "strided_copy" on CPU), never with a traced one
    half = Layout((1024, 2048), (1, 2048))
    assert refs.plan(half, 2048 * 2048, copy_kernel=False) == "structured"
    traced = Layout((1024, 2048), (1, 2048), jnp.int32(0))
    assert refs.plan(traced, 2048 * 2048, copy_kernel=False) == "row_scatter"  # rows of 1024
    # the whole storage transposed is one run: values transposed into one slice, or the
    # strided write where it is built
    whole = Layout((2048, 2048), (1, 2048))
    assert refs.plan(whole, 2048 * 2048, copy_kernel=False) == "slice"
    if copy_kernel.native is not None:
        assert refs.plan(half, 2048 * 2048) == refs.plan(whole, 2048 * 2048) == "strided_copy"


@pytest.mark.parametrize(("layout", "method", "match"), [
    (Layout((4,), (2,)), "slice", "does not apply"),
    (Layout((4, 4), (8, 1), np.zeros((), np.int32)), "structured", "offset traced"),
    (Layout((4,), (2,)), "row_scatter", "does not apply"),
    (Layout((4,), (1,)), "bad", "method"),
], ids=["slice-strided", "structured-traced", "rows-without-rows", "unknown"])
def test_forced_method_that_does_not_apply_is_refused(layout, method, match):
    with pytest.raises(LayoutError, match=match):
        refs.plan(layout, 64, method=method)


def test_a_view_longer_than_the_ref_is_refused():
    with pytest.raises(fs.StorageError, match="spans 11 storage elements"):
        refs.plan(Layout((11,), (1,), jnp.int32(0)), 10)
    with pytest.raises(fs.StorageError):
        refs.update(jax.new_ref(jnp.zeros(10)), Layout((4,), (3,), 2), _set, (jnp.ones(4),), reads_old=False)


# -- in place: memory bounded by the written window -----------------------------------------------
N = 2**20  # a 4 MiB float32 ref: a copy of it would dwarf every window below

WINDOWS = {  # name: (shape, strides) of views of the N-element ref, written at a traced offset
    "contiguous": ((16,), (1,)),
    "column": ((64,), (1024,)),
    "rows": ((16, 256), (1024, 1)),
    "kv_select": ((2, 4, 64), (N // 2, N // 8, 1)),
    "transpose": ((128, 128), (1, 1024)),
}


def _memory(fn, *args):
    compiled = jax.jit(fn).lower(*args).compile()
    return compiled.memory_analysis()


def _bound(shape) -> int:
    """Temporary bytes allowed for a write of ``shape``: the values, their indices and the old
    values, each at most 8 bytes an element, and a little more."""
    return 3 * 8 * int(np.prod(shape)) + 4096


@pytest.mark.sampled(4)
@pytest.mark.parametrize("method", ["auto", *WRITE_PATHS])
@pytest.mark.parametrize("context", ["jit", "fori_loop", "scan"])
@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_writes_are_in_place(name, context, method):
    """Writes at a traced offset under ``jit``, ``fori_loop`` and ``scan``, read-modify-write
    included: the ref is aliased (no output buffer of its own) and the temporaries stay
    within the window, on every path that applies."""
    shape, strides = WINDOWS[name]
    if method != "auto" and not _applies(method, Layout(shape, strides), N, traced=True):
        pytest.skip(f"{method} does not apply to {name}")
    values = jnp.ones(shape, jnp.float32)

    def write(ref, t, v):
        refs.update(ref, Layout(shape, strides, t), _add, (v,), method=method)

    if context == "jit":
        fn = write
    elif context == "fori_loop":
        def fn(ref, t, v):
            lax.fori_loop(0, 4, lambda i, c: (write(ref, t + i, v), c)[1], 0)
    else:
        def fn(ref, t, v):
            lax.scan(lambda c, i: (write(ref, t + i, v), (c, None))[1], 0, jnp.arange(4))

    m = _memory(fn, jax.new_ref(jnp.zeros(N)), jnp.int32(3), values)
    assert m.alias_size_in_bytes == 4 * N, m
    assert m.temp_size_in_bytes <= _bound(shape), (m.temp_size_in_bytes, _bound(shape))


def test_static_offset_writes_are_in_place_and_two_of_them_too():
    """Two writes of one program through views with static offsets (a transposed block and a
    row block): XLA keeps them in place (no N-D ``dynamic_update_slice`` of the reshaped
    storage, which XLA copies once a program holds two)."""
    a, b = Layout((32, 32), (1, 1024), 5), Layout((8, 512), (1024, 1), 70000)

    def fn(ref):
        refs.update(ref, a, _add, (jnp.ones(a.shape),))
        refs.update(ref, b, _set, (jnp.ones(b.shape),), reads_old=False)

    m = _memory(fn, jax.new_ref(jnp.zeros(N)))
    assert m.alias_size_in_bytes == 4 * N
    assert m.temp_size_in_bytes <= _bound(b.shape)


def test_eager_writes_run_one_program_per_layout_in_place(monkeypatch):
    """Outside a trace a write calls the program compiled for its shape and strides: a new
    offset is an argument (traced once, no compile), and the program updates the ref in place
    (aliased, temporaries within the window): no copy of the storage per write."""
    ref = jax.new_ref(jnp.zeros(N))
    pointer = ref.unsafe_buffer_pointer()
    shape, strides = WINDOWS["column"]
    traces = []
    traced = refs._update_traced
    monkeypatch.setattr(refs, "_update_traced", lambda *a: (traces.append(a[1]), traced(*a))[1])
    refs.clear_compiled()
    for t in range(5):
        refs.update(ref, Layout(shape, strides, t), _set, (jnp.full(shape, float(t + 1)),), reads_old=False)
    assert len(traces) == 1
    assert ref.unsafe_buffer_pointer() == pointer
    expected = np.zeros(N, np.float32)
    for t in range(5):
        expected[t + 1024 * np.arange(64)] = t + 1
    np.testing.assert_array_equal(np.asarray(ref[...]), expected)
    m = refs._eager_update.lower(ref, np.int32(0), (jnp.ones(shape),), shape=shape, strides=strides,
                                 fn=_set, reads_old=False, method="auto").compile().memory_analysis()
    assert m.alias_size_in_bytes == 4 * N and m.temp_size_in_bytes <= _bound(shape)


def test_eager_reads_read_only_the_view():
    ref = jax.new_ref(jnp.arange(N, dtype=jnp.float32))
    got = refs.read(ref, Layout((3, 2), (1024, 1), 7))
    np.testing.assert_array_equal(np.asarray(got), [[7, 8], [1031, 1032], [2055, 2056]])
    m = refs._eager_read.lower(ref, np.int32(0), shape=(3, 2), strides=(1024, 1)).compile().memory_analysis()
    assert m.temp_size_in_bytes <= _bound((3, 2))
    with pytest.raises(fs.StorageError, match=re.escape("read")):
        refs.read(ref, Layout((3,), (1,), N - 2))
