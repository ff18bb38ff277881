"""The plans of reads and writes of a sharded storage (pure planning, for 8 devices on a
1-device mesh): the strategy each view of the catalogue takes, the halos against the
oracle's storage indices, and the permutes' grids against NumPy's transposes."""

import math

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax.sharding import AxisType, Mesh
from jax.sharding import PartitionSpec as P

import functional_strides as fs
from functional_strides import Layout, oracle, sharded, views
from functional_strides._src.sharding import plans

N = 2**20
MESH = Mesh(np.array(jax.devices()[:1]), ("x",))
PART = sharded.Partition(MESH, "x", 8)
SIGNAL = Layout.contiguous((N,))
MATRIX = Layout.contiguous((1024, 1024))
FRAMES = views.unfold(SIGNAL, 0, 1024, 256)          # 4093 frames: 8 does not divide them
HEADS = views.permute(Layout.contiguous((4, 512, 8, 64)), (0, 2, 1, 3))

#: view -> (read: strategy, out spec, padded), (contiguous(): strategy, padded), (add, set with
#: overlap="last") strategies; an overlapping set of padded rows would let a padding row win: partitioner
CATALOGUE = {
    "frames 4096": (views.unfold(Layout.contiguous((N + 768,)), 0, 1024, 256), N + 768,
                    ("halo", P("x"), 0), ("halo", 0), ("halo", "halo")),
    "frames 4093": (FRAMES, N, ("halo", P(None, "x"), 3), ("halo", 3), ("halo", "partitioner")),
    "frames 4088": (views.getitem(FRAMES, slice(0, 4088)), N, ("halo", P("x"), 0), ("halo", 0),
                    ("halo", "halo")),
    "transpose": (views.t(MATRIX), N, ("all_to_all", P("x"), 0), ("all_to_all", 0),
                  ("all_to_all", "all_to_all")),
    "heads first": (HEADS, N, ("all_to_all", P(None, "x"), 0), ("exchange", 0), ("exchange", "exchange")),
    "slice": (views.getitem(MATRIX, (slice(100, 900, 2), slice(3, 500))), N, ("halo", P("x"), 0),
              ("halo", 0), ("halo", "halo")),
    "column": (views.select(MATRIX, 1, 7), N, ("local", P("x"), 0), ("local", 0), ("local", "local")),
    "select": (views.select(views.getitem(FRAMES, slice(0, 4088)), 1, 5), N, ("halo", P("x"), 0),
               ("halo", 0), ("halo", "halo")),
    "expand a column": (views.expand(views.getitem(MATRIX, (slice(None), slice(0, 1))), (1024, 64)), N,
                        ("local", P("x"), 0), ("local", 0), ("local", "local")),
    "expand the head": (views.expand(Layout((1, 8), (0, 1)), (1024, 8)), N,
                        ("partitioner", P("x"), 0), ("partitioner", 0), ("partitioner", "partitioner")),
    "no dim splits": (Layout((3, 5), (5, 1)), 64, ("partitioner", P(), 0), ("partitioner", 0),
                      ("partitioner", "partitioner")),
}


@pytest.mark.parametrize("name", list(CATALOGUE))
def test_each_view_takes_its_plan(name):
    layout, n, read, flat, (add, set_) = CATALOGUE[name]
    plan = sharded.read_plan(layout, n, PART)
    assert (plan.strategy, plan.out_sharding.spec, plan.padded) == read, plan
    plan = sharded.read_plan(layout, n, PART, flat=True)
    assert (plan.strategy, plan.padded) == flat, plan
    assert plan.flat and plan.out_sharding.spec == (P("x") if layout.numel % 8 == 0 else P()), plan
    assert sharded.write_plan(layout, n, PART, mode="add").strategy == add
    assert sharded.write_plan(layout, n, PART, mode="set", overlap="last").strategy == set_


def test_a_permute_reads_through_the_cheapest_plan():
    """Heads first as contiguous() stores it: the flat blocks are pairs of devices' halves;
    the ppermute exchange moves half a block per device, the halo of ranges a whole one."""
    halo = plans._halo_plan(HEADS, N, PART, plans._flat_parts(HEADS, 8), PART.sharding(P("x")), flat=True)
    exchange = plans._exchange_plan(HEADS, N, PART, None, PART.sharding(P("x")), True)
    assert halo.strategy == "halo" and exchange.strategy == "exchange"
    assert plans._moved(exchange, N) == N // 2 < plans._moved(halo, N)
    assert sharded.read_plan(HEADS, N, PART, flat=True) == exchange
    assert exchange.detail.rounds == 2


def test_padding_rows_of_a_set_must_share_no_slot_with_the_view():
    rows = Layout((4093, 256), (256, 1))                 # disjoint rows: the padding rows are masked
    assert sharded.write_plan(rows, N, PART, mode="set").padded == 3
    assert sharded.write_plan(FRAMES, N, PART, mode="add").padded == 3
    assert sharded.write_plan(FRAMES, N, PART, mode="set", overlap="last").strategy == "partitioner"
    odd = Layout((3, 2), (1, 3))                         # rows 0..2 of {i, i+3}: a fourth row meets row 0
    assert not odd.has_internal_overlap()
    padded = Layout((4, 2), (1, 3))
    assert padded.has_internal_overlap()


def test_an_output_sharded_along_an_uneven_dim_is_refused_when_read():
    plan = sharded.read_plan(FRAMES, N, PART, PART.sharding(P("x", None)))
    assert plan.strategy == "partitioner" and plan.dim == 0   # the read refuses it (tests on 8 devices)
    plan = sharded.read_plan(FRAMES, N, PART, PART.sharding(P("x", None)), flat=True)
    assert (plan.strategy, plan.padded, plan.flat) == ("halo", 3, True)


def test_out_sharding_must_be_a_named_sharding():
    with pytest.raises(fs.LayoutTypeError, match="out_sharding must be a jax.sharding.NamedSharding"):
        sharded.read_plan(Layout((8,), (1,)), 64, PART, out_sharding="x")


def test_other_axes_and_replicated_outputs_go_to_the_partitioner():
    mesh = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("x", "y"))
    part = sharded.Partition(mesh, "x", 8)
    other = jax.sharding.NamedSharding(mesh, P("y"))
    assert sharded.read_plan(views.t(MATRIX), N, part, other).strategy == "partitioner"
    assert sharded.read_plan(views.t(MATRIX), N, part, part.sharding(P())).out_sharding.spec == P()


def test_partition_reads_the_sharding_of_values_and_types():
    assert sharded.partition(np.zeros(8)) is None and sharded.partition(3.0) is None
    one = jax.device_put(np.zeros(8), jax.sharding.NamedSharding(MESH, P("x")))
    assert sharded.partition(one) is None                    # one block: nothing to partition
    jax.jit(lambda s: (sharded.partition(s) is None) or s)(one)
    explicit = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:1])
    assert sharded.Partition(explicit, "x", 8).explicit and not PART.explicit
    assert sharded.Partition(explicit.abstract_mesh, "x", 8).explicit
    assert plans.unknown_mesh(np.zeros(8)) is None


# -- halos against the oracle's storage indices -------------------------------------------------

@given(devices=st.sampled_from([2, 4, 8]), block=st.integers(4, 48),
       shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       strides=st.lists(st.integers(-9, 9), min_size=3, max_size=3), data=st.data())
def test_flat_block_halos_are_what_each_part_reaches(devices, block, shape, strides, data):
    """Per device, the halos of the flat-block parts (at any offset a traced one may take)
    cover exactly what the part's elements, from the oracle, reach past its own block."""
    n = devices * block
    strides = strides[:len(shape)]
    lowest = sum((e - 1) * s for e, s in zip(shape, strides, strict=True) if s < 0)
    layout = Layout(tuple(shape), tuple(strides), -lowest)
    if layout.span >= n:
        return
    parts = plans._flat_parts(layout, devices)
    if parts is None:
        assert layout.numel % devices or not any(
            layout.shape[k] % (layout.numel // devices // math.prod(layout.shape[k + 1:])) == 0
            for k in range(layout.ndim) if (layout.numel // devices) % math.prod(layout.shape[k + 1:]) == 0)
        return
    lo, hi = 0, n - 1 - layout.span
    shift = data.draw(st.integers(lo, hi))
    found = plans._halos(parts, (lo, hi), n, devices)
    flat = oracle.element_indices(Layout(layout.shape, layout.strides, layout.offset + shift)).reshape(-1)
    per = layout.numel // devices
    for d in range(devices):
        mine = flat[d * per:(d + 1) * per]
        start = Layout(parts.shape, parts.strides, layout.offset + shift + parts.starts[d])
        np.testing.assert_array_equal(oracle.element_indices(start).reshape(-1), mine)
        if found is not None:
            assert d * block - found[0][d] <= mine.min() and mine.max() < (d + 1) * block + found[1][d]


# -- permutes: the grid the storage is cut into --------------------------------------------------

@st.composite
def permutes(draw):
    """A permute of a row-major storage of 2^k elements (dims of powers of two) and a device
    count."""
    devices = draw(st.sampled_from([2, 4, 8]))
    logs = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(lambda ls: 3 <= sum(ls) <= 11))
    shape = tuple(2**k for k in logs)
    perm = tuple(draw(st.permutations(range(len(shape)))))
    return devices, views.permute(Layout.contiguous(shape), perm)


def _part(values: np.ndarray, dim, devices: int, c: int) -> np.ndarray:
    if dim is None:
        flat = values.reshape(-1)
        per = flat.size // devices
        return flat[c * per:(c + 1) * per]
    per = values.shape[dim] // devices
    return np.take(values, np.arange(c * per, (c + 1) * per), axis=dim)


@given(case=permutes(), target=st.sampled_from(["flat", "outermost"]))
def test_the_exchange_grid_holds_each_part_at_its_digits(case, target):
    """Each device's block is the slice of the grid at its leading digits, and each target
    part the slice at the target digits, transposed into the output's order (NumPy)."""
    devices, layout = case
    n = layout.numel
    outermost = next((d for d, e in enumerate(layout.shape) if e % devices == 0), None)
    dim = None if target == "flat" else outermost
    if target == "outermost" and dim is None:
        return
    ex = plans._exchange(layout, n, devices, dim)
    if ex is None:
        return
    storage = np.arange(n)
    grid = storage.reshape(ex.grid)
    assert math.prod(ex.grid[:ex.src]) == devices == math.prod(ex.grid[a] for a in ex.tgt)
    values = oracle.materialize(storage, layout)
    order = [a for axes in ex.out for a in axes if a not in ex.tgt]
    for d in range(devices):
        digits = np.unravel_index(d, ex.grid[:ex.src])
        block = storage[d * n // devices:(d + 1) * n // devices]
        np.testing.assert_array_equal(grid[tuple(digits)].reshape(-1), block)
        tdigits = dict(zip(ex.tgt, np.unravel_index(d, [ex.grid[a] for a in ex.tgt]), strict=True))
        held = grid[tuple(tdigits.get(a, slice(None)) for a in range(len(ex.grid)))]
        kept = [a for a in range(len(ex.grid)) if a not in ex.tgt]
        held = np.transpose(held, [kept.index(a) for a in order]).reshape(ex.part_shape)
        np.testing.assert_array_equal(held.reshape(-1), _part(values, dim, devices, d).reshape(-1))


def test_views_that_are_not_permutes_of_the_storage_have_no_exchange():
    assert plans._exchange(FRAMES, N, 8, None) is None                       # overlapping windows
    assert plans._exchange(views.getitem(MATRIX, (slice(0, 512),)), N, 8, None) is None   # half of it
    assert plans._exchange(views.flip(views.t(MATRIX), (0,)), N, 8, None) is None        # reversed
    assert plans._exchange(Layout((3, 5), (1, 3)), 15, 8, None) is None       # 8 does not divide it


def test_the_inverse_of_a_permute_reads_its_values_back():
    storage = np.arange(4 * 6 * 5)
    layout = views.permute(Layout.contiguous((4, 6, 5)), (2, 0, 1))
    inverse = plans._inverse(layout, storage.size)
    values = oracle.materialize(storage, layout).reshape(-1)
    np.testing.assert_array_equal(oracle.materialize(values, inverse).reshape(-1), storage)
    assert plans._inverse(FRAMES, N) is None
