"""Differential tests of ``functional_strides.cute`` against CUTLASS's ``pycute`` on the same inputs.

``pycute`` ships in the ``nvidia-cutlass`` wheel (``pip install -e .[cute-test]``; CI installs it
and fails rather than skip). Results are equal wherever pycute's are right; the cases where
pycute returns a wrong layout are named. A property test whose draws may be refused by one
side counts the draws it really compared, and fails when too few were (a test that compares
nothing must not pass).
"""

from __future__ import annotations

import pytest
from _support import import_pycute
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cute_algebra import images, layouts, tileable_layouts

from functional_strides import LayoutError
from functional_strides import cute as ours

pycute = import_pycute()


def _expect_compared(compared: list[str], fraction: float = 0.2) -> None:
    """At least ``fraction`` of the profile's examples were compared on both sides."""
    least = max(1, int(settings.default.max_examples * fraction))
    assert len(compared) >= least, (
        f"only {len(compared)} draws were compared with pycute (want >= {least} of "
        f"{settings.default.max_examples}): the strategy draws mostly refused inputs")


def theirs(layout):
    return pycute.Layout(layout.shape, layout.stride)


def same(a, b):
    return a.shape == b.shape and a.stride == b.stride


def pycute_result(fn, *args):
    try:
        return fn(*args)
    except (AssertionError, ZeroDivisionError, IndexError):
        return None


@given(layouts(negative=True))
def test_coalesce_filter_and_right_inverse_equal_pycute(layout):
    assert same(ours.coalesce(layout), pycute.coalesce(theirs(layout)))
    assert same(ours.filter(layout), pycute.filter(theirs(layout)))
    assert same(ours.right_inverse(layout), pycute.right_inverse(theirs(layout)))


@given(layouts())
def test_cosize_equals_pycute_for_non_negative_strides(layout):
    assert ours.cosize(layout) == pycute.cosize(theirs(layout))


def test_complement_equals_pycute():
    compared: list[str] = []

    @given(layouts(), st.integers(1, 50))
    def check(layout, bound):
        try:
            mine = ours.complement(layout, bound)
        except LayoutError:   # overlapping modes: pycute returns extent-0 or non-disjoint modes
            return
        assert same(mine, pycute.complement(theirs(layout), bound))
        compared.append("complement")

    check()
    _expect_compared(compared)


def test_composition_equals_pycute_where_it_is_right():
    compared: list[str] = []

    @given(layouts(), layouts(max_extent=3, max_stride=6))
    def check(a, b):
        other = pycute_result(pycute.composition, theirs(a), theirs(b))
        try:
            mine = ours.composition(a, b)
        except LayoutError:
            # ours refuses: pycute asserts, or returns a layout of the wrong size
            assert other is None or pycute.size(other) != ours.size(b)
            return
        if other is not None:
            assert same(mine, other)
            compared.append("composition")

    check()
    _expect_compared(compared)


@given(tileable_layouts())
def test_left_inverse_equals_pycute(layout):
    assert same(ours.left_inverse(layout), pycute.left_inverse(theirs(layout)))


def test_divides_equal_pycute():
    compared: list[str] = []

    @given(tileable_layouts(), st.integers(1, 4))
    def check(tile, reps):
        a = ours.Layout(max(ours.cosize(tile), ours.size(tile)) * reps)
        for name in ("logical_divide", "zipped_divide", "tiled_divide"):
            try:
                mine = getattr(ours, name)(a, tile)
            except LayoutError:
                continue
            other = pycute_result(getattr(pycute, name), theirs(a), theirs(tile))
            if other is not None:
                assert same(mine, other), name
                compared.append(name)

    check()
    for name in ("logical_divide", "zipped_divide", "tiled_divide"):
        _expect_compared([c for c in compared if c == name])


def test_products_equal_pycute():
    compared: list[str] = []

    @given(tileable_layouts(), tileable_layouts())
    def check(block, tiler):
        for name in ("logical_product", "zipped_product", "tiled_product"):
            try:
                mine = getattr(ours, name)(block, tiler)
            except LayoutError:
                continue
            other = pycute_result(getattr(pycute, name), theirs(block), theirs(tiler))
            if other is not None:
                assert same(mine, other), name
                compared.append(name)

    check()
    for name in ("logical_product", "zipped_product", "tiled_product"):
        _expect_compared([c for c in compared if c == name])


@pytest.mark.parametrize(("shape", "index"), [((2, 3), 5), (((2, 2), 3), 7), ((4, (2, 3)), 17)])
def test_int_tuple_helpers_equal_pycute(shape, index):
    assert ours.idx2crd(index, shape) == pycute.idx2crd(index, shape)
    crd = pycute.idx2crd(index, shape)
    assert ours.crd2idx(crd, shape) == pycute.crd2idx(crd, shape) == index
    assert ours.prefix_product(shape) == pycute.prefix_product(shape)
    assert ours.shape_div(shape, 2) == pycute.shape_div(shape, 2)


def test_where_pycute_is_wrong():
    # 1. composition without the shape-divisibility check: 4 elements for a 6-element B.
    a, b = ours.Layout((4, 3), (1, 10)), ours.Layout(6, 1)
    assert pycute.size(pycute.composition(theirs(a), theirs(b))) == 4
    with pytest.raises(LayoutError, match="shape divisibility"):
        ours.composition(a, b)
    # 2. logical_product with an int tiler divides instead.
    assert str(pycute.logical_product(pycute.Layout(2, 1), 3)) == "(3, 1):(1, 0)"
    assert ours.logical_product(ours.Layout(2, 1), 3) == ours.Layout((2, 3), (1, 2))
    # 3. cosize of negative strides is L(size - 1) + 1, below the largest image + 1.
    assert pycute.cosize(pycute.Layout(4, -1)) == -2
    assert ours.cosize(ours.Layout(4, -1)) == 1 == max(images(ours.Layout(4, -1))) + 1
    # 4. complement of an overlapping layout has an extent-0 mode.
    assert str(pycute.complement(pycute.Layout((2, 2), (1, 1)))) == "0:2"
    with pytest.raises(LayoutError, match="starts inside the span"):
        ours.complement(ours.Layout((2, 2), (1, 1)))
    # 5. left inverse of (2, 2):(1, 3) (injective; its complement leaves a gap): not an inverse.
    inv = pycute.left_inverse(pycute.Layout((2, 2), (1, 3)))
    assert [inv(x) for x in (0, 1, 3, 4)] != [0, 1, 2, 3]
    with pytest.raises(LayoutError, match="not a multiple of the span"):
        ours.left_inverse(ours.Layout((2, 2), (1, 3)))
