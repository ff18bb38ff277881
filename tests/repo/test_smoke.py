"""The smoke subset: what must work on the lowest ``jax``/``jaxlib`` that ``pyproject.toml``
declares. ``.ci/run`` installs those in a second virtual environment (the package and
pytest, chex and hypothesis only) and runs this file with the README's examples; it runs in
the full suite as well. Import; one read forced through every path of the read table and
one write through every path of the write table, under ``jit``, against the oracle; the
programs outside ``jit``; ``vmap`` and ``grad``; ``jax.export`` of a read and a write holding
standard StableHLO only; the version floors themselves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import copy_kernel as require_copy_kernel

import functional_strides as fs
from functional_strides import Layout, oracle
from functional_strides._src.lowering.reads import READS
from functional_strides._src.lowering.writes import WRITES

REPO = Path(__file__).resolve().parents[2]

# (layout, storage size) for which each path applies
READ_CASES = {
    "structured": (Layout((4, 3), (1, 4), 1), 16),
    "slices": (Layout((3, 4), (2, 1)), 12),          # overlapping windows: shifted slices
    "row_gather": (Layout((5, 8), (3, 1), 2), 40),
    "gather": (Layout((3, 4), (5, 7), 1), 40),
    "strided_copy": (Layout((24, 20), (1, 24), 3), 500),
}
WRITE_CASES = {
    "block": (Layout((3, 4), (4, 1), 2), 20),
    "structured": (Layout((4, 3), (1, 4), 1), 16),
    "row_scatter": (Layout((5, 8), (10, 1), 2), 60),
    "scatter": (Layout((3, 4), (5, 7), 1), 40),
    "strided_copy": (Layout((24, 20), (1, 24), 3), 500),
    "permutation": (Layout((4, 3), (1, 4)), 12),
}


def test_the_cases_cover_every_path_of_the_tables():
    assert set(READS.table) == set(READ_CASES) and set(WRITES.table) == set(WRITE_CASES)


def _needs_native(method: str) -> None:
    """Skip the strided copy where the C++ extension is not built (fail instead under
    ``FUNCTIONAL_STRIDES_REQUIRE_NATIVE=1``, as in CI, where it must build against the
    floor's FFI headers too)."""
    if method == "strided_copy":
        require_copy_kernel()


@pytest.mark.parametrize("method", READ_CASES)
def test_one_read_per_path(method):
    _needs_native(method)
    layout, n = READ_CASES[method]
    storage = (np.arange(n) % 17).astype(np.float32)
    got = jax.jit(lambda s: fs.materialize(s, layout, method=method))(storage)
    np.testing.assert_array_equal(np.asarray(got), oracle.materialize(storage, layout))
    eager = fs.materialize(jnp.asarray(storage), layout)
    np.testing.assert_array_equal(np.asarray(eager), oracle.materialize(storage, layout))


@pytest.mark.parametrize("method", WRITE_CASES)
def test_one_write_per_path(method):
    _needs_native(method)
    layout, n = WRITE_CASES[method]
    storage = (np.arange(n) % 13).astype(np.float32)
    values = (np.arange(layout.numel) % 7).astype(np.float32).reshape(layout.shape)
    mode = "set" if method == "permutation" else "add"  # a permutation is a set of every slot
    got = jax.jit(lambda s, v: fs.write(s, layout, v, mode=mode, method=method))(storage, values)
    np.testing.assert_array_equal(np.asarray(got), oracle.scatter(storage, layout, values, mode))
    eager = fs.write(jnp.asarray(storage), layout, values, mode="set")
    np.testing.assert_array_equal(np.asarray(eager), oracle.scatter(storage, layout, values, "set"))


def test_views_under_vmap_and_grad():
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4))
    read = jax.vmap(lambda s: fs.StridedArray(s, x.t().layout).contiguous().storage)
    batch = read(jnp.stack([x.storage] * 2))
    np.testing.assert_array_equal(np.asarray(batch)[1], np.arange(12.0).reshape(3, 4).T.reshape(-1))
    grad = jax.grad(lambda s: jnp.sum(jnp.asarray(x.t()[1:].with_storage(s)) ** 2))(x.storage)
    want = np.where(np.arange(12) % 4 == 0, 0.0, 2 * np.arange(12.0))
    np.testing.assert_array_equal(np.asarray(grad), want)
    frames = fs.from_array(jnp.zeros(10)).unfold(0, 4, 2)
    assert frames.at[...].add(1.0).storage.tolist() == [1, 1, 2, 2, 2, 2, 2, 2, 1, 1]


def test_in_place_writes_through_a_view_of_a_ref():
    x = fs.from_ref(jax.new_ref(jnp.zeros(12)))
    x.view(3, 4).t()[1].add_(1.0)

    @jax.jit
    def step(view):
        view[0] += 10.0

    step(x.view(3, 4)[:, ::2])
    want = np.zeros((3, 4))
    want[:, 1] += 1
    want[0, ::2] += 10
    np.testing.assert_array_equal(np.asarray(x.storage[...]).reshape(3, 4), want)


def test_export_holds_standard_stablehlo():
    t = Layout((24, 20), (1, 24), 3)
    storage = jnp.linspace(-1.0, 1.0, 500)
    for f in (lambda s: fs.materialize(s, t), lambda s: fs.write(s, t, 1.0, mode="add")):
        exp = jax.export.export(jax.jit(f))(storage)
        assert "custom_call" not in exp.mlir_module()
        np.testing.assert_array_equal(np.asarray(exp.call(storage)), np.asarray(jax.jit(f)(storage)))


# one storage across two simulated devices: a halo read and write (jax.shard_map, ppermute), a
# transpose (one all-to-all), and the strided copy and write inside jax.shard_map
SHARDED = textwrap.dedent("""
    import os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import functional_strides as fs
    from functional_strides import Layout, StridedArray, oracle

    mesh = Mesh(np.array(jax.devices()), ("x",))
    plain = (np.arange(4160, dtype=np.float32) % 97) - 3
    storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
    frames = StridedArray(storage, Layout.contiguous((4160,))).unfold(0, 256, 64)
    np.testing.assert_array_equal(np.asarray(frames.contiguous()), oracle.materialize(plain, frames.layout))
    src = np.ones(frames.shape, np.float32)
    new = frames.at[...].add(src)
    np.testing.assert_array_equal(np.asarray(new.storage), oracle.scatter(plain, frames.layout, src, "add"))
    t = StridedArray(storage[:4096], Layout.contiguous((64, 64))).t()
    np.testing.assert_array_equal(np.asarray(t.contiguous()), plain[:4096].reshape(64, 64).T)
    from functional_strides._src.native import copy_kernel
    method = "auto" if copy_kernel.native is None else "strided_copy"
    body = lambda s: fs.materialize(s[0], Layout((40, 32), (1, 40)), method=method)[None]
    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    two = plain[:4096].reshape(2, 2048)
    got = np.asarray(f(two))
    np.testing.assert_array_equal(got[1], oracle.materialize(two[1], Layout((40, 32), (1, 40))))
    # a transpose large enough for the tile loop of XLA's ops, inside jax.shard_map
    big = np.arange(2 * 256 * 256, dtype=np.float32).reshape(2, -1)
    tiles = Layout((256, 256), (1, 256))
    body = lambda s: fs.materialize(s[0], tiles, method="structured")[None]
    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    np.testing.assert_array_equal(np.asarray(f(big))[1], big[1].reshape(256, 256).T)
    print("OK")
""")


@pytest.mark.slow
def test_one_storage_across_devices():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", SHARDED], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.split() == ["OK"], proc.stdout + proc.stderr


def _floor(name: str) -> tuple[int, ...]:
    """The floor of ``name`` in the ``[project]`` dependencies of pyproject.toml."""
    text = (REPO / "pyproject.toml").read_text()
    dependencies = text.split("\n[project]\n", 1)[1].split("\ndependencies = [", 1)[1].split("\n]", 1)[0]
    (version,) = re.findall(rf'"{name}>=([0-9.]+)"', dependencies)
    return tuple(int(p) for p in version.split("."))


def _version(module) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", module.__version__)[:3])


def test_the_installed_versions_are_at_least_the_declared_floors():
    import jaxlib
    import ml_dtypes

    for module in (jax, jaxlib, np, ml_dtypes):
        assert _version(module) >= _floor(module.__name__), module
    assert _floor("jax") == _floor("jaxlib")


def test_ci_runs_this_subset_on_the_floor_without_torch():
    script = (REPO / ".ci" / "run").read_text()
    floor = script[script.index("read -r jax_floor jaxlib_floor"):]
    assert '"jax==$jax_floor" "jaxlib==$jaxlib_floor"' in floor and "--no-build-isolation -e ." in floor
    assert '"numpy==$numpy_floor.*"' in floor and '"ml_dtypes==$ml_dtypes_floor.*"' in floor
    assert "parity" not in floor and "torch==" not in floor
    assert "python -m pytest -q tests/repo/test_smoke.py README.md" in floor
