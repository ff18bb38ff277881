"""Shared helpers of the test folders: ``strategies`` (hypothesis strategies) and ``_support``
(skips and requirements) live in ``tests/`` and are imported by name from every folder; the
``sampled`` marker's hook."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _sample(items: list, share: int) -> set[int]:
    """Indices of a spread sample of one test's parametrised cases: every value of each
    parameter that takes few values (at most one per ``share`` cases: a dtype, a mode) at
    least once, greedily, the case that shows the most unseen values first; then more cases in
    a fixed pseudo-random order up to one in ``share``."""
    import hashlib

    def params(item) -> dict:
        spec = getattr(item, "callspec", None)
        return spec.params if spec else {}

    names = {k for item in items for k in params(item)}
    few = {k for k in names if len({repr(params(it).get(k)) for it in items}) * share <= len(items)}

    def values(item) -> set[tuple[str, str]]:
        return {(k, repr(v)) for k, v in params(item).items() if k in few}

    def order(i: int) -> str:
        return hashlib.sha256(items[i].nodeid.encode()).hexdigest()

    ranked = sorted(range(len(items)), key=order)
    unseen = set().union(*(values(it) for it in items))
    chosen: set[int] = set()
    while unseen:
        best = max(ranked, key=lambda i: len(values(items[i]) & unseen))
        chosen.add(best)
        unseen -= values(items[best])
    for i in ranked:
        if len(chosen) * share >= len(items):
            break
        chosen.add(i)
    return chosen


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test marked ``sampled(share)`` is a table of cases of which the fast loop (``pytest
    -m "not slow"``) runs one in ``share``, chosen by :func:`_sample`; the others are marked
    ``slow``, so the full run still runs them all. Runs before ``-m`` deselects."""
    tables: dict[tuple[str, str], list] = {}
    for item in items:
        mark = item.get_closest_marker("sampled")
        if mark is not None:
            tables.setdefault((item.path, item.originalname), []).append(item)
    for cases in tables.values():
        share = cases[0].get_closest_marker("sampled").args[0]
        keep = _sample(cases, share)
        for i, item in enumerate(cases):
            if i not in keep:
                item.add_marker(pytest.mark.slow)
