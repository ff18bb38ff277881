"""A test file as a user writes it, against the public names only (docs/testing.md shows it)."""

import chex
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import functional_strides as fs
import functional_strides.testing as fst


def sliding_sums(x: fs.StridedArray, size: int) -> jnp.ndarray:
    """Sums of the windows of ``size`` along the last dim, through an unfold view."""
    return jnp.asarray(x.unfold(-1, size, 1)).sum(-1)


class SlidingSumsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    @settings(max_examples=20, deadline=None)
    @given(x=fst.strided_arrays(fst.layouts(min_rank=1, empty=False)), data=st.data())
    def test_matches_numpy(self, x, data):
        size = data.draw(st.integers(1, x.shape[-1]))
        got = self.variant(sliding_sums, static_argnums=1)(x, size)
        windows = np.lib.stride_tricks.sliding_window_view(np.asarray(x), size, axis=-1)
        np.testing.assert_allclose(got, windows.sum(-1), rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    @settings(max_examples=20, deadline=None)
    @given(x=fst.strided_arrays(), data=st.data())
    def test_a_jitted_chain_returns_the_same_view(self, x, data):
        chain = data.draw(fst.view_chains(x, max_len=3))
        out = self.variant(chain.apply)(x)
        if out is not None:
            fst.assert_views_equal(out, chain.apply(x))
            fst.assert_matches_oracle(out)
