"""CuTe's layout algebra (``functional_strides.cute``) checked by the defining property of each
operation over its whole domain, on hypothesis layouts (small, nested), plus worked values."""

from __future__ import annotations

import itertools
import pickle
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from functional_strides import LayoutError, cute
from functional_strides.cute import (
    ComposedLayout,
    Layout,
    Swizzle,
    blocked_product,
    coalesce,
    complement,
    composition,
    cosize,
    crd2idx,
    depth,
    filter,
    flat_divide,
    flatten,
    idx2crd,
    left_inverse,
    logical_divide,
    logical_product,
    make_layout,
    raked_product,
    rank,
    right_inverse,
    shape_div,
    size,
    slice_and_offset,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)


# -- strategies ------------------------------------------------------------------------------
@st.composite
def int_tuples(draw, leaf, max_leaves=4, depth_left=2):
    """An int or a nested tuple of ints (leaves drawn from ``leaf``), at most ``max_leaves`` leaves."""
    if depth_left == 0 or draw(st.booleans()):
        return draw(leaf)
    n = draw(st.integers(1, 3))
    return tuple(draw(int_tuples(leaf, max_leaves=max(1, max_leaves // n), depth_left=depth_left - 1))
                 for _ in range(n))


def _with_leaves(profile, leaves):
    it = iter(leaves)

    def build(p):
        return tuple(build(q) for q in p) if isinstance(p, tuple) else next(it)
    return build(profile)


@st.composite
def layouts(draw, max_extent=4, max_stride=12, negative=False):
    shape = draw(int_tuples(st.integers(1, max_extent)))
    low = -max_stride if negative else 0
    strides = draw(st.lists(st.integers(low, max_stride), min_size=len(flatten(shape)),
                            max_size=len(flatten(shape))))
    if draw(st.booleans()):
        return Layout(shape)  # compact column-major
    return Layout(shape, _with_leaves(shape, strides))


@st.composite
def tileable_layouts(draw):
    """Injective layouts whose sorted strides each are a multiple of the span below (gaps allowed),
    in a random mode order: those with an exact complement."""
    k = draw(st.integers(1, 3))
    extents = draw(st.lists(st.integers(1, 4), min_size=k, max_size=k))
    gaps = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    strides, span = [], 1
    for n, g in zip(extents, gaps, strict=True):
        strides.append(span * g)
        span = span * g * n
    order = draw(st.permutations(range(k)))
    return Layout(tuple(extents[i] for i in order), tuple(strides[i] for i in order))


def images(layout):
    return [layout(i) for i in range(size(layout))]


def is_injective(layout):
    im = images(layout)
    return len(set(im)) == len(im)


# -- Layout record -----------------------------------------------------------------------------
def test_layout_is_immutable_hashable_and_picklable():
    a, b = Layout((2, (3, 4)), (1, (2, 6))), Layout((2, (3, 4)))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Layout(4, 1) != Layout((4,), (1,))
    with pytest.raises(AttributeError, match="immutable"):
        a.shape = 3
    assert pickle.loads(pickle.dumps(a)) == a
    assert {Swizzle(2, 0, 3), Swizzle(2, 0, 3)} == {Swizzle(2, 0, 3)}


@pytest.mark.parametrize(("args", "message"), [
    (((2, 3), (1,)), "shape (2, 3) and stride (1,) are not congruent"),
    (((2, 3), 1), "shape (2, 3) and stride 1 are not congruent"),
    ((2.0,), "shape must be an int or a nested tuple of ints (got float 2.0)"),
    (((2, True),), "(got bool True)"),
    (((2, -1),), "shape entry -1 is below 0"),
], ids=["rank", "int-stride", "float", "bool", "negative-extent"])
def test_layout_errors(args, message):
    with pytest.raises(LayoutError, match=re.escape(message)):
        Layout(*args)


def test_layout_queries_match_brute_force():
    L = Layout((2, (2, 3)), (3, (1, 6)))
    assert (size(L), rank(L), depth(L), len(L)) == (12, 2, 2, 2)
    assert L[1] == Layout((2, 3), (1, 6))
    coords = [(i, (j, k)) for k in range(3) for j in range(2) for i in range(2)]  # colexicographic
    assert [L(c) for c in coords] == images(L)
    assert L(None, (1, None)) == Layout((2, 3), (3, 6))
    assert slice_and_offset((None, (1, None)), L) == (Layout((2, 3), (3, 6)), 1)


@given(layouts(negative=True))
def test_cosize_is_max_image_plus_one(layout):
    assert cosize(layout) == max(images(layout)) + 1


def test_cosize_with_negative_strides_is_right_where_pycute_is_not():
    # pycute computes L(size - 1) + 1 = 1 + 3*(-1) = -2; the largest image is 0, so cosize is 1.
    assert cosize(Layout(4, -1)) == 1
    assert cosize(Layout((2, 3), (-3, 4))) == 9


@given(int_tuples(st.integers(1, 4)), st.data())
def test_idx2crd_and_crd2idx_are_inverse(shape, data):
    i = data.draw(st.integers(0, size(shape) - 1))
    assert crd2idx(idx2crd(i, shape), shape) == i


def test_shape_div_refuses_non_dividing_extents():
    with pytest.raises(LayoutError, match=re.escape("neither of 3 and 4 divides the other")):
        shape_div(3, 4)


# -- coalesce and filter ---------------------------------------------------------------------------
@given(layouts(negative=True))
def test_coalesce_keeps_the_map_and_leaves_no_mergeable_modes(layout):
    c = coalesce(layout)
    assert size(c) == size(layout) and images(c) == images(layout)
    modes = list(zip(flatten(c.shape), flatten(c.stride), strict=True))
    assert all(n != 1 for n, _ in modes) or c == Layout(1, 0)
    assert all(n0 * d0 != d1 for (n0, d0), (_, d1) in itertools.pairwise(modes))


@given(layouts())
def test_coalesce_by_profile_keeps_the_rank(layout):
    assume(isinstance(layout.shape, tuple))
    c = coalesce(layout, (1,) * len(layout))
    assert len(c) == len(layout)
    for i in range(len(layout)):
        assert images(c[i]) == images(layout[i])


@given(layouts())
def test_filter_keeps_the_image_set_once_per_non_broadcast_coordinate(layout):
    f = filter(layout)
    assert set(images(f)) == set(images(layout))
    assert all(d != 0 or n == 1 for n, d in zip(flatten(f.shape), flatten(f.stride), strict=True))


# -- composition -----------------------------------------------------------------------------------
@given(layouts(), tileable_layouts())
def test_composition_is_a_then_b(a, b):
    try:
        r = composition(a, b)
    except LayoutError as e:
        assert "divisibility" in str(e)
        return
    assert size(r) == size(b)
    # inside A's domain R = A o B; past it, A's last (coalesced) mode extends without bound, as in CuTe
    inside = [i for i in range(size(b)) if b(i) < size(a)]
    assert [r(i) for i in inside] == [a(b(i)) for i in inside]
    assert [r(i) for i in range(size(r))] == [coalesce(a)(b(i)) for i in range(size(b))]


@given(layouts(), st.data())
def test_composition_with_a_tiler_is_by_mode(a, data):
    assume(isinstance(a.shape, tuple))
    tiler = tuple(data.draw(st.sampled_from([None, 1, size(a[i])])) for i in range(len(a)))
    r = composition(a, tiler)
    for i, t in enumerate(tiler):
        assert r[i] == (a[i] if t is None else composition(a[i], Layout(t)))


def test_composition_worked_values():
    assert composition(Layout((4, 3), (3, 1)), Layout((6, 2), (2, 1))) == Layout(((2, 3), 2), ((6, 1), 3))
    assert composition(Layout(20, 2), Layout((4, 5), (1, 4))) == Layout((4, 5), (2, 8))
    # B's extent not splitting over A's modes has no layout result:
    with pytest.raises(LayoutError, match=re.escape("shape divisibility fails")):
        composition(Layout((4, 3), (1, 10)), Layout(6, 1))
    with pytest.raises(LayoutError, match=re.escape("stride divisibility fails")):
        composition(Layout((6, 2), (1, 10)), Layout(3, 4))


def test_composition_where_pycute_is_wrong():
    # B = 6:1 reads A(0..5) = 0, 1, 2, 3, 10, 11: no layout of shape 6. pycute returns 4:1 (size 4).
    a, b = Layout((4, 3), (1, 10)), Layout(6, 1)
    assert [a(b(i)) for i in range(6)] == [0, 1, 2, 3, 10, 11]
    message = "6 elements of layoutB mode 6:1 do not split over the 4"
    with pytest.raises(LayoutError, match=re.escape(message)):
        composition(a, b)


@given(layouts(), layouts(max_extent=3, max_stride=6))
def test_composition_by_leaf_mode(a, b):
    leaves = flatten(b)
    for n, d in zip(flatten(leaves.shape), flatten(leaves.stride), strict=True):
        try:
            r = composition(a, Layout(n, d))
        except LayoutError:
            continue
        assert size(r) == n and [r(i) for i in range(n)] == [coalesce(a)(i * d) for i in range(n)]


def test_composition_with_a_swizzle_is_a_composed_layout():
    sw = Swizzle(1, 0, 1)
    r = composition(sw, Layout((2, 2)))
    assert isinstance(r, ComposedLayout)
    assert [r(i) for i in range(4)] == [sw(i) for i in range(4)] == [0, 1, 3, 2]
    r2 = composition(r, Layout(2, 2))
    assert [r2(i) for i in range(2)] == [0, 3]


@given(st.integers(0, 3), st.integers(0, 3), st.integers(-4, 4))
def test_swizzle_is_a_permutation(bits, base, shift):
    assume(abs(shift) >= bits)
    sw = Swizzle(bits, base, shift)
    assert sorted(sw(i) for i in range(sw.size())) == list(range(sw.size()))


def test_swizzle_errors():
    with pytest.raises(LayoutError, match=re.escape("abs(shift) >= bits (got bits=3, base=0, shift=2)")):
        Swizzle(3, 0, 2)


# -- complement ------------------------------------------------------------------------------------
def _check_complement(layout, c):
    im = images(c)
    assert im == sorted(im) and len(set(im)) == len(im)  # ordered
    assert not (set(images(layout)) & set(im)) - {0}     # disjoint


@given(layouts(), st.integers(1, 40))
def test_complement_is_ordered_and_disjoint(layout, bound):
    try:
        c = complement(layout, bound)
    except LayoutError as e:
        assert "starts inside the span" in str(e)
        return
    _check_complement(layout, c)
    if is_injective(filter(layout)):
        assert is_injective(make_layout(filter(layout), c))


@given(tileable_layouts(), st.integers(1, 200))
def test_complement_of_a_tileable_layout_covers_up_to_the_bound(layout, bound):
    c = complement(layout, bound)
    _check_complement(layout, c)
    full = make_layout(layout, c)
    assert sorted(images(full)) == list(range(size(full)))
    assert size(full) >= bound


def test_complement_refuses_overlapping_layouts():
    message = "mode 2:1 of layout (2, 2):(1, 1) starts inside the span"
    with pytest.raises(LayoutError, match=re.escape(message)):
        complement(Layout((2, 2), (1, 1)))


# -- inverses --------------------------------------------------------------------------------------
@given(layouts(negative=True))
def test_right_inverse(layout):
    r = right_inverse(layout)
    assert [layout(r(i)) for i in range(size(r))] == list(range(size(r)))


@given(tileable_layouts())
def test_left_inverse_of_injective_layouts(layout):
    inv = left_inverse(layout)
    assert [inv(layout(i)) for i in range(size(layout))] == list(range(size(layout)))


@given(layouts())
def test_left_inverse_holds_or_raises(layout):
    try:
        inv = left_inverse(layout)
    except LayoutError as e:
        assert re.search("not injective|not a multiple of the span|starts inside the span", str(e))
        return
    if is_injective(layout):
        assert [inv(layout(i)) for i in range(size(layout))] == list(range(size(layout)))


def test_left_inverse_refuses_what_it_cannot_invert_where_pycute_is_wrong():
    # (2, 2):(1, 3) is injective but its complement cannot fill the gap at 2; pycute's inverse maps 3 -> 3.
    with pytest.raises(LayoutError, match=re.escape("mode 2:3 of layout (2, 2):(1, 3) is not a multiple")):
        left_inverse(Layout((2, 2), (1, 3)))


def test_left_inverse_refuses_broadcast_modes():
    with pytest.raises(LayoutError, match=re.escape("not injective (mode 4:0 broadcasts)")):
        left_inverse(Layout((2, 4), (1, 0)))


# -- divides and products ----------------------------------------------------------------------------
@given(tileable_layouts(), st.integers(1, 3))
def test_logical_divide_is_composition_with_tile_and_rest(tile, reps):
    a = Layout(size(tile) * reps * 2 if cosize(tile) <= size(tile) * reps * 2 else cosize(tile) * 2)
    r = logical_divide(a, tile)
    assert len(r) == 2 and size(r[0]) == size(tile)
    full = make_layout(tile, complement(tile, size(a)))
    assert images(r) == [a(full(i)) for i in range(size(full))]


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3), st.booleans())
def test_divides_of_a_matrix_agree(m, n, tm, tn, row_major):
    a = Layout((m * tm, n * tn), (n * tn, 1) if row_major else (1, m * tm))
    ld = logical_divide(a, (tm, tn))
    zd, td, fd = zipped_divide(a, (tm, tn)), tiled_divide(a, (tm, tn)), flat_divide(a, (tm, tn))
    assert zd == make_layout(make_layout(ld[0][0], ld[1][0]), make_layout(ld[0][1], ld[1][1]))
    assert td == make_layout(zd[0], zd[1][0], zd[1][1])
    assert fd == make_layout(zd[0][0], zd[0][1], zd[1][0], zd[1][1])
    for i, a0, j, b0 in itertools.product(range(tm), range(m), range(tn), range(n)):
        assert fd((i, j, a0, b0)) == a((a0 * tm + i, b0 * tn + j))


@given(tileable_layouts(), tileable_layouts())
def test_logical_product_repeats_the_block(a, b):
    try:
        r = logical_product(a, b)
    except LayoutError as e:   # B reads the complement across a gap: no layout result
        assert "divisibility" in str(e)
        return
    assert len(r) == 2 and r[0] == a and size(r) == size(a) * size(b)
    rest = complement(a, size(a) * cosize(b))
    assert images(r[1]) == [rest(b(j)) for j in range(size(b))]


def test_logical_product_with_an_int_is_a_product_where_pycute_divides():
    # released pycute routes an int tiler to logical_divide, giving (3, 1):(1, 0) for this call
    want = Layout((2, 3), (1, 2))
    assert logical_product(Layout(2, 1), 3) == logical_product(Layout(2, 1), Layout(3)) == want


def test_zipped_and_tiled_product():
    a, b = Layout((2, 2)), (Layout(3), Layout(2))
    zp, tp = zipped_product(a, b), tiled_product(a, b)
    lp = logical_product(a, b)
    assert zp == make_layout(make_layout(lp[0][0], lp[1][0]), make_layout(lp[0][1], lp[1][1]))
    assert tp == make_layout(zp[0], zp[1][0], zp[1][1])


@given(tileable_layouts(), tileable_layouts(), st.booleans())
def test_blocked_and_raked_products(block, tiler, raked):
    r = max(len(block), len(tiler))
    assume(r <= 2)
    pad = [Layout(1, 0)] * 2

    def modes(x):
        return ([x[i] for i in range(len(x))] + pad)[:r]

    try:
        lp = logical_product(make_layout(*modes(block)), make_layout(*modes(tiler)))
    except LayoutError as e:
        assert "divisibility" in str(e)
        with pytest.raises(LayoutError, match="divisibility"):
            (raked_product if raked else blocked_product)(block, tiler)
        return
    out = (raked_product if raked else blocked_product)(block, tiler)
    assert len(out) == r and size(out) == size(block) * size(tiler)
    bl, tl = modes(block), modes(tiler)
    for crd in itertools.product(*(range(size(bl[i]) * size(tl[i])) for i in range(r))):
        if raked:   # tiler index fastest within each mode
            parts = [(k // size(tl[i]), k % size(tl[i])) for i, k in enumerate(crd)]
        else:       # block index fastest within each mode
            parts = [(k % size(bl[i]), k // size(bl[i])) for i, k in enumerate(crd)]
        want = lp((tuple(p[0] for p in parts), tuple(p[1] for p in parts)))
        got = out(crd if r > 1 else crd[0])
        assert got == want


def test_rank_errors_name_the_tiler():
    with pytest.raises(LayoutError, match=re.escape("tiler (2, 2, 2) has 3 modes but layout (4, 4):(1, 4)")):
        logical_divide(Layout((4, 4)), (2, 2, 2))


def test_public_names_match_pycute():
    expected = {
        "Integer", "Layout", "LayoutBase", "ComposedLayout", "Swizzle", "is_int", "is_tuple", "flatten",
        "signum", "product", "inner_product", "tuple_max", "elem_scale", "shape_div", "prefix_product",
        "idx2crd", "crd2idx", "crd2crd", "slice_", "has_none", "is_layout", "make_layout", "size", "cosize",
        "coalesce", "filter", "composition", "complement", "right_inverse", "left_inverse", "logical_divide",
        "logical_product", "hier_unzip", "zipped_divide", "tiled_divide", "zipped_product", "tiled_product",
        "slice_and_offset",
    }
    assert expected <= set(cute.__all__)
    assert {"flat_divide", "blocked_product", "raked_product", "rank", "depth"} <= set(cute.__all__)


def test_layout_table_and_its_errors():
    table = cute.layout_table(Layout((2, 2), (2, 1)))
    assert table.splitlines()[-2:] == [" 0 | 0 1", " 1 | 2 3"]
    assert cute.layout_table(Layout(3, 2)).splitlines()[-1] == " 2 | 4"
    with pytest.raises(LayoutError, match=re.escape("has rank 3; tables show rank 1 or 2")):
        cute.layout_table(Layout((2, 2, 2)))
    with pytest.raises(LayoutError, match=re.escape("must be a cute.Layout (got tuple)")):
        cute.layout_table((2, 2))


def test_composed_layout_slices_keep_the_offset():
    sl = ComposedLayout(Swizzle(1, 0, 2), 1, Layout((4, 4), (4, 1)))
    row = sl(2, None)
    assert isinstance(row, ComposedLayout) and row.offset == 1 + 8
    assert [row(j) for j in range(4)] == [sl((2, j)) for j in range(4)]
    assert sl[1].layoutA == Layout(4, 1) and sl.size() == 16 and len(sl) == 2


def test_make_layout_refuses_non_layouts():
    message = "each argument must be a Layout, an int or a tuple (got str"
    with pytest.raises(LayoutError, match=re.escape(message)):
        make_layout(Layout(2), "x")
