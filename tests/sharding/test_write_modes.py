"""Writes of a sharded storage keep what the view leaves, bit for bit, on every sharded path:
``-0.0`` (an add's identity is ``-0.0``, not ``+0.0``), bool (add is or, mul is and) and
complex (no multiply has an exact identity: the written slots are masked) storages, against
the oracle (8 simulated CPU devices, in a subprocess; the single-device paths:
``tests/lowering/test_modes.py``)."""

import pytest
from _devices import run

pytestmark = pytest.mark.slow

SCRIPT = """
mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
jax.set_mesh(mesh)
N = 2**14
k = np.arange(N)
STORAGES = {
    "float32": np.where(k % 3 == 0, -0.0, (k % 7) - 3.0).astype(np.float32),
    "bool": k % 3 == 1,
    "complex64": np.where(k % 2 == 1, complex(-0.0, -0.0), (k % 5) + 1j * -0.0).astype(np.complex64),
}
VIEWS = {
    "local": lambda x: x.view(128, 128)[:, 7],
    "halo": lambda x: x.view(128, 128)[10:120:2, 3:100],
    "all_to_all": lambda x: x.view(128, 128).t(),
    "exchange": lambda x: x.view(4, 8, 8, 64).permute(0, 2, 1, 3),
    "partitioner": lambda x: x[:8].expand(16, 8),
    "padded rows": lambda x: x[: 4093 * 4].view(4093, 4),
    "padded frames": lambda x: x.unfold(0, 16, 4),
}

def bits(a):
    a = np.asarray(a)
    return a if a.dtype == np.bool_ else a.view({4: np.uint32, 8: np.uint64}[a.dtype.itemsize])

seen = set()
for dtype, plain in STORAGES.items():
    storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
    base = StridedArray(storage, Layout.contiguous((N,)))
    part = sharded.partition(storage)
    modes = ("set", "add", "mul") if dtype == "complex64" else ("set", "add", "mul", "min", "max")
    for name, view in VIEWS.items():
        layout = view(base).layout
        shape = layout.shape
        j = np.arange(int(np.prod(shape))).reshape(shape)
        src = {"bool": j % 2 == 0, "float32": np.where(j % 4 == 0, -0.0, j % 5 - 2.0).astype(np.float32),
               "complex64": ((j % 3) + 1 + 1j * ((j % 2) + 1)).astype(np.complex64)}[dtype]
        overlap = "last" if layout.has_internal_overlap() else "error"
        if name == "partitioner":
            modes_here = [m for m in modes if m != "set"]
        else:
            modes_here = modes

        def f(s, v):
            x = view(StridedArray(s, Layout.contiguous((N,))))
            return [fs.write(s, x.layout, v, mode=m, overlap=overlap) for m in modes_here]

        outs = jax.jit(f)(storage, src)
        touched = np.zeros(N, bool)
        touched[oracle.element_indices(layout).reshape(-1)] = True
        for mode, out in zip(modes_here, outs, strict=True):
            plan = sharded.write_plan(layout, N, part, mode=mode, overlap=overlap, dtype=plain.dtype)
            seen.add((plan.strategy, bool(plan.padded)))
            want = oracle.scatter(plain, layout, src, mode)
            got = np.asarray(out)
            assert np.array_equal(bits(got)[~touched], bits(want)[~touched]), (dtype, name, mode)
            if (dtype == "complex64" and mode == "mul") or mode in ("min", "max"):
                # the sign of a zero from a complex product, or of min(-0.0, 0.0), is the formula's
                assert np.array_equal(got[touched], want[touched]), (dtype, name, mode)
            else:
                assert np.array_equal(bits(got), bits(want)), (dtype, name, mode, plan.strategy)
    print(dtype, "ok")
assert {s for s, _ in seen} == {"local", "halo", "all_to_all", "exchange", "partitioner"}, seen
assert ("local", True) in seen and ("halo", True) in seen, seen
print("OK")
"""


def test_writes_keep_every_bit_the_view_leaves_on_every_sharded_path():
    out = run(SCRIPT)
    assert out.strip().endswith("OK"), out


ORDER_SCRIPT = """
N = 256
explicit = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
auto = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
# overlapping rows whose parts reach into the right neighbour's block, the left one's, both,
# and past the end of dim 0 (padded); the slots get 2-6 contributions each
LAYOUTS = [Layout((31, 16), (8, 1)), Layout((64, 8), (3, 1)), Layout((70, 8), (3, 1), 2),
           Layout((40, 20), (6, 1), 1)]
seen = set()
for dtype, start, modes in [(jnp.bfloat16, 256.0, [("add", 1.0), ("mul", 1.0 + 2.0**-8)]),
                            (ml_dtypes.float8_e4m3fn, 16.0, [("add", 1.0)])]:
    plain = np.full(N, start, dtype)
    for layout in LAYOUTS:
        for mode, value in modes:
            src = np.full(layout.shape, value, np.float32).astype(dtype)
            want = oracle.scatter(plain, layout, src, mode)
            for mesh in (explicit, auto):
                storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
                plan = sharded.write_plan(layout, N, sharded.partition(storage), mode=mode, overlap="last")
                seen.add((plan.strategy, max(plan.left) > 0, max(plan.right) > 0, bool(plan.padded)))
                eager = fs.write(storage, layout, src, mode=mode, overlap="last")
                if mesh is explicit:  # the sharding in the types, inside the user's jit
                    with jax.set_mesh(mesh):
                        jitted = jax.jit(lambda s, v: fs.write(s, layout, v, mode=mode, overlap="last"))(
                            storage, src)
                else:  # the jitted program that the storage's sharding chose
                    jitted = sharded.write_program(storage, layout, mode=mode, overlap="last")(storage, src)
                for got in (eager, jitted):
                    assert np.array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8)), (
                        dtype, layout, mode, plan.strategy, np.asarray(got, np.float64)[:40],
                        want.astype(np.float64)[:40])
halos = [s for s in seen if s[0] == "halo"]
assert any(s[1] for s in halos) and any(s[2] for s in halos) and any(s[3] for s in halos), seen
print("OK")
"""


def test_adds_through_overlapping_views_reach_each_slot_in_the_view_order():
    # the oracle's order (the stored value, then each contribution in row-major order of the
    # view), which a sum of the contributions first would miss in low precision (bfloat16:
    # 256 + 1 + 1 is 256 one at a time, 258 summed first), eagerly and under jit
    out = run("import ml_dtypes\n" + ORDER_SCRIPT)
    assert out.strip().endswith("OK"), out


SUB_BYTE_SCRIPT = """
N = 256
mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Explicit,))
VIEWS = {"local": Layout((16,), (16,), 3), "halo": Layout((31, 16), (8, 1)),
         "all_to_all": Layout((16, 16), (1, 16)), "padded": Layout((21, 12), (12, 1))}
seen = set()
for dtype in (jnp.int4, jnp.uint4):
    info = jnp.iinfo(dtype)
    plain = (np.arange(N) % (int(info.max) - int(info.min) + 1) + int(info.min)).astype(dtype)
    storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
    part = sharded.partition(storage)
    for name, layout in VIEWS.items():
        j = np.arange(int(np.prod(layout.shape))).reshape(layout.shape)
        src = (j % 5 + int(info.min) + 1).astype(dtype)
        for mode in ("set", "add", "min", "max"):
            overlap = "last" if layout.has_internal_overlap() else "error"
            plan = sharded.write_plan(layout, N, part, mode=mode, overlap=overlap, dtype=plain.dtype)
            seen.add(plan.strategy)
            got = fs.write(storage, layout, src, mode=mode, overlap=overlap)
            want = oracle.scatter(plain, layout, src, mode)
            assert np.array_equal(np.asarray(got).astype(np.int8), want.astype(np.int8)), (dtype, name, mode)
assert {"local", "halo", "all_to_all"} <= seen, seen
print("OK")
"""


def test_sub_byte_storages_write_on_every_sharded_path():
    # int4 and uint4 storages: set, add (wrapping), min and max, against the oracle
    out = run(SUB_BYTE_SCRIPT, devices=4)
    assert out.strip().endswith("OK"), out
