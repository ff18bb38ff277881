"""Test configuration: strict JAX numerics and bounded hypothesis profiles."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import functional_strides as fs
from functional_strides import views

jax.config.update("jax_numpy_rank_promotion", "raise")

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    """Names the docstring examples use without importing them, as JAX's examples assume
    ``import jax.numpy as jnp``: ``fs`` (``import functional_strides as fs``), ``views``,
    ``jnp``, ``np`` and ``jax``."""
    doctest_namespace.update(fs=fs, views=views, jnp=jnp, np=np, jax=jax)
