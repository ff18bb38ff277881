"""The promises the lowering makes to XLA hold for every layout that gets them.

``lax.gather``/``lax.scatter`` take ``indices_are_sorted``, ``unique_indices`` and
``mode=PROMISE_IN_BOUNDS`` on trust: a wrong promise is undefined behaviour on GPU and
usually invisible on CPU, so the value tests cannot see it. Each test below rebuilds, with
the library's own helpers, the exact layout (or row starts and row length) a path hands to
XLA, computes its storage indices with the NumPy oracle, and checks the promise the path
makes against those indices:

* ``lowering._element_gather``: sorted iff ``is_monotone(user)``, unique iff
  ``is_non_overlapping_sufficient(user)``, in bounds after ``check_in_storage``;
* ``lowering._row_gather``: row starts in bounds with the row length ``_row_length`` picks,
  sorted iff ``is_monotone(outer)``;
* ``lowering._eager_gather`` / ``scatter._eager_write``: in bounds after ``check_in_storage``
  (``required_storage_size`` is the largest index + 1), unique iff no overlap witness;
* ``scatter._element_scatter``: unique when no overlap is found on the reduced layout,
  sorted iff ``is_monotone(reduced)``;
* ``scatter._row_scatter`` (and the product scatter it hands rows to): rows in bounds,
  starts sorted iff ``is_monotone(outer)``, rows disjoint when ``mode="set"`` promises unique
  indices;
* ``lowering.dynamic_window``: the clamped window always lies in the storage and holds the
  view at offset 0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import layouts

from functional_strides import Layout, StorageError, oracle
from functional_strides._src.core.canonical import box, canonicalize, inner_box_start
from functional_strides._src.core.layout import check_in_storage
from functional_strides._src.core.overlap import overlap as overlap
from functional_strides._src.core.overlap.overlap import is_monotone, is_non_overlapping_sufficient
from functional_strides._src.core.strategies import Need
from functional_strides._src.lowering import reads as lowering
from functional_strides._src.lowering import writes as scatter

MODES = ("set", "add", "mul", "min", "max")


def _indices(layout: Layout) -> np.ndarray:
    return oracle.element_indices(layout)


def _is_sorted(idx: np.ndarray) -> bool:
    return bool(np.all(np.diff(idx) >= 0))


def _is_unique(idx: np.ndarray) -> bool:
    return len(np.unique(idx)) == len(idx)


# -- the predicates themselves --------------------------------------------------------------

@given(layout=layouts())
def test_is_monotone_iff_indices_sorted(layout):
    # is_monotone's docstring: "holds iff" the row-major indices never decrease (an empty
    # layout may answer False: not promising is always safe).
    idx = _indices(layout)
    if is_monotone(layout):
        assert _is_sorted(idx), layout
    if idx.size:
        assert is_monotone(layout) == _is_sorted(idx), layout


@given(layout=layouts(max_stride=12))
def test_non_overlapping_sufficient_implies_unique(layout):
    if is_non_overlapping_sufficient(layout):
        assert _is_unique(_indices(layout)), layout


@pytest.mark.parametrize("shape, strides, sufficient, monotone", [
    ((3, 4), (4, 1), True, True),
    ((3, 4), (1, 3), True, False),       # transposed: unique, not sorted
    ((3, 4), (3, 1), False, True),       # rows overlap by one element, indices repeat in order
    ((3, 4), (4, 0), False, True),       # expanded: repeats, still non-decreasing
    ((5, 4), (2, 1), False, False),      # unfold(4, 2): overlapping windows
    ((2, 1, 3), (3, 0, 1), True, True),  # a size-1 dim's stride is ignored
    ((1, 1), (0, 0), True, True),
    ((0, 3), (0, 0), True, None),        # empty: nothing to repeat (either answer is safe)
    ((2, 2), (2, 2), False, True),       # (0,1) and (1,0) both address 2, in order
    ((2, 3), (2, 1), False, True),       # 0 1 2 2 3 4: sorted with a repeat
    ((3, 2), (1, 2), False, False),      # 0 2 1 3 2 4
], ids=str)
def test_predicates_on_fixed_layouts(shape, strides, sufficient, monotone):
    layout = Layout(shape, strides, 1)
    idx = _indices(layout)
    assert is_non_overlapping_sufficient(layout) is sufficient
    if monotone is not None:
        assert is_monotone(layout) is monotone
        assert _is_sorted(idx) is monotone
    if sufficient:
        assert _is_unique(idx)


@given(layout=layouts())
def test_required_storage_size_is_largest_index_plus_one(layout):
    # check_in_storage compares required_storage_size with the storage length before every
    # PROMISE_IN_BOUNDS gather/scatter (the eager paths too): it must be max index + 1 exactly.
    idx = _indices(layout)
    assert layout.required_storage_size == (int(idx.max()) + 1 if idx.size else 0)
    if idx.size:
        assert idx.min() >= 0
        check_in_storage("materialize", layout.shape, layout.strides, layout.offset, int(idx.max()) + 1)
        with pytest.raises(StorageError):
            check_in_storage("materialize", layout.shape, layout.strides, layout.offset, int(idx.max()))


# -- reads ------------------------------------------------------------------------------------

@given(layout=layouts(), slack=st.integers(0, 3))
def test_element_gather_promises(layout, slack):
    n = layout.required_storage_size + slack
    c = canonicalize(layout)
    if c.empty:
        return
    # the layout _element_gather hands to lax.gather
    user = Layout(tuple(k for k, _ in c.user_dims), tuple(s for _, s in c.user_dims), c.offset)
    idx = _indices(user)
    assert set(idx.tolist()) == set(_indices(layout).tolist())  # it reads what the view reads
    assert idx.min() >= 0 and idx.max() < n  # PROMISE_IN_BOUNDS
    if is_monotone(user):
        assert _is_sorted(idx), user
    if is_non_overlapping_sufficient(user):
        assert _is_unique(idx), user


@given(layout=layouts(max_stride=12), slack=st.integers(0, 3))
def test_row_gather_promises(layout, slack):
    n = layout.required_storage_size + slack
    c = canonicalize(layout)
    if c.empty or not lowering.READS.applies(c, Need())["row_gather"]:
        return
    # as _row_gather splits the canonical dims into row starts (outer) and rows (inner)
    k = max(1, inner_box_start(c.dims))
    outer, inner = Layout(*zip(*c.dims[:k], strict=True)), box(c.dims[k:])
    row = lowering._row_length(inner, n - (c.offset + outer.span))
    starts = _indices(Layout(outer.shape, outer.strides, c.offset))
    assert row >= 1
    assert starts.min() >= 0 and starts.max() + row <= n, (layout, n, row)  # PROMISE_IN_BOUNDS
    if is_monotone(outer):
        assert _is_sorted(starts), (layout, outer)


# -- writes ------------------------------------------------------------------------------------

@given(layout=layouts(), mode=st.sampled_from(MODES))
def test_element_scatter_promises(layout, mode):
    c = canonicalize(layout)
    if c.empty:
        return
    # as write() and _element_scatter decide overlap, uniqueness and sortedness
    overlapping = overlap.internal_overlap_witness(layout) is not None
    reduced = scatter._reduced_layout(layout, c)
    if overlapping and c.broadcast:
        overlapping = overlap.internal_overlap_witness(reduced) is not None
    last_wins = overlapping and mode == "set"
    idx = _indices(reduced)
    assert set(idx.tolist()) == set(_indices(layout).tolist())
    assert idx.min() >= 0 and idx.max() < layout.required_storage_size
    if not overlapping:  # unique_indices=True
        assert _is_unique(idx), reduced
    if is_monotone(reduced) and not last_wins:  # indices_are_sorted=True
        assert _is_sorted(idx), reduced
    # the eager path promises uniqueness from the witness on the whole layout
    if overlap.internal_overlap_witness(layout) is None:
        assert _is_unique(_indices(layout)), layout


@given(layout=layouts(max_stride=12), slack=st.integers(0, 3), mode=st.sampled_from(MODES))
def test_row_scatter_promises(layout, slack, mode):
    n = layout.required_storage_size + slack
    c = canonicalize(layout)
    if c.empty or not scatter.WRITES.applies(c, Need(n, mode))["row_scatter"]:
        return
    _, outer, inner = scatter._split_rows(c)
    starts = _indices(outer)
    assert starts.min() >= 0 and starts.max() + inner.reach <= n, (layout, n)  # PROMISE_IN_BOUNDS
    if is_monotone(outer):  # indices_are_sorted (also ScatterSpec.indices_are_sorted)
        assert _is_sorted(starts), outer
    if mode == "set":  # unique_indices=True: the windows written must not share a slot
        ordered = np.sort(starts.reshape(-1))
        assert np.all(np.diff(ordered) >= inner.reach), (layout, inner.reach)
        # and the rows hold exactly the view's slots (no gap is overwritten; stride-0 dims,
        # read once, repeat slots)
        slots = (ordered[:, None] + np.arange(inner.reach)[None, :]).reshape(-1)
        assert sorted(slots.tolist()) == np.unique(_indices(layout)).tolist()


# -- traced offsets ----------------------------------------------------------------------------

@given(layout=layouts(min_rank=1), slack=st.integers(0, 3), shift=st.integers(-3, 3))
def test_dynamic_window_lies_in_storage(layout, slack, shift):
    if layout.is_empty:
        return
    n = layout.required_storage_size + slack
    reach = layout.span + 1
    storage = jnp.arange(n, dtype=jnp.float32)
    locals_ = []

    def read(offset):  # traced, as under jit: an offset out of range is clamped, not refused
        start, window, local = lowering.dynamic_window(storage, Layout(layout.shape, layout.strides, offset))
        locals_.append(local)
        return start, window

    read = jax.jit(read)
    for offset in (layout.offset + shift, -1, n - reach, n - reach + 1):
        start, window = read(jnp.asarray(offset, jnp.int32))
        local = locals_[-1]
        start = int(start)
        assert 0 <= start <= n - reach
        assert window.shape == (reach,) and local.offset == 0
        assert local.required_storage_size == reach  # every static path fits the window
        np.testing.assert_array_equal(np.asarray(window), np.arange(start, start + reach))
        if 0 <= offset <= n - reach:
            assert start == offset
