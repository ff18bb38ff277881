"""Inputs of a storage on an explicit mesh that the sharded plans must take as JAX takes them: a
traced offset (a ``jit`` argument, a loop index) read and written through the partitioner's
``auto_axes`` program; an empty view, typed by the documented rule so that it concatenates
with its neighbour; a ``jax.Ref`` over an explicitly sharded storage, and a ref made inside
``jax.shard_map`` (8 simulated CPU devices, in a subprocess; values against the unsharded
reference)."""

import pytest
from _devices import run

pytestmark = pytest.mark.slow

SETUP = """
from jax import lax
mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
jax.set_mesh(mesh)
N = 256
plain = np.arange(N, dtype=np.float32) * 0.5 - 7.0
storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
base = Layout.contiguous((N,))

def typed(x):
    # the sharding in the type, its spec without trailing unsharded dims
    spec = list(jax.typeof(x).sharding.spec)
    while spec and spec[-1] is None:
        spec.pop()
    return P(*spec)
"""

TRACED_OFFSETS = SETUP + """
m = lambda s: StridedArray(s, base).view(16, 16)
# a traced offset through each plan: (view of m, offset, spec of the read)
cases = {
    "two rows": (lambda x, t: x.narrow(0, t, 2), 5, P(None, "x")),
    "a row": (lambda x, t: x.select(0, t), 9, P("x")),
    "a transposed window": (lambda x, t: x.flatten().narrow(0, t, 64).view(8, 8).t(), 37, P("x")),
}
for name, (view, t, spec) in cases.items():
    want = oracle.materialize(plain, view(m(plain), t).layout)
    out = jax.jit(lambda s, t: jnp.asarray(view(m(s), t)))(storage, t)
    np.testing.assert_array_equal(np.asarray(out), want, err_msg=name)
    assert typed(out) == spec, (name, jax.typeof(out))
    y = jax.jit(lambda s, t: view(m(s), t).contiguous())(storage, t)   # a contiguous view is itself
    np.testing.assert_array_equal(np.asarray(y), want, err_msg=name)
    assert typed(y.storage) == P("x"), (name, jax.typeof(y.storage))
    for mode, value in (("set", 3.0), ("add", 1.5)):      # functional writes: .at[] and fs.write
        ref = plain.copy()
        lay = view(m(plain), t).layout
        idx = oracle.materialize(np.arange(N), lay).reshape(-1)
        if mode == "set":
            ref[idx] = value
        else:
            np.add.at(ref, idx, value)
        at = jax.jit(lambda s, t: getattr(view(m(s), t).at[...], mode)(value).storage)(storage, t)
        np.testing.assert_array_equal(np.asarray(at), ref, err_msg=(name, mode))
        assert typed(at) == P("x"), (name, mode, jax.typeof(at))
        lay_of = lambda t: view(m(plain), t).layout
        new = jax.jit(lambda s, t: fs.write(s, lay_of(t), value, mode=mode))(storage, t)
        np.testing.assert_array_equal(np.asarray(new), ref, err_msg=(name, mode, "fs.write"))
    print(name, "ok")

# select and narrow inside lax.fori_loop: the index is the loop's tracer
def rows_sum(s):
    x = m(s)
    return lax.fori_loop(0, 16, lambda i, acc: acc + jnp.asarray(x.select(0, i)),
                         jnp.zeros(16, out_sharding=P("x")))
out = jax.jit(rows_sum)(storage)
np.testing.assert_allclose(np.asarray(out), plain.reshape(16, 16).sum(0), rtol=1e-6)
assert typed(out) == P("x"), jax.typeof(out)

def windows(s):
    x = m(s)
    return lax.fori_loop(0, 14, lambda i, acc: acc + jnp.asarray(x.narrow(0, i, 2)),
                         jnp.zeros((2, 16), out_sharding=P(None, "x")))
out = jax.jit(windows)(storage)
want = sum(plain.reshape(16, 16)[i:i + 2] for i in range(14))
np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
assert typed(out) == P(None, "x"), jax.typeof(out)

def bumps(s):  # a write per step, through the loop's index
    return lax.fori_loop(0, 16, lambda i, s: m(s).select(0, i).at[i].add(1.0).storage, s)
out = jax.jit(bumps)(storage)
ref = plain.copy()
ref[np.arange(16) * 17] += 1.0
np.testing.assert_array_equal(np.asarray(out), ref)
assert typed(out) == P("x"), jax.typeof(out)
print("OK")
"""


def test_traced_offsets_read_and_write_on_an_explicit_mesh():
    assert run(TRACED_OFFSETS).strip().endswith("OK")


EMPTY = SETUP + """
x = StridedArray(storage, base)
cube = x.view(4, 8, 8)
# (empty view, its non-empty neighbour, concatenation axis, spec of the empty read)
cases = {
    "(1, 4, 0)": (cube[:1, :4, :0], cube[:1, :4, :], 2, P(None, None, "x")),
    "(0, 8)": (x.view(32, 8)[:0], x.view(32, 8)[:8], 0, P("x")),
    "(8, 0)": (x.view(32, 8)[:8, :0], x.view(32, 8)[:8], 1, P("x")),
}
for name, (empty, full, axis, spec) in cases.items():
    got = jnp.asarray(empty)
    assert got.shape == empty.shape and typed(got) == spec, (name, jax.typeof(got))
    assert np.asarray(got).shape == empty.shape, name      # each device holds its (empty) block
    parts = [oracle.materialize(plain, v.layout) for v in (empty, full)]
    want = np.concatenate(parts, axis)
    both = jnp.concatenate([got, jnp.asarray(full)], axis=axis)
    np.testing.assert_array_equal(np.asarray(both), want, err_msg=name)
    lays = (empty.layout, full.layout)
    c = jax.jit(lambda s: jnp.concatenate([jnp.asarray(StridedArray(s, l)) for l in lays], axis=axis))
    np.testing.assert_array_equal(np.asarray(c(storage)), want, err_msg=name)
    # as plain JAX types the same empty slice (the documented rule agrees with it here)
    if name == "(0, 8)":
        assert typed(storage.reshape(32, 8)[:0]) == spec
    print(name, "ok")
print("OK")
"""


def test_empty_views_follow_the_sharding_rule_and_concatenate():
    assert run(EMPTY).strip().endswith("OK")


REFS = SETUP + """
def check(got, want, what):
    np.testing.assert_array_equal(np.asarray(got), want, err_msg=what)

# a ref over an explicitly sharded storage: read and write in place, eagerly and inside jit
r = jax.new_ref(storage)
x = fs.from_ref(r).view(16, 16)
ref = plain.reshape(16, 16).copy()
got = jnp.asarray(x.t())
check(got, ref.T, "read of a transpose")
assert typed(got) == P("x"), jax.typeof(got)
check(jnp.asarray(x[3]), ref[3], "read of a row")
x[1].copy_(jnp.arange(16.0))
ref[1] = np.arange(16.0)
x.t()[2].add_(1.0)
ref[:, 2] += 1.0
x[5] = 4.0
ref[5] = 4.0
x[2:6, 1::3].mul_(2.0)
ref[2:6, 1::3] *= 2.0
check(r[...], ref.reshape(-1), "eager writes")
assert typed(r[...]) == P("x"), jax.typeof(r[...])

def step(s, t):
    rr = jax.new_ref(s)
    y = fs.from_ref(rr).view(16, 16)
    y.t()[t].add_(2.0)                          # a traced column
    y[0] = 7.0
    return rr[...], jnp.asarray(y[:, 1])
new, col = jax.jit(step)(storage, 3)
want = plain.reshape(16, 16).copy()
want[:, 3] += 2.0
want[0] = 7.0
check(new, want.reshape(-1), "jit writes")
check(col, want[:, 1], "jit read")
assert typed(new) == P("x"), jax.typeof(new)

def closed(v):                                  # the ref closed over by the jitted function
    fs.from_ref(r).view(16, 16)[4].copy_(v)
    return jnp.asarray(fs.from_ref(r).view(16, 16).t())
out = jax.jit(closed)(jnp.full(16, -1.0))
ref[4] = -1.0
check(out, ref.T, "closed-over ref")
check(r[...], ref.reshape(-1), "closed-over ref's value")

def loop(s):                                    # in place, once per step of a loop
    rr = jax.new_ref(s)
    y = fs.from_ref(rr).view(16, 16)
    def body(i, c):
        y.select(0, i).add_(1.0)
        return c
    lax.fori_loop(0, 16, body, 0)
    return rr[...]
check(jax.jit(loop)(storage), plain + 1.0, "loop")

# a ref made inside shard_map from jnp.zeros does not vary: reads and writes of values that do
# not vary work; a varying value is refused, with the fix
def body(s):
    rr = jax.new_ref(jnp.zeros(16))
    y = fs.from_ref(rr).view(4, 4)
    y[1] = 3.0
    y.t()[2].add_(1.0)
    return (rr[...] + jnp.asarray(y.t()).reshape(-1))[None] + 0 * s[:1, None]
f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
want = np.zeros((4, 4), np.float32)
want[1] = 3.0
want[:, 2] += 1.0
check(np.asarray(f(storage)).reshape(8, 16), np.tile(want.reshape(-1) + want.T.reshape(-1), (8, 1)),
      "shard_map, invariant ref")

def refused(s):
    rr = jax.new_ref(jnp.zeros(16))
    fs.from_ref(rr).view(4, 4)[1] = s[:4]
    return rr[...]
try:
    jax.jit(jax.shard_map(refused, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(storage)
except fs.LayoutError as err:
    text = str(err)
    assert "varies over the manual mesh axes ('x',)" in text and "view (4,):(1,)+4" in text, text
    assert "jax.lax.pcast(value, ('x',), to='varying')" in text, text
else:
    raise AssertionError("a varying value written into an invariant ref was not refused")

def varying(s):                                 # the fix: a ref made from a varying value
    rr = jax.new_ref(lax.pcast(jnp.zeros(16), "x", to="varying"))
    y = fs.from_ref(rr).view(4, 4)
    y[1] = s[:4]
    y.t()[2].add_(s[4])
    return rr[...]
out = np.asarray(jax.jit(jax.shard_map(varying, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(storage))
blocks = plain.reshape(8, 32)
want = np.zeros((8, 4, 4), np.float32)
want[:, 1] = blocks[:, :4]
want[:, :, 2] += blocks[:, 4:5]
check(out.reshape(8, 4, 4), want, "shard_map, varying ref")
print("OK")
"""


def test_refs_over_explicitly_sharded_storages_and_inside_shard_map():
    assert run(REFS).strip().endswith("OK")
