"""Batched storages (*batch, N): views per item, materialisation and writes over the batch,
and sharded batches that stay local on every device."""

import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import functional_strides as fs
from functional_strides import Layout, StorageError, StridedArray


def _batch(shape=(2, 3), n=20):
    return jnp.arange(int(np.prod(shape)) * n, dtype=jnp.float32).reshape(*shape, n)


def test_views_and_contiguous_map_over_batch_axes():
    storage = _batch()
    x = StridedArray(storage, Layout.contiguous((4, 5)), batched=True)
    y = x.t()[1:, ::2].unfold(0, 2, 1)
    assert y.batch_shape == (2, 3) and y.shape == (3, 2, 2)
    dense = np.asarray(y)
    assert dense.shape == (2, 3, 3, 2, 2)
    for b in np.ndindex(2, 3):
        np.testing.assert_array_equal(dense[b], fs.oracle.materialize(np.asarray(storage[b]), y.layout))
    c = y.contiguous()
    assert c.storage.shape == (2, 3, 12) and c.stride() == (4, 2, 1)
    np.testing.assert_array_equal(np.asarray(c), dense)
    assert "batch_shape=(2, 3)" in repr(y)


def test_batched_equals_vmap_of_unbatched():
    storage = _batch((4,), 30)
    layout = Layout((3, 4), (1, 6), 2)
    per_item = jax.vmap(lambda s: jnp.asarray(StridedArray(s, layout)))(storage)
    batched = jnp.asarray(StridedArray(storage, layout, batched=True))
    np.testing.assert_array_equal(np.asarray(batched), np.asarray(per_item))
    # what vmap makes of a StridedArray outside the mapped function is the batched form
    out = jax.vmap(lambda s: StridedArray(s, layout).t())(storage)
    assert out.batch_shape == (4,) and out.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(per_item).transpose(0, 2, 1))


def test_batched_writes_broadcast_src_over_batch():
    storage = _batch((2,), 12)
    frames = StridedArray(storage, Layout((5,), (1,)), batched=True).unfold(0, 3, 1)
    same = frames.at[...].add(1.0)
    per_item = frames.at[...].add(jnp.arange(2.0)[:, None, None])
    for b in range(2):
        s = np.asarray(storage[b])
        np.testing.assert_array_equal(np.asarray(same.storage[b]),
                                      fs.oracle.scatter(s, frames.layout, 1.0, "add"))
        np.testing.assert_array_equal(np.asarray(per_item.storage[b]),
                                      fs.oracle.scatter(s, frames.layout, float(b), "add"))
    with pytest.raises(fs.LayoutError,
                       match=re.escape("not broadcastable to the batched view's shape (2, 3, 3)")):
        frames.at[...].add(jnp.ones((3, 3, 3)))
    with pytest.raises(fs.OverlapError):
        frames.at[...].set(0.0)


def test_batched_needs_opt_in_and_fits_last_axis():
    with pytest.raises(StorageError, match="batched=True"):
        StridedArray(_batch(), Layout((4,), (1,)))
    with pytest.raises(StorageError, match="require a storage of 25 elements"):
        StridedArray(_batch(), Layout((5, 5), (5, 1)), batched=True)
    x = StridedArray(_batch(), Layout((4,), (1,)), batched=True)
    assert x.with_storage(_batch()).batch_shape == (2, 3)


def test_batched_under_jit_and_grad():
    layout = Layout((3, 3), (1, 1))
    storage = _batch((2,), 6)
    f = jax.jit(lambda s: jnp.sum(jnp.asarray(StridedArray(s, layout, batched=True)) ** 2))
    g = jax.grad(f)(storage)
    counts = np.bincount(fs.oracle.element_indices(layout), minlength=6)
    np.testing.assert_allclose(np.asarray(g), 2 * np.asarray(storage) * counts)


SHARDED = textwrap.dedent(
    """
    import os, re, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import functional_strides as fs
    from functional_strides import Layout, StridedArray

    assert len(jax.devices()) == 8, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("batch",))
    sharding = NamedSharding(mesh, P("batch", None))
    storage = jax.device_put(jnp.arange(8 * 4096, dtype=jnp.float32).reshape(8, 4096), sharding)
    base = StridedArray(storage, Layout.contiguous((64, 64)), batched=True)

    programs = {
        "transpose": lambda s: base.with_storage(s).t().contiguous().storage,
        "windows": lambda s: jnp.asarray(base.with_storage(s).view(-1).unfold(0, 256, 64)),
        "diagonal": lambda s: jnp.asarray(base.with_storage(s).diagonal()),
        "add-through-view": lambda s: base.with_storage(s).at[:, ::2].add(1.0).storage,
        "set-through-view": lambda s: base.with_storage(s).t().at[3].set(0.0).storage,
    }
    collectives = re.compile(r"all-gather|all-to-all|collective-permute|all-reduce|reduce-scatter")
    for name, fn in programs.items():
        compiled = jax.jit(fn).lower(storage).compile()
        hlo = compiled.as_text()
        found = sorted(set(collectives.findall(hlo)))
        assert not found, (name, found)
        out = compiled(storage)
        assert out.sharding.spec[0] == "batch", (name, out.sharding)
        print(name, "local", out.shape)
    # values equal the unsharded computation
    plain = jnp.asarray(np.asarray(storage))
    for name, fn in programs.items():
        np.testing.assert_array_equal(np.asarray(jax.jit(fn)(storage)), np.asarray(jax.jit(fn)(plain)))
    print("OK")
    """
)


@pytest.mark.slow
def test_sharded_batch_stays_local_on_8_devices():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", SHARDED], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("OK"), proc.stdout
    for name in ("transpose", "windows", "diagonal", "add-through-view", "set-through-view"):
        assert f"{name} local" in proc.stdout
