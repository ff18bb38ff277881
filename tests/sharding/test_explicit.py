"""A storage sharded on an explicit mesh (``AxisType.Explicit``: the sharding is in the type),
read and written inside the user's ``jit`` with no extra argument: values against the oracle,
the output's sharding type, and the collectives and bytes of the compiled program (8
simulated CPU devices, in a subprocess)."""

import pytest
from _devices import run

pytestmark = pytest.mark.slow

SETUP = """
mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
jax.set_mesh(mesh)
N = 2**20
plain = (np.arange(N, dtype=np.float32) * 0.5 - 3.0) % 97.0
plain[::7] = -0.0
storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
signal = StridedArray(storage, Layout.contiguous((N,)))

def typed(x):
    # the sharding in the type, its spec without trailing unsharded dims
    spec = list(jax.typeof(x).sharding.spec)
    while spec and spec[-1] is None:
        spec.pop()
    return P(*spec)
"""

READS = SETUP + """
frames = lambda x: x.unfold(0, 1024, 256)                    # 4093 frames: 8 does not divide them
# view -> (values' spec, read: ops and bytes moved, contiguous(): ops and bytes moved); slices,
# select and expand: the tables of docs/sharding.md (tests/sharding/test_docs.py)
cases = {
    "frames": (frames, P(None, "x"), (["all-to-all", "collective-permute"], 21504 + 14680064),
               (["collective-permute"], 7 * 768 * 4)),
    "frames[:4088]": (lambda x: frames(x)[:4088], P("x"), (["collective-permute"], 31744),
                      (["collective-permute"], 31744)),
    "transpose": (lambda x: x.view(1024, 1024).t(), P("x"), (["all-to-all"], 7 * 2**20 // 2),
                  (["all-to-all"], 7 * 2**20 // 2)),
    "heads first": (lambda x: x.view(4, 512, 8, 64).permute(0, 2, 1, 3), P(None, "x"),
                    (["all-to-all"], 7 * 2**20 // 2), (["collective-permute"], 2**21)),
}
for name, (view, spec, read, stored) in cases.items():
    want = oracle.materialize(plain, view(signal).layout)
    c = compiled(lambda s: jnp.asarray(view(StridedArray(s, Layout.contiguous((N,))))), storage)
    out = c(storage)
    np.testing.assert_array_equal(np.asarray(out), want)
    assert typed(out) == spec, (name, jax.typeof(out))
    assert moved(c) == read, (name, moved(c))
    c = compiled(lambda s: view(StridedArray(s, Layout.contiguous((N,)))).contiguous().storage, storage)
    flat = c(storage)
    assert typed(flat) == P("x") and flat.size % 8 == 0, (name, jax.typeof(flat))
    np.testing.assert_array_equal(np.asarray(flat)[:want.size], want.reshape(-1))
    assert moved(c) == stored, (name, moved(c))
    print(name, "ok")

print("OK")
"""

MORE_READS = SETUP.replace("N = 2**20", "N = 2**18") + """
frames = lambda x: x.unfold(0, 1024, 256)                    # 1021 frames: 8 does not divide them
rows = 1024                                                   # what contiguous() stores
square = lambda x: x.view(512, 512).t()

# contiguous() of 1021 frames keeps 1024 in its storage, the view's layout over them
y = jax.jit(lambda s: frames(StridedArray(s, Layout.contiguous((N,)))).contiguous())(storage)
assert y.storage.shape == (rows * 1024,) and y.layout == Layout((1021, 1024), (1024, 1), 0), y.layout
assert y.is_contiguous() and y.contiguous() is y and typed(y.storage) == P("x")
np.testing.assert_array_equal(np.asarray(y), oracle.materialize(plain, frames(signal).layout))

# eagerly: the same plans and types
out = jnp.asarray(signal.view(4, 128, 8, 64).permute(0, 2, 1, 3))
assert typed(out) == P(None, "x") and tuple(out.sharding.spec)[:2] == (None, "x"), out.sharding
y = frames(signal).contiguous()
assert typed(y.storage) == P("x") and y.storage.shape == (rows * 1024,)
out = fs.materialize(storage, square(signal).layout)          # the public entry point too
assert typed(out) == P("x")
out = square(signal).contiguous(out_sharding=NamedSharding(mesh, P(None, "x")))
assert out.stride() == (512, 1)
np.testing.assert_array_equal(np.asarray(out), plain.reshape(512, 512).T)

# a view passed into jit: its offset is traced, planned for every offset it may be clamped to
c = jax.jit(lambda x: jnp.asarray(square(x))).lower(signal).compile()
assert moved(c) == (["all-to-all"], 7 * N * 4 // 8)
np.testing.assert_array_equal(np.asarray(c(signal)), plain.reshape(512, 512).T)
c = jax.jit(lambda x: jnp.asarray(frames(x)[:1016])).lower(signal).compile()
assert moved(c)[0] == ["collective-permute"], moved(c)
np.testing.assert_array_equal(np.asarray(c(signal)), oracle.materialize(plain, frames(signal)[:1016].layout))

# the sharding over two mesh axes (the mesh in the context, if any, must be the storage's)
mesh2 = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Explicit,) * 2)
with jax.set_mesh(mesh2):
    two = jax.device_put(jnp.asarray(plain), NamedSharding(mesh2, P(("a", "b"))))
    c = compiled(lambda s: frames(StridedArray(s, Layout.contiguous((N,)))).contiguous().storage, two)
    assert moved(c) == (["collective-permute"], 7 * 768 * 4)
    c = compiled(lambda s: jnp.asarray(square(StridedArray(s, Layout.contiguous((N,))))), two)
    assert moved(c) == (["all-to-all"], 7 * N * 4 // 8) and typed(c(two)) == P(("a", "b"))
    np.testing.assert_array_equal(np.asarray(c(two)), plain.reshape(512, 512).T)
    half = jax.device_put(jnp.asarray(plain), NamedSharding(mesh2, P("a")))   # replicated over "b"
    c = compiled(lambda s: jnp.asarray(square(StridedArray(s, Layout.contiguous((N,))))), half)
    assert moved(c) == (["all-to-all"], 8 * N * 4 // 4), moved(c)   # 8 devices get half their part each
print("OK")
"""


def test_reads_inside_jit_take_the_sharded_plans():
    out = run(READS)
    assert out.strip().endswith("OK"), out


def test_reads_eagerly_with_traced_offsets_and_over_two_mesh_axes():
    out = run(MORE_READS)
    assert out.strip().endswith("OK"), out


WRITES = SETUP.replace("N = 2**20", "N = 2**16") + """
def write(view, mode, src, overlap="error"):
    def f(s, v):
        x = view(StridedArray(s, Layout.contiguous((N,))))
        kw = {"overlap": overlap} if mode == "set" else {}
        return getattr(x.at[...], {"mul": "multiply"}.get(mode, mode))(v, **kw).storage
    c = compiled(f, storage, src)
    out = c(storage, src)
    want = oracle.scatter(plain, view(signal).layout, np.asarray(src), mode)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint32), want.astype(np.float32).view(np.uint32))
    assert typed(out) == P("x"), jax.typeof(out)
    return moved(c)

frames = lambda x: x.unfold(0, 64, 16)                      # 4093 frames: 8 does not divide them
ones = np.ones((4093, 64), np.float32)
halo = 7 * 48 * 4                                            # w - h elements per boundary
assert write(frames, "add", ones) == (["collective-permute"], 2 * halo)  # overlap-add: fetched, handed on
assert write(frames, "max", np.float32(-0.0)) == (["collective-permute"], halo)
assert write(lambda x: frames(x)[:4088], "mul", ones[:4088] * 2)[0] == ["collective-permute"]
assert write(frames, "set", ones * 2, overlap="last")[0] in ([], ["all-gather"])   # the partitioner
rows = lambda x: x[: 4093 * 16].view(4093, 16)                               # padding rows masked out
assert write(rows, "set", np.full((4093, 16), 5.0, np.float32)) == ([], 0)
assert write(rows, "add", np.float32(-0.0)) == ([], 0)
t = lambda x: x.view(256, 256).t()
square = np.arange(N, dtype=np.float32).reshape(256, 256)
assert write(t, "set", square) == (["all-to-all"], 7 * N * 4 // 8)           # src read back: one all-to-all
assert write(t, "min", np.float32(3.0)) == ([], 0)                           # one value: nothing moves
heads = lambda x: x.view(4, 32, 8, 64).permute(0, 2, 1, 3)
assert write(heads, "add", np.full((4, 8, 32, 64), 3.0, np.float32)) == (["collective-permute"], N * 4 // 2)
assert write(lambda x: x.view(256, 256)[:, 7], "set", np.float32(2.0)) == ([], 0)
print("writes ok")

# eagerly, and through the public fs.write
new = frames(signal).at[...].add(1.0)
assert typed(new.storage) == P("x")
np.testing.assert_array_equal(np.asarray(new.storage), oracle.scatter(plain, frames(signal).layout,
                                                                       np.float32(1.0), "add"))
new = fs.write(storage, t(signal).layout, square, mode="set")
assert typed(new) == P("x")
np.testing.assert_array_equal(np.asarray(new), square.T.reshape(-1))

# errors are those of one device, inside jit as outside
def raises(error, match, call):
    try:
        call()
    except error as e:
        assert match in str(e), e
        print("refused", type(e).__name__)
    else:
        raise AssertionError(f"no {error.__name__}")

past = Layout((4, 5), (N // 4, 1), N // 4)                   # reaches index N + 4
raises(fs.OverlapError, "share a storage slot",
       lambda: jax.jit(lambda s: frames(StridedArray(s, signal.layout)).at[...].set(0.0).storage)(storage))
raises(fs.LayoutError, "not broadcastable", lambda: jax.jit(
    lambda s: frames(StridedArray(s, signal.layout)).at[...].add(jnp.ones(3)).storage)(storage))
raises(fs.LayoutError, "without loss",
       lambda: jax.jit(lambda s: fs.write(s, t(signal).layout, square.astype(np.complex64)))(storage))
raises(fs.StorageError, "require a storage of", lambda: jax.jit(lambda s: fs.materialize(s, past))(storage))
raises(fs.StorageError, "require a storage of",
       lambda: jax.jit(lambda s: fs.write(s, past, 1.0, mode="add"))(storage))
raises(fs.LayoutError, "unknown mode 'bogus'",
       lambda: jax.jit(lambda s: fs.write(s, t(signal).layout, 1.0, mode="bogus"))(storage))
raises(fs.LayoutError, "cannot be sharded along dim 0",
       lambda: jax.jit(lambda s: fs.materialize(s, frames(signal).layout, out_sharding=NamedSharding(
           mesh, P("x", None))))(storage))
print("OK")
"""


def test_writes_inside_jit_take_the_sharded_plans():
    out = run(WRITES)
    assert out.strip().endswith("OK"), out
    assert out.count("refused") == 7, out


BARE_SPEC = """
mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Explicit,))
plain = np.arange(64, dtype=np.float32)
with jax.set_mesh(mesh):
    storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
    x = StridedArray(storage, Layout((8, 8), (1, 8)))
    for out in (x.contiguous(out_sharding=P("x")).storage,
                fs.materialize(storage, x.layout, out_sharding=P("x"))):
        assert out.sharding.spec[0] == "x", out.sharding  # the bare spec names the set mesh's axis
    np.testing.assert_array_equal(np.asarray(fs.materialize(storage, x.layout, out_sharding=P("x"))),
                                  plain.reshape(8, 8).T)
try:
    fs.materialize(jnp.asarray(plain), Layout((8, 8), (1, 8)), out_sharding=P("x"))
except fs.LayoutTypeError as e:
    assert "no mesh is set" in str(e) and "jax.set_mesh" in str(e), e
else:
    raise AssertionError("a bare PartitionSpec without a mesh was accepted")
print("OK")
"""


def test_a_bare_partition_spec_under_set_mesh_is_an_out_sharding():
    """As JAX's own out_sharding= arguments: P(...) names the axes of the mesh jax.set_mesh set."""
    assert run(BARE_SPEC, devices=4).strip().endswith("OK")
