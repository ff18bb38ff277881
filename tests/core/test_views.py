"""Tests of the view algebra (``functional_strides.views``) without PyTorch.

* Refusals: the exception class and a message that names the op, the argument and the
  layout.
* Values: every op's result, read from ``arange`` storage by the NumPy oracle, equals
  NumPy's own op on the dense array (``np.transpose``, ``np.moveaxis``, ``np.squeeze``,
  ``np.expand_dims``, ``np.broadcast_to``, ``np.diagonal``, ``sliding_window_view``,
  ``np.split``, basic indexing, ``reshape``).
* Postconditions: equivalent spellings agree (``view(-1)`` and the explicit size, ``unfold``
  and window slicing, method and module-level function; ``expand``, ``broadcast_to``,
  ``expand_as`` and ``unbind`` each against their rule and NumPy, not against one another),
  split pieces reassemble, and the JAX materialisation equals the oracle.
"""

from __future__ import annotations

import re
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import OPS, Op, apply_to_layout, layouts, op_chains, ops, storage_for

import functional_strides as fs
from functional_strides import Layout, LayoutError, OutOfRangeError, StorageError, ViewError, oracle, views

L23 = Layout((2, 3), (3, 1), 1)  # a row-major 2x3 view at offset 1
SCALAR = Layout((), (), 0)


# -- refusals ---------------------------------------------------------------------------------
_ERRORS = [
    # (id, call, exception class, message fragment)
    ("view-numel", lambda: views.view(L23, (4,)), LayoutError,
     "view: shape [4] is invalid for input of size 6 (the extents multiply to 4) (layout (2,3):(3,1)+1)."),
    ("view-two-inferred", lambda: views.view(L23, (-1, -1)), LayoutError,
     "view: only one dimension can be inferred (got shape [-1, -1] with -1 at dims 0 and 1)"),
    ("view-negative", lambda: views.view(L23, (2, -2)), LayoutError,
     "view: invalid shape dimension -2 in shape [2, -2] (layout (2,3):(3,1)+1)"),
    ("view-ambiguous", lambda: views.view(Layout((0, 2), (2, 1)), (-1, 0)), LayoutError,
     "view: cannot reshape tensor of 0 elements into shape [-1, 0]"),
    ("view-strides", lambda: views.view(Layout((3, 2), (1, 3)), (6,)), ViewError,
     "view: shape [6] is not compatible with layout (3,2):(1,3)+0 (at least one new dim spans two "
     "storage-contiguous chunks; the chunks are dim 0 (3 elements, stride 1); dim 1 (2 elements, "
     "stride 3)"),
    ("permute-rank", lambda: views.permute(L23, (0,)), LayoutError,
     "permute: the number of dims 1 in dims=[0] does not match the rank 2 of layout (2,3):(3,1)+1"),
    ("permute-repeat", lambda: views.permute(L23, (1, -1)), LayoutError,
     "permute: repeated dim in dims=[1, -1] (layout (2,3):(3,1)+1)"),
    ("permute-range", lambda: views.permute(L23, (0, 2)), OutOfRangeError,
     "permute: dimension out of range (expected to be in range of [-2, 1], but got 2) for a tensor "
     "of rank 2 (layout (2,3):(3,1)+1)."),
    ("transpose-range", lambda: views.transpose(L23, -3, 0), OutOfRangeError,
     "transpose: dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    ("t-rank3", lambda: views.t(Layout((1, 1, 1), (1, 1, 1))), LayoutError,
     "t: expects a layout of rank <= 2, but layout (1,1,1):(1,1,1)+0 has rank 3"),
    ("mT-rank1", lambda: views.mT(Layout((3,), (1,))), LayoutError,
     "mT: expects a layout of rank >= 2, but layout (3,):(1,)+0 has rank 1."),
    ("movedim-lengths", lambda: views.movedim(L23, (0, 1), (1,)), LayoutError,
     "movedim: invalid source or destination dims: source ([0, 1] dims) should contain the same "
     "number of dims as destination ([1] dims) (layout (2,3):(3,1)+1)."),
    ("movedim-repeat", lambda: views.movedim(L23, (0, -2), (1, 0)), LayoutError,
     "movedim: repeated dim in source ([0, 0]) (layout (2,3):(3,1)+1)."),
    ("squeeze-repeat", lambda: views.squeeze(L23, (0, -2)), LayoutError,
     "squeeze: dim 0 appears multiple times in the list of dims (got dim=(0, -2) for layout "
     "(2,3):(3,1)+1)"),
    ("unsqueeze-range", lambda: views.unsqueeze(L23, 3), OutOfRangeError,
     "unsqueeze: dimension out of range (expected to be in range of [-3, 2], but got 3) for a tensor "
     "of rank 3 (layout (2,3):(3,1)+1)."),
    ("expand-short", lambda: views.expand(L23, (3,)), LayoutError,
     "expand: the number of sizes provided (1) must be greater or equal to the number of dimensions "
     "in the tensor (2) (got shape [3], layout (2,3):(3,1)+1)."),
    ("expand-mismatch", lambda: views.expand(L23, (4, 3)), LayoutError,
     "expand: the expanded size of the tensor (4) must match the existing size (2) at non-singleton "
     "dimension 0. Target sizes: [4, 3]. Layout: (2,3):(3,1)+1."),
    ("expand-leading-inferred", lambda: views.expand(L23, (-1, 2, 3)), LayoutError,
     "expand: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
     "dimension 0 (got shape [-1, 2, 3], layout (2,3):(3,1)+1)."),
    ("expand-scalar-inferred", lambda: views.expand(SCALAR, (-1,)), LayoutError,
     "expand: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"),
    ("expand-negative", lambda: views.expand(L23, (2, -2)), LayoutError,
     "expand: invalid extent -2 at dim 1 (got shape [2, -2], layout (2,3):(3,1)+1)"),
    ("narrow-start", lambda: views.narrow(L23, 1, 4, 0), OutOfRangeError,
     "narrow: start out of range (expected to be in range of [-3, 3], but got 4) for dim 1 of layout "
     "(2,3):(3,1)+1."),
    ("narrow-past-end", lambda: views.narrow(L23, 1, 1, 3), OutOfRangeError,
     "narrow: start (1) + length (3) exceeds dimension size (3) of dim 1 of layout (2,3):(3,1)+1."),
    ("narrow-length", lambda: views.narrow(L23, 1, 0, -1), LayoutError,
     "narrow: length must be non-negative (got length=-1, layout (2,3):(3,1)+1)."),
    ("narrow-rank0", lambda: views.narrow(SCALAR, 0, 0, 1), LayoutError,
     "narrow: cannot be applied to a rank-0 layout (layout ():()+0)."),
    ("select-index", lambda: views.select(L23, 0, -3), OutOfRangeError,
     "select: index -3 out of range for tensor of size [2, 3] at dimension 0 (layout (2,3):(3,1)+1)."),
    ("select-rank0", lambda: views.select(SCALAR, 0, 0), OutOfRangeError,
     "select: cannot be applied to a rank-0 layout (layout ():()+0)."),
    ("unfold-size", lambda: views.unfold(L23, 1, 4, 1), LayoutError,
     "unfold: size 4 exceeds extent 3 of dim 1 (layout (2,3):(3,1)+1)"),
    ("unfold-step", lambda: views.unfold(L23, 1, 2, 0), LayoutError,
     "unfold: step is 0 but must be > 0 (layout (2,3):(3,1)+1)."),
    ("unfold-negative-size", lambda: views.unfold(L23, 1, -1, 1), LayoutError,
     "unfold: size is -1 but must be >= 0 (layout (2,3):(3,1)+1)."),
    ("diagonal-same-dims", lambda: views.diagonal(L23, 0, 1, -1), LayoutError,
     "diagonal: diagonal dimensions cannot be identical (got dim1=1, dim2=-1, layout (2,3):(3,1)+1)."),
    ("split-sections", lambda: views.split(L23, [1, 1], 1), LayoutError,
     "split: split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at "
     "dimension 1), but got split_sizes=[1, 1] (layout (2,3):(3,1)+1)."),
    ("split-zero", lambda: views.split(L23, 0, 1), LayoutError,
     "split: split_size can only be 0 if dimension size is 0, but got dimension size of 3 (dim 1 of "
     "layout (2,3):(3,1)+1)."),
    ("split-negative", lambda: views.split(L23, -1), LayoutError,
     "split: split expects split_size be non-negative, but got split_size=-1 (layout (2,3):(3,1)+1)."),
    ("split-rank0", lambda: views.split(SCALAR, 1), LayoutError,
     "split: expects at least a 1-dimensional layout (layout ():()+0)."),
    ("chunk-zero", lambda: views.chunk(L23, 0), LayoutError,
     "chunk: chunk expects `chunks` to be greater than 0, got: 0 (layout (2,3):(3,1)+1)."),
    ("chunk-rank0", lambda: views.chunk(SCALAR, 1), LayoutError,
     "chunk: expects at least a 1-dimensional layout (layout ():()+0)."),
    ("unbind-rank0", lambda: views.unbind(SCALAR), OutOfRangeError,
     "unbind: dimension specified as 0 but layout ():()+0 has no dimensions."),
    ("unbind-range", lambda: views.unbind(L23, 2), OutOfRangeError,
     "unbind: dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("flatten-order", lambda: views.flatten_shape(L23, 1, 0), LayoutError,
     "flatten: flatten() has invalid args: start_dim (1) cannot come after end_dim (0) (layout "
     "(2,3):(3,1)+1)."),
    ("unflatten-empty", lambda: views.unflatten_shape(L23, 1, ()), LayoutError,
     "unflatten: sizes must be non-empty (got sizes=[], layout (2,3):(3,1)+1)."),
    ("unflatten-product", lambda: views.unflatten_shape(L23, 1, (2, 2)), LayoutError,
     "unflatten: provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input "
     "(layout (2,3):(3,1)+1)."),
    ("unflatten-float", lambda: views.unflatten_shape(L23, 1, (1.5, 2)), fs.LayoutTypeError,
     "unflatten: sizes[0] must be an int, not float (got sizes[0]=1.5); pass an int"),
    ("unflatten-not-a-sequence", lambda: views.unflatten_shape(L23, 1, 3), fs.LayoutTypeError,
     "unflatten: sizes must be a sequence of ints, not int (got sizes=3, layout (2,3):(3,1)+1)"),
    ("unflatten-two-inferred", lambda: views.unflatten_shape(L23, 1, (-1, -1)), LayoutError,
     "unflatten: only one dimension can be inferred (got shape [-1, -1] with -1 at dims 0 and 1) "
     "(layout (2,3):(3,1)+1)."),
    ("getitem-float", lambda: views.getitem(L23, (0, 1.0)), fs.IndexTypeError,
     "getitem: index 1.0 of type float cannot index (got index (0, 1.0), layout (2,3):(3,1)+1)"),
    ("unflatten-rank0", lambda: views.unflatten_shape(SCALAR, 0, (1,)), OutOfRangeError,
     "unflatten: dimension specified as 0 but layout ():()+0 has no dimensions"),
    ("getitem-ellipses", lambda: views.getitem(L23, (..., ...)), LayoutError,
     "getitem: an index can only have a single ellipsis ('...') (got index (Ellipsis, Ellipsis), "
     "layout (2,3):(3,1)+1)."),
    ("getitem-too-many", lambda: views.getitem(L23, (0, 0, 0)), OutOfRangeError,
     "getitem: too many indices for tensor of dimension 2 (got 3 indices (0, 0, 0), layout "
     "(2,3):(3,1)+1)."),
    ("getitem-step", lambda: views.getitem(L23, slice(None, None, -1)), LayoutError,
     "getitem: step must be greater than zero (got slice slice(None, None, -1), layout (2,3):(3,1)+1)"),
    ("getitem-advanced", lambda: views.getitem(L23, (0, [1])), LayoutError,
     "getitem: index [1] of type list is not a view index"),
    ("getitem-bounds", lambda: views.getitem(L23, (slice(None), -4)), OutOfRangeError,
     "getitem: index -4 is out of bounds for dimension 1 with size 3 (got index (slice(None, None, "
     "None), -4), layout (2,3):(3,1)+1)."),
    ("as_strided-lengths", lambda: views.as_strided(L23, (2,), (1, 1)), LayoutError,
     "as_strided: mismatch in length of strides and shape (got size=[2] of length 1 and stride=[1, 1] "
     "of length 2)."),
    ("as_strided-negative-stride", lambda: views.as_strided(L23, (2,), (-1,)), LayoutError,
     "as_strided: negative strides are refused, as PyTorch's as_strided refuses them (got stride=[-1])"),
    ("as_strided-negative-size", lambda: views.as_strided(L23, (-2,), (1,)), LayoutError,
     "as_strided: negative sizes are not supported (got size=[-2])."),
    ("as_strided-negative-offset", lambda: views.as_strided(L23, (2,), (1,), -1), StorageError,
     "as_strided: invalid storage offset -1 (layout (2,):(1,)-1)"),
    ("as_strided-bounds", lambda: fs.as_strided(np.arange(6.0), (2, 3), (3, 1), 1), StorageError,
     "as_strided: size [2, 3], stride [3, 1] and storage offset 1 require a storage of 7 elements"),
    ("dim-bool", lambda: views.select(L23, True, 0), fs.LayoutTypeError,
     "select: dim must be an int, not a bool (got dim=True); pass an int."),
]


@pytest.mark.parametrize("call,exc,message", [pytest.param(*c[1:], id=c[0]) for c in _ERRORS])
def test_refusal_message(call, exc, message: str) -> None:
    with pytest.raises(exc, match=re.escape(message)):
        call()


def test_out_of_range_is_index_error_and_layout_error() -> None:
    with pytest.raises(IndexError):
        views.select(L23, 5, 0)
    with pytest.raises(LayoutError):
        views.getitem(L23, 2)


def test_mT_of_scalar_warns_and_is_identity() -> None:
    with pytest.warns(UserWarning, match=re.escape("x.mT")):
        assert views.mT(Layout((), (), 4)) == Layout((), (), 4)


@pytest.mark.parametrize("layout", [SCALAR, Layout((3,), (1,)), Layout((2, 3, 4), (12, 4, 1))], ids=str)
def test_T_warns_unless_rank2(layout: Layout) -> None:
    with pytest.warns(UserWarning, match=re.escape("x.T")):
        out = views.reverse_dims(layout)
    assert out.shape == layout.shape[::-1] and out.strides == layout.strides[::-1]


# -- values against NumPy ---------------------------------------------------------------------------
def _dense(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """(storage, dense array) for ``layout`` over ``arange``; values name storage indices."""
    storage = storage_for(layout, 2)
    return storage, oracle.materialize(storage, layout)


def _values(storage: np.ndarray, layout: Layout, result: Any, copied: bool) -> Any:
    """Values of a layout-level result, read by the oracle (a copy reads fresh storage)."""
    if copied:
        storage = oracle.materialize(storage, layout).reshape(-1)
    if isinstance(result, tuple):
        return [oracle.materialize(storage, r) for r in result]
    return oracle.materialize(storage, result)


_NUMPY_OPS = tuple(n for n, spec in OPS.items() if spec.numpy is not None)


@pytest.mark.sampled(4)
@pytest.mark.parametrize("name", _NUMPY_OPS)
@given(layout=layouts(), data=st.data())
def test_values_match_numpy(name: str, layout: Layout, data: st.DataObject) -> None:
    op = data.draw(ops(layout.shape, name), label="op")
    storage, dense = _dense(layout)
    try:
        result, copied = apply_to_layout(op, layout, storage.shape[0])
    except LayoutError:
        assume(False)
    expected = OPS[name].numpy(op, dense)
    got = _values(storage, layout, result, copied)
    if isinstance(expected, list):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)
            assert g.shape == e.shape
    else:
        np.testing.assert_array_equal(got, expected)
        assert got.shape == expected.shape


@given(layout=layouts(), data=st.data())
def test_as_strided_matches_numpy_stride_tricks(layout: Layout, data: st.DataObject) -> None:
    storage = storage_for(layout, data.draw(st.integers(0, 3)))
    out = views.as_strided(Layout((0,), (1,)), layout.shape, layout.strides, layout.offset)
    assert out == layout
    item = storage.itemsize
    base = storage[layout.offset:] if layout.numel else storage
    expected = np.lib.stride_tricks.as_strided(base, layout.shape, tuple(s * item for s in layout.strides))
    np.testing.assert_array_equal(oracle.materialize(storage, out), expected)


# -- postconditions ------------------------------------------------------------------------------
@given(layout=layouts())
def test_view_minus_one_equals_explicit_size(layout: Layout) -> None:
    try:
        explicit = views.view(layout, (layout.numel,))
    except ViewError:
        with pytest.raises(ViewError):
            views.view(layout, (-1,))
        return
    assert views.view(layout, (-1,)) == explicit
    assert explicit.shape == (layout.numel,) and explicit.offset == layout.offset
    storage, dense = _dense(layout)
    np.testing.assert_array_equal(oracle.materialize(storage, explicit), dense.reshape(-1))


@given(layout=layouts(min_rank=1), data=st.data())
def test_view_is_a_view_when_the_shape_is_regrouped(layout: Layout, data: st.DataObject) -> None:
    """A successful view reads the same elements in the same row-major order."""
    target = data.draw(st.sampled_from([(layout.numel,), layout.shape, (*layout.shape, 1),
                                        (1, *layout.shape)]))
    storage, dense = _dense(layout)
    try:
        out = views.view(layout, target)
    except ViewError:
        assert views.view_strides(layout.shape, layout.strides, target) is None
        return
    assert out.offset == layout.offset
    np.testing.assert_array_equal(oracle.materialize(storage, out), dense.reshape(target))


@given(layout=layouts(kinds=("contiguous",)))
def test_contiguous_layouts_view_as_flat(layout: Layout) -> None:
    """Row-major layouts always flatten, whatever strides their size-1 dims carry."""
    out = views.view(layout, (-1,))
    assert out.shape == (layout.numel,) and out.offset == layout.offset
    storage, dense = _dense(layout)
    np.testing.assert_array_equal(oracle.materialize(storage, out), dense.reshape(-1))


@given(layout=layouts(min_rank=1), data=st.data())
def test_unfold_equals_window_slicing(layout: Layout, data: st.DataObject) -> None:
    d = data.draw(st.integers(0, layout.ndim - 1))
    n = layout.shape[d]
    size = data.draw(st.integers(0, n))
    step = data.draw(st.integers(1, 3))
    out = views.unfold(layout, d, size, step)
    assert out.shape[d] == (n - size) // step + 1 and out.shape[-1] == size
    for i in range(out.shape[d]):
        window = views.movedim(views.narrow(layout, d, i * step, size), d, -1)
        assert views.select(out, d, i) == window


def _expandable(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """PyTorch's ``expand`` rule: the trailing dims match (or are 1, or -1 keeps them), new
    leading dims are given explicitly."""
    lead = len(target) - len(shape)
    if lead < 0 or any(t < 0 for t in target[:lead]):
        return False
    return all(t == -1 or t == n or (n == 1 and t >= 0) for n, t in zip(shape, target[lead:], strict=True))


@given(layout=layouts(), data=st.data())
def test_expand_and_broadcast_to_follow_the_expand_rule(layout: Layout, data: st.DataObject) -> None:
    # each spelling is checked against the rule and NumPy, not against the others (broadcast_to
    # calls expand: comparing them would prove nothing)
    from strategies import expand_shapes

    target = data.draw(expand_shapes(layout.shape))
    storage = storage_for(layout)
    x = fs.as_strided(jnp.asarray(storage), layout.shape, layout.strides, layout.offset)
    spellings = {"fs.expand": lambda: fs.expand(x, target),
                 "fs.broadcast_to": lambda: fs.broadcast_to(x, target),
                 "x.broadcast_to": lambda: x.broadcast_to(target),
                 "x.expand": lambda: x.expand(*target)}
    if not _expandable(layout.shape, target):
        for name, call in spellings.items():
            with pytest.raises(LayoutError):
                call()
                pytest.fail(f"{name}{target} of {layout} did not raise")
        return
    lead = len(target) - layout.ndim
    shape = tuple(n if t == -1 else t for n, t in zip((1,) * lead + layout.shape, target, strict=True))
    dense = np.broadcast_to(oracle.materialize(storage, layout), shape)
    results = {name: call() for name, call in spellings.items()}
    results["fs.expand_as"] = fs.expand_as(x, np.empty(shape))
    for name, expanded in results.items():
        assert expanded.shape == shape, name
        assert expanded.storage_offset() == layout.offset and fs.shares_storage(expanded, x), name
        strides = expanded.stride()
        for d in range(len(shape) - 1, -1, -1):
            if layout.ndim == 0:
                want = 0  # a scalar broadcasts with stride 0 everywhere
            elif d >= lead:
                src = d - lead
                want = layout.strides[src] if layout.shape[src] == shape[d] else 0
            else:
                want = shape[d + 1] * strides[d + 1] if shape[d] == 1 else 0
            assert strides[d] == want, (name, d, expanded.layout)
        np.testing.assert_array_equal(oracle.materialize(storage, expanded.layout), dense, err_msg=name)


@given(layout=layouts(min_rank=1), data=st.data())
def test_split_pieces_reassemble(layout: Layout, data: st.DataObject) -> None:
    d = data.draw(st.integers(-layout.ndim, layout.ndim - 1))
    n = layout.shape[d]
    size = data.draw(st.integers(1 if n else 0, max(n, 1)))
    storage, dense = _dense(layout)
    pieces = views.split(layout, size, d)
    assert all(p.strides == layout.strides for p in pieces)
    got = np.concatenate([oracle.materialize(storage, p) for p in pieces], axis=d)
    np.testing.assert_array_equal(got, dense)
    assert sum(p.shape[d] for p in pieces) == n
    chunks = data.draw(st.integers(1, 6))
    parts = views.chunk(layout, chunks, d)
    assert len(parts) <= chunks
    np.testing.assert_array_equal(
        np.concatenate([oracle.materialize(storage, p) for p in parts], axis=d), dense)


@given(layout=layouts(min_rank=1), data=st.data())
def test_unbind_matches_its_definition_and_numpy(layout: Layout, data: st.DataObject) -> None:
    # piece i drops dim d and moves the offset by i * strides[d]; its values are np.take(dense, i, d)
    # (not compared with select, which unbind is built from)
    d = data.draw(st.integers(-layout.ndim, layout.ndim - 1))
    k = d % layout.ndim
    storage, dense = _dense(layout)
    pieces = views.unbind(layout, d)
    assert len(pieces) == layout.shape[k]
    for i, piece in enumerate(pieces):
        assert piece.shape == layout.shape[:k] + layout.shape[k + 1:]
        assert piece.strides == layout.strides[:k] + layout.strides[k + 1:]
        assert piece.offset == layout.offset + i * layout.strides[k]
        np.testing.assert_array_equal(oracle.materialize(storage, piece), np.take(dense, i, axis=k))
    x = fs.as_strided(jnp.asarray(storage), layout.shape, layout.strides, layout.offset)
    got = [np.asarray(p) for p in x.unbind(d)]
    assert len(got) == layout.shape[k]
    for i, values in enumerate(got):
        np.testing.assert_array_equal(values, np.take(dense, i, axis=k))


@given(layout=layouts())
def test_permute_roundtrip_and_transpose_involution(layout: Layout) -> None:
    r = layout.ndim
    perm = tuple(range(r - 1, -1, -1))
    assert views.permute(views.permute(layout, perm), perm) == layout
    if r:
        assert views.transpose(views.transpose(layout, 0, -1), 0, -1) == layout
        moved = views.movedim(layout, 0, -1)  # dim 0 goes last, the others keep their order
        assert moved == Layout((*layout.shape[1:], layout.shape[0]), (*layout.strides[1:], layout.strides[0]),
                               layout.offset)


@given(layout=layouts())
def test_squeeze_unsqueeze_roundtrip(layout: Layout) -> None:
    for d in range(-layout.ndim - 1, layout.ndim + 1):
        assert views.squeeze(views.unsqueeze(layout, d), d) == layout


@given(layout=layouts(min_rank=2), data=st.data())
def test_diagonal_indices(layout: Layout, data: st.DataObject) -> None:
    """Element k of the diagonal is element (k, k+offset) (or (k-offset, k)) of the two dims."""
    k = data.draw(st.integers(-3, 3))
    out = views.diagonal(layout, k, 0, 1)
    rest = Layout(layout.shape[2:], layout.strides[2:], 0)
    for i in range(out.shape[-1]):
        a, b = (i, i + k) if k >= 0 else (i - k, i)
        corner = layout.offset + a * layout.strides[0] + b * layout.strides[1]
        sub = views.select(out, -1, i)
        assert sub == Layout(rest.shape, rest.strides, corner)


def test_getitem_matches_numpy_basic_indexing() -> None:
    layout = Layout((2, 3, 4), (1, 8, 2), 3)
    storage, dense = _dense(layout)
    for key in [0, -1, (slice(None), 1), (Ellipsis, 0), (None, Ellipsis, None), (1, None, slice(1, None, 2)),
                slice(-10, 10, 3), (slice(5, 1),), (Ellipsis,), (-2, -1, -4), (slice(None), slice(None), 0)]:
        out = views.getitem(layout, key)
        np.testing.assert_array_equal(oracle.materialize(storage, out), dense[key], err_msg=repr(key))


# -- StridedArray: method == module-level function; JAX values == oracle ---------------------------
@given(chain=op_chains(min_len=1, max_len=3))
def test_method_and_function_agree_and_values_match_oracle(chain) -> None:
    x, steps = chain
    storage = np.asarray(x.storage)
    for op in steps:
        try:
            by_method = _quiet(op, x, None)
        except LayoutError as e:
            with pytest.raises(type(e)):
                _quiet(op, x, fs)
            continue
        by_function = _quiet(op, x, fs)
        pieces_m = by_method if isinstance(by_method, tuple) else (by_method,)
        pieces_f = by_function if isinstance(by_function, tuple) else (by_function,)
        assert [p.layout for p in pieces_m] == [p.layout for p in pieces_f]
        nxt = op.follow(by_method)
        if nxt is None:
            break
        if not fs.shares_storage(nxt, x):
            storage = np.asarray(nxt.storage)
        x = nxt
    np.testing.assert_array_equal(np.asarray(x), oracle.materialize(storage, x.layout))


def _quiet(op: Op, x: fs.StridedArray, module: Any) -> Any:
    """Apply ``op``, expecting the PyTorch deprecation warning of ``x.T``/``x.mT`` where due."""
    if (op.name == "T" and x.ndim != 2) or (op.name == "mT" and x.ndim == 0):
        with pytest.warns(UserWarning):
            return op.apply(x, module=module)
    return op.apply(x, module=module)
