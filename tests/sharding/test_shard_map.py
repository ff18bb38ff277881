"""Reads and writes inside ``jax.shard_map`` (a device's own block: the single-device paths),
on every path, with the varying-axes check on (``check_vma=True``): on one device here, on 8
simulated CPU devices in a subprocess. A permute of 256x256 or more is a tile loop whose carry
must vary over the mesh axis as the tiles do."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _devices import run
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import functional_strides as fs
from functional_strides import Layout, oracle, views

M = 256
LOCAL = 2 * M * M
READS = {
    "transpose 256": Layout((M, M), (1, M)),
    "transpose 256x512": Layout((M, 2 * M), (1, M)),
    "batched": Layout((2, M, M), (M * M, 1, M)),
    "flipped transpose": views.flip(Layout((M, M), (1, M)), (0,)),
    "frames": views.unfold(Layout((LOCAL,), (1,)), 0, 1024, 256),
}
WRITES = {"transpose 256": Layout((M, M), (1, M)), "frames": views.unfold(Layout((4096,), (1,)), 0, 64, 16)}
MESHES = {
    "explicit": lambda: jax.make_mesh((1,), ("x",), axis_types=(AxisType.Explicit,),
                                      devices=jax.devices()[:1]),
    "auto": lambda: Mesh(np.array(jax.devices()[:1]), ("x",)),
}
PLAIN = np.arange(LOCAL, dtype=np.float32) % 251


def _applies(call):
    try:
        return call()
    except fs.LayoutError as err:  # a forced path that does not apply to this view
        assert "does not apply" in str(err) or "strided_copy" in str(err), err
        return None


@pytest.mark.sampled(3)
@pytest.mark.parametrize("kind", list(MESHES))
@pytest.mark.parametrize("name", list(READS))
def test_reads_inside_shard_map_on_every_path(kind, name):
    mesh, layout = MESHES[kind](), READS[name]
    storage = jax.device_put(jnp.asarray(PLAIN), NamedSharding(mesh, P("x")))
    want = oracle.materialize(PLAIN, layout)
    for method in fs.READ_METHODS:
        f = jax.jit(jax.shard_map(lambda s, m=method: fs.materialize(s, layout, method=m)[None], mesh=mesh,
                                  in_specs=P("x"), out_specs=P("x")))
        got = _applies(lambda f=f: f(storage))
        if got is not None:
            np.testing.assert_array_equal(np.asarray(got)[0], want, err_msg=method)
    view = fs.StridedArray(storage, layout)
    f = jax.jit(jax.shard_map(lambda s: view.with_storage(s).contiguous().storage, mesh=mesh,
                              in_specs=P("x"), out_specs=P("x")))
    np.testing.assert_array_equal(np.asarray(f(storage)), want.reshape(-1))


@pytest.mark.sampled(2)
@pytest.mark.parametrize("name", list(WRITES))
def test_writes_inside_shard_map_on_every_path(name):
    mesh, layout = MESHES["explicit"](), WRITES[name]
    storage = jax.device_put(jnp.asarray(PLAIN), NamedSharding(mesh, P("x")))
    src = (np.arange(np.prod(layout.shape), dtype=np.float32).reshape(layout.shape) % 5) - 2
    for method in fs.WRITE_METHODS:
        for mode in ("set", "add", "mul", "min", "max"):
            f = jax.jit(jax.shard_map(
                lambda s, v, m=method, o=mode: fs.write(s, layout, v[0], mode=o, overlap="last", method=m),
                mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x")))
            got = _applies(lambda f=f: f(storage, jax.device_put(src[None], NamedSharding(mesh, P("x")))))
            if got is not None:
                np.testing.assert_array_equal(np.asarray(got), oracle.scatter(PLAIN, layout, src, mode),
                                              err_msg=f"{method} {mode}")


SCRIPT = """
M, D = 256, 8
local = 2 * M * M
plain = np.arange(D * local, dtype=np.float32) % 251
reads = {"transpose 512": Layout((2 * M, M), (1, 2 * M)),
         "heads": Layout((4, 8, 64, 64), (32768, 64, 512, 1))}
for kind in (AxisType.Explicit, AxisType.Auto):
    mesh = jax.make_mesh((D,), ("x",), axis_types=(kind,))
    storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
    blocks = plain.reshape(D, local)
    methods = fs.READ_METHODS if kind == AxisType.Explicit else ("auto", "structured")
    for name, layout in reads.items():
        want = np.stack([oracle.materialize(b, layout) for b in blocks])
        for method in methods:
            f = jax.jit(jax.shard_map(lambda s, m=method: fs.materialize(s, layout, method=m)[None],
                                      mesh=mesh, in_specs=P("x"), out_specs=P("x")))
            try:
                got = f(storage)
            except fs.LayoutError as err:
                assert "does not apply" in str(err), err
                continue
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{kind} {name} {method}")
    print(kind, "ok")
layout = reads["transpose 512"]
src = jax.device_put(jnp.asarray(np.arange(D * M * 2 * M, dtype=np.float32).reshape(D, 2 * M, M) % 7),
                     NamedSharding(mesh, P("x")))
for method in fs.WRITE_METHODS:
    f = jax.jit(jax.shard_map(lambda s, v, m=method: fs.write(s, layout, v[0], mode="add", method=m),
                              mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x")))
    try:
        got = f(storage, src)
    except fs.LayoutError as err:
        assert "does not apply" in str(err), err
        continue
    want = np.concatenate([oracle.scatter(b, layout, np.asarray(v), "add")
                           for b, v in zip(blocks, src, strict=True)])
    np.testing.assert_array_equal(np.asarray(got), want, err_msg=method)
print("OK")
"""


@pytest.mark.slow
def test_reads_and_writes_inside_shard_map_on_8_devices():
    out = run(SCRIPT)
    assert out.strip().endswith("OK"), out
