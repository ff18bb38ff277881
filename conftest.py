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

# the built documentation site copies every page's source (docs/_build/html/_sources/*.md):
# the pages are tested where they are written, once
collect_ignore_glob = ["docs/_build/*", "docs/_generated/*", "docs/_autosummary/*"]

# The default profile draws the same examples in every run (derandomized: a seed per test), so
# that a green run is green again on the same code; HYPOTHESIS_PROFILE=dev or =thorough draws
# fresh ones each run, to look further.
settings.register_profile(
    "ci", max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# The fast loop (``pytest -m "not slow"``) draws a quarter as many (``fast``; tests that name
# their own count take it through ``_support.examples``, which scales it the same way).
settings.register_profile(
    "fast", max_examples=5, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _fast_loop(config) -> bool:
    """Whether this run deselects the slow tests (``-m "not slow"``, alone or with more)."""
    return "not slow" in " ".join((config.option.markexpr or "").split())


def pytest_configure(config):
    if _fast_loop(config) and "HYPOTHESIS_PROFILE" not in os.environ:
        settings.load_profile("fast")


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    """Names the docstring examples use without importing them, as JAX's examples assume
    ``import jax.numpy as jnp``: ``fs`` (``import functional_strides as fs``), ``views``,
    ``jnp``, ``np`` and ``jax``."""
    doctest_namespace.update(fs=fs, views=views, jnp=jnp, np=np, jax=jax)


def _torch_examples(examples) -> list:
    """The doctest examples that need PyTorch: those that mention ``torch`` and, in order,
    those that use a name bound by one of them (read with ``ast``)."""
    import ast

    tainted: set[str] = set()
    found = []
    for ex in examples:
        try:
            tree = ast.parse(ex.source)
        except SyntaxError:
            continue
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        if "torch" in ex.source or used & tainted:
            found.append(ex)
            tainted |= {n.id for n in ast.walk(tree)
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            tainted |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                        if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return found


def pytest_collection_modifyitems(config, items):
    """Without PyTorch (the parity extra), skip the doctest examples that need it (see
    ``_torch_examples``), and whole doctests made only of them; with
    FUNCTIONAL_STRIDES_REQUIRE_TORCH=1 (CI) they all run."""
    import doctest
    import importlib.util

    import pytest
    from _pytest.doctest import DoctestItem

    required = os.environ.get("FUNCTIONAL_STRIDES_REQUIRE_TORCH") == "1"
    if importlib.util.find_spec("torch") is not None or required:
        return
    skip = pytest.mark.skip(reason='PyTorch is not installed; this example needs it: '
                                   'python -m pip install -e ".[test,parity]"')
    for item in items:
        if not isinstance(item, DoctestItem):
            continue
        needs = _torch_examples(item.dtest.examples)
        for ex in needs:
            ex.options[doctest.SKIP] = True
        if needs and len(needs) == len(item.dtest.examples):
            item.add_marker(skip)
