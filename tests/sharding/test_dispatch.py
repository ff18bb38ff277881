"""One dispatch for every entry point: ``fs.materialize``, ``fs.write`` and ``StridedArray``
(``jnp.asarray``, ``contiguous()``, ``x.at[...]``) all go through
``functional_strides._src.sharding.dispatch``, so the same values get the same program (on
one device here; the same collectives on 8 simulated devices in a subprocess)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _devices import run
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import functional_strides as fs
from functional_strides import Layout
from functional_strides._src.sharding import dispatch


def test_the_public_entry_points_are_the_dispatch():
    assert fs.materialize is dispatch.materialize and fs.write is dispatch.write


def test_strided_array_goes_through_the_dispatch(monkeypatch):
    calls = []
    for name in ("materialize", "write", "contiguous"):
        real = getattr(dispatch, name)
        monkeypatch.setattr(dispatch, name, lambda *a, _real=real, _name=name, **k: (calls.append(_name),
                                                                                    _real(*a, **k))[1])
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4)).t()
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)), np.arange(12.0).reshape(3, 4).T)
    x.at[1].add(1.0)
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    y = x.contiguous(out_sharding=NamedSharding(mesh, P("x")))
    assert y.stride() == (3, 1)
    assert calls[:2] == ["materialize", "write"] and "contiguous" in calls, calls


def test_out_sharding_places_a_single_device_read():
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    rows = NamedSharding(mesh, P("x"))
    out = fs.materialize(jnp.arange(6.0), Layout((3, 2), (1, 3)), out_sharding=rows)
    assert out.sharding == rows and out.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    out = jax.jit(lambda s: fs.materialize(s, Layout((3, 2), (1, 3)), out_sharding=rows))(jnp.arange(6.0))
    assert out.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    with pytest.raises(fs.LayoutTypeError, match="is a PartitionSpec but no mesh is set"):
        fs.materialize(jnp.arange(6.0), Layout((3, 2), (1, 3)), out_sharding=P("x"))
    with pytest.raises(fs.LayoutTypeError, match="out_sharding must be a jax.sharding.NamedSharding"):
        fs.materialize(jnp.arange(6.0), Layout((3, 2), (1, 3)), out_sharding="x")


SCRIPT = """
N = 2**16
plain = np.arange(N, dtype=np.float32) % 113
meshes = (jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,)), Mesh(np.array(jax.devices()), ("x",)))
for mesh in meshes:
    storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
    frames = StridedArray(storage, Layout.contiguous((N,))).unfold(0, 64, 16)[:4088]
    ours = moved(compiled(lambda s: fs.materialize(s, frames.layout), storage)) if mesh.explicit_axes else \\
        moved(sharded.program(storage, frames.layout).lower(storage).compile())
    via_array = moved(compiled(lambda s: jnp.asarray(StridedArray(s, frames.layout)), storage)) \\
        if mesh.explicit_axes else ours
    assert ours == via_array and ours[0] == ["collective-permute"], (ours, via_array)
    out = fs.materialize(storage, frames.layout)                  # eagerly: the sharded plan, placed
    assert out.sharding.spec[0] == "x"
    np.testing.assert_array_equal(np.asarray(out), oracle.materialize(plain, frames.layout))
    new = fs.write(storage, frames.layout, 1.0, mode="add")
    same = frames.at[...].add(1.0).storage
    assert new.sharding.spec == storage.sharding.spec and same.sharding.spec == storage.sharding.spec
    np.testing.assert_array_equal(np.asarray(new), np.asarray(same))
    print("same", ours)

# a batch of storages sharded along the batch on an explicit mesh: each item where it lies
explicit = meshes[0]
batch = jax.device_put(jnp.asarray(plain).reshape(8, N // 8), NamedSharding(explicit, P("x", None)))
items = StridedArray(batch, Layout.contiguous((N // 8,)), batched=True).unfold(0, 64, 16)
step = lambda s: StridedArray(s, items.layout, batched=True).t().at[3].add(jnp.ones((8, 509))).storage
c = compiled(step, batch)
assert moved(c) == ([], 0), moved(c)
want = np.stack([oracle.scatter(b, fs.views.select(fs.views.t(items.layout), 0, 3), np.float32(1), "add")
                 for b in plain.reshape(8, N // 8)])
np.testing.assert_array_equal(np.asarray(c(batch)), want)

# a "set" through a permutation of every slot reads nothing of the storage: its result is still
# placed as the storage (a scalar, one item's values, the whole batch's), eagerly on either mesh
# and inside jit on the explicit one
for mesh in meshes:
    batch = jax.device_put(jnp.asarray(plain).reshape(8, N // 8), NamedSharding(mesh, P("x", None)))
    square = StridedArray(batch, Layout.contiguous((64, 128)), batched=True)[:, :64].t()
    whole = StridedArray(batch, Layout.contiguous((N // 8 // 64, 64)), batched=True).t()
    for view in (square, whole):
        for values in (jnp.float32(2.5), jnp.full(view.shape, 2.5), jnp.full((8, *view.shape), 2.5)):
            for mode in ("set", "add"):
                new = getattr(view.at[...], mode)(values).storage
                assert new.sharding.spec == batch.sharding.spec, (fs.write_plan(view), mode, new.sharding)
                got = np.asarray(jnp.asarray(StridedArray(new, view.layout, batched=True)))
                np.testing.assert_array_equal(got, np.broadcast_to(
                    2.5 + (np.asarray(jnp.asarray(view)) if mode == "add" else 0), got.shape))
explicit_set = jax.jit(lambda s, v: StridedArray(s, whole.layout, batched=True).at[...].set(v).storage)
with jax.set_mesh(explicit):
    batch = jax.device_put(jnp.asarray(plain).reshape(8, N // 8), NamedSharding(explicit, P("x", None)))
    assert explicit_set(batch, jnp.float32(2.5)).sharding.spec == batch.sharding.spec
print("placed")
print("OK")
"""


@pytest.mark.slow
def test_every_entry_point_takes_the_same_sharded_program():
    out = run(SCRIPT)
    assert out.strip().endswith("OK") and out.count("same") == 2 and "placed" in out, out
