"""Inside ``jit`` on a mesh of ``Auto`` axes a storage's sharding is not in its type: the
library says so once per mesh (``ShardingWarning``, naming ``out_sharding=`` and explicit
meshes) rather than all-gather silently; ``out_sharding`` names the axis and takes the sharded
plans; single-device, replicated-explicit, batched and ``shard_map`` storages stay quiet
(8 simulated CPU devices, in a subprocess)."""

import pytest
from _devices import run

pytestmark = pytest.mark.slow

SCRIPT = """
N = 2**16
plain = np.arange(N, dtype=np.float32) % 61
mesh = Mesh(np.array(jax.devices()), ("x",))                  # Auto axes
storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
frames = StridedArray(storage, Layout.contiguous((N,))).unfold(0, 64, 16)[:4088]
want = oracle.materialize(plain, frames.layout)

def caught(call):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = call()
    return out, [w for w in seen if issubclass(w.category, sharded.ShardingWarning)]

# eagerly the concrete storage's sharding is known: no warning, the halo plan
out, seen = caught(lambda: jnp.asarray(frames))
assert not seen and out.sharding.spec[0] == "x"
np.testing.assert_array_equal(np.asarray(out), want)

# inside jit: said once per mesh, for reads and writes, and what it warns about is an all-gather
read = jax.jit(lambda s: jnp.asarray(StridedArray(s, frames.layout)))
out, seen = caught(lambda: read(storage))
np.testing.assert_array_equal(np.asarray(out), want)
assert len(seen) == 1, seen
text = str(seen[0].message)
for part in ("out_sharding=NamedSharding", "AxisType.Explicit", "all-gather", "once per mesh"):
    assert part in text, text
assert "all-gather" in moved(read.lower(storage).compile())[0]
write = jax.jit(lambda s: StridedArray(s, frames.layout).at[...].add(1.0).storage)
_, again = caught(lambda: (write(storage), jax.jit(lambda s: fs.materialize(s, frames.layout))(storage)))
assert not again, again                                        # the same mesh: said once
other = Mesh(np.array(jax.devices()), ("y",))
elsewhere = jax.device_put(jnp.asarray(plain), NamedSharding(other, P("y")))
_, seen = caught(lambda: jax.jit(lambda s: fs.write(s, frames.layout, 1.0, mode="add"))(elsewhere))
assert len(seen) == 1 and str(seen[0].message).startswith("write: "), seen   # another mesh: said again
print("warned")

# out_sharding names the axis: the halo plan, no warning
rows = NamedSharding(mesh, P("x"))
f = jax.jit(lambda s: StridedArray(s, frames.layout).contiguous(out_sharding=rows).storage)
out, seen = caught(lambda: f(storage))
assert not seen and moved(f.lower(storage).compile())[0] == ["collective-permute"]
np.testing.assert_array_equal(np.asarray(out), want.reshape(-1))
f = jax.jit(lambda s: fs.materialize(s, frames.layout, out_sharding=rows))
out, seen = caught(lambda: f(storage))
assert not seen and moved(f.lower(storage).compile())[0] == ["collective-permute"]

# quiet: one device, a replicated storage on an explicit mesh, a batch of storages, shard_map
_, seen = caught(lambda: jax.jit(lambda s: jnp.asarray(StridedArray(s, frames.layout)))(jnp.asarray(plain)))
assert not seen
explicit = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
replicated = jax.device_put(jnp.asarray(plain), NamedSharding(explicit, P()))
out, seen = caught(lambda: jax.jit(lambda s: jnp.asarray(StridedArray(s, frames.layout)))(replicated))
assert not seen and moved(jax.jit(lambda s: jnp.asarray(StridedArray(s, frames.layout))).lower(
    replicated).compile()) == ([], 0)
np.testing.assert_array_equal(np.asarray(out), want)
batch = jax.device_put(jnp.asarray(plain).reshape(8, N // 8), NamedSharding(mesh, P("x", None)))
items = StridedArray(batch, Layout.contiguous((N // 8,)), batched=True).unfold(0, 64, 16)
_, seen = caught(lambda: jax.jit(lambda s: jnp.asarray(StridedArray(s, items.layout, batched=True)))(batch))
assert not seen
body = jax.shard_map(lambda s: fs.materialize(s, Layout((16, 64), (16, 1)))[None], mesh=mesh,
                     in_specs=P("x"), out_specs=P("x"))
_, seen = caught(lambda: jax.jit(body)(storage))
assert not seen

print("OK")
"""


def test_an_auto_mesh_inside_jit_is_said_once():
    out = run(SCRIPT)
    assert out.strip().endswith("OK") and "warned" in out, out
