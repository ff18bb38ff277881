"""The bounded cache of the package's compiled programs (``_src/lowering/programs.py``).

Eager reads and writes compile one program per signature and keep it in one LRU cache of
``PROGRAM_CACHE_SIZE`` programs: the cache never holds more, an evicted program is garbage
(so its executable goes), values stay those of the oracle whatever was evicted, a repeated
signature compiles nothing new, and ``fs.clear_caches()`` drops every program.
"""

from __future__ import annotations

import gc
import re
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import functional_strides as fs
from functional_strides import Layout, LayoutError, oracle
from functional_strides._src.lowering import programs
from functional_strides._src.lowering.programs import PROGRAMS, ProgramCache


@pytest.fixture
def small_cache(monkeypatch):
    """The package's cache cut to 4 programs for one test, emptied before and after."""
    PROGRAMS.clear()
    monkeypatch.setattr(PROGRAMS, "maxsize", 4)
    yield PROGRAMS
    PROGRAMS.clear()


def test_lru_order_eviction_and_clear():
    cache = ProgramCache(3)
    built = []

    def build(k):
        built.append(k)
        return f"program {k}"

    for k in (1, 2, 3, 1, 4, 2, 5):
        assert cache.get(k, lambda k=k: build(k)) == f"program {k}"
    assert built == [1, 2, 3, 4, 2, 5]  # 1 was used again before 4 came, so 2 went first
    assert cache.keys() == [4, 2, 5] and len(cache) == 3
    assert (cache.hits, cache.misses) == (1, 6)
    cache.clear()
    assert cache.keys() == [] and (cache.hits, cache.misses) == (0, 0)


def test_the_documented_size():
    assert programs.PROGRAM_CACHE_SIZE == 256 and PROGRAMS.maxsize == programs.PROGRAM_CACHE_SIZE


def test_a_cached_program_traces_once_per_signature():
    traces = []

    @programs.cached(static_argnames=("k",))
    def scale(x, *, k):
        traces.append((x.shape, x.dtype, k))
        return x * k

    x = jnp.arange(3.0)
    assert scale(x, k=2).tolist() == [0.0, 2.0, 4.0]
    assert scale(x + 1, k=2).tolist() == [2.0, 4.0, 6.0]  # same signature: no new trace
    assert scale(x, k=3).tolist() == [0.0, 3.0, 6.0]  # another static argument
    assert scale(jnp.arange(3), k=3).tolist() == [0, 3, 6]  # another dtype
    assert scale(np.arange(2.0, dtype=np.float32), k=3).tolist() == [0.0, 3.0]  # a NumPy array
    assert len(traces) == 4 and scale._cache_size() == 4
    assert "multiply" in scale.lower(x, k=5).as_text()
    PROGRAMS.clear()
    assert scale._cache_size() == 0


@pytest.mark.slow
def test_the_cache_never_holds_more_than_its_size(small_cache):
    """Ten fresh shapes through eager reads and writes: at most four programs held, values
    equal to the oracle's (programs evicted and compiled again on the way)."""
    for n in range(3, 13):
        storage = np.arange(4 * n, dtype=np.float32)
        s = jax.device_put(storage)
        for layout in (Layout((4, n), (1, 4)), Layout((n, 2), (4, 2), 1)):
            want = oracle.materialize(storage, layout)
            np.testing.assert_array_equal(np.asarray(fs.materialize(s, layout)), want)
            got = fs.write(s, layout, 1.0, mode="add")
            want = oracle.scatter(storage, layout, np.ones(layout.shape, np.float32), mode="add")
            np.testing.assert_array_equal(np.asarray(got), want)
            assert len(small_cache) <= 4
    x = fs.from_array(jnp.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(np.asarray(x.permute(2, 0, 1).contiguous()),
                                  np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1))
    assert len(small_cache) <= 4


def test_an_evicted_program_is_garbage(small_cache):
    """The cache holds the only reference: once evicted (or cleared), the jitted function and
    what JAX keeps for it weakly are freed."""
    s = jax.device_put(np.arange(64, dtype=np.float32))
    fs.materialize(s, Layout((5, 3), (1, 5)))
    (key,) = small_cache.keys()
    first = weakref.ref(small_cache.get(key, lambda: pytest.fail("built again")))
    for n in range(6, 11):  # four more shapes push it out
        fs.materialize(s, Layout((n, 3), (1, n)))
    assert key not in small_cache.keys()
    gc.collect()
    assert first() is None
    fs.materialize(s, Layout((4, 4), (1, 4)))
    survivor = weakref.ref(small_cache.get(small_cache.keys()[-1], lambda: pytest.fail("built again")))
    fs.clear_caches()
    gc.collect()
    assert len(small_cache) == 0 and survivor() is None


def test_eager_programs_live_in_the_cache_and_a_known_signature_compiles_nothing():
    PROGRAMS.clear()
    s = jax.device_put(np.arange(100, dtype=np.float32))
    fs.materialize(s, Layout((7, 3), (1, 7)))
    fs.write(s, Layout((7, 3), (1, 7)), 2.0)
    fs.from_array(jnp.zeros((7, 3))).t().contiguous()
    held = len(PROGRAMS)
    assert held >= 3
    misses = PROGRAMS.misses
    fs.materialize(s, Layout((7, 3), (2, 9), 4))  # a new layout of a known shape: no new program
    fs.write(s, Layout((7, 3), (3, 11), 1), 5.0)
    assert PROGRAMS.misses == misses and len(PROGRAMS) == held
    fs.clear_caches()
    assert len(PROGRAMS) == 0


def test_shape_helpers_match_jnp_and_pass_traced_values_through():
    x = jnp.arange(6.0).reshape(2, 3)
    assert programs.reshape(x, (6,)).tolist() == list(range(6))
    assert programs.reshape(x, (2, 3)) is x
    assert programs.broadcast_to(jnp.arange(3.0), (2, 3)).tolist() == [[0.0, 1.0, 2.0]] * 2
    assert programs.broadcast_to(x, (2, 3)) is x
    message = "Incompatible shapes for broadcasting: (2, 3) and requested shape (3,)"
    with pytest.raises(ValueError, match=re.escape(message)):
        programs.broadcast_to(x, (3,))
    with pytest.raises(ValueError):
        programs.broadcast_to(jnp.arange(3.0), (2, 4))
    PROGRAMS.clear()
    traced = jax.jit(lambda v: programs.broadcast_to(programs.reshape(v, (3, 2)), (4, 3, 2)).sum())(x)
    assert float(traced) == 4 * 15.0 and len(PROGRAMS) == 0  # inside jit: the caller's program


def test_a_src_that_does_not_broadcast_is_still_refused():
    x = fs.from_array(jnp.zeros((3, 4)))
    with pytest.raises(LayoutError, match=re.escape("at[].set: src of shape (2,) is not broadcastable to the "
                                                    "view's shape (3, 4)")):
        x.at[:].set(jnp.ones(2))
