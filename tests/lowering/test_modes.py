"""The one table of write modes (``lowering/modes.py``): each mode's identity leaves every value
bit for bit (``-0.0``, NaN, infinities, bool, complex), and every write path keeps the slots
a view leaves alone and combines the others as the oracle does, for ``-0.0``, bool and complex
storages (the sharded paths: ``tests/sharding/test_write_modes.py``)."""

import jax.numpy as jnp
import numpy as np
import pytest

import functional_strides as fs
from functional_strides import Layout, oracle
from functional_strides._src.lowering import modes

SAMPLES = {
    jnp.float32: [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.4e38],   # XLA:CPU flushes subnormals
    jnp.bfloat16: [0.0, -0.0, 1.5, -np.inf, np.nan],
    jnp.int8: [0, 1, -1, 127, -128],
    jnp.uint32: [0, 1, 2**32 - 1],
    jnp.bool_: [False, True],
    jnp.complex64: [complex(-0.0, -0.0), complex(0.0, -0.0), complex(1.0, -2.0), complex(np.inf, np.nan)],
}


def _bits(x) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


@pytest.mark.parametrize("dtype", list(SAMPLES), ids=lambda d: jnp.dtype(d).name)
@pytest.mark.parametrize("mode", ["add", "mul", "min", "max"])
def test_the_identity_leaves_every_value_bit_for_bit(mode, dtype):
    x = jnp.asarray(SAMPLES[dtype], dtype)
    kind = modes.storage_mode(mode, dtype)
    if not modes.has_exact_identity(kind, dtype):  # (-0-0j) * (1+0j) is 0-0j: the paths mask instead
        assert jnp.dtype(dtype) == jnp.complex64 and mode != "add"
        return
    got = modes.combine(kind, x, jnp.broadcast_to(modes.identity(kind, dtype), x.shape))
    np.testing.assert_array_equal(_bits(got), _bits(x))


def test_bool_adds_as_or_and_multiplies_as_and():
    assert modes.storage_mode("add", jnp.bool_) == "max" and modes.storage_mode("mul", jnp.bool_) == "min"
    assert modes.storage_mode("add", jnp.int8) == "add"
    assert modes.identity("set", jnp.float32) == 0 and not modes.identity("max", jnp.bool_)


#: A view each write path applies to, leaving slots of the storage alone (36 elements).
VIEWS = {
    "block": Layout((10,), (1,), 5),
    "structured": Layout((3, 4), (1, 9), 2),
    "row_scatter": Layout((3, 5), (11, 1), 1),
    "scatter": Layout((4, 3), (7, 3), 0),
    "strided_copy": Layout((4, 8), (9, 1), 0),
}
STORAGES = {
    "float32": np.where(np.arange(36) % 3 == 0, -0.0, np.arange(36) * 0.5).astype(np.float32),
    "bool": (np.arange(36) % 3 == 1),
    "complex64": np.array([complex(-0.0, -0.0) if i % 2 else complex(i, -0.0) for i in range(36)],
                          np.complex64),
}


def _src(name: str, shape) -> np.ndarray:
    k = np.arange(int(np.prod(shape))).reshape(shape)
    if name == "bool":
        return k % 2 == 0
    values = np.where(k % 4 == 0, -0.0, k % 5 - 1.5)
    return values.astype(STORAGES[name].dtype)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("storage", list(STORAGES))
@pytest.mark.parametrize("method", list(VIEWS))
def test_every_write_path_keeps_what_the_view_leaves(method, storage):
    plain, layout = STORAGES[storage], VIEWS[method]
    src = _src(storage, layout.shape)
    for mode in ("set", "add", "mul", "min", "max"):
        if storage == "complex64" and mode in ("min", "max"):
            continue
        try:
            got = fs.write(jnp.asarray(plain), layout, src, mode=mode, method=method)
        except fs.LayoutError as err:  # the strided write takes set and add of some dtypes
            assert method == "strided_copy" and "strided_copy" in str(err), err
            continue
        want = oracle.scatter(plain, layout, src, mode)
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"{method} {mode} {storage}")
