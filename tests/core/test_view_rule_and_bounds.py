"""PyTorch's ``view`` rule around size-1 and size-0 dims, and every bounds check at its boundary.

* ``view``: a table of ``(shape, strides) -> new shape`` cases whose expected strides are
  worked out by hand from ATen's ``computeStride`` (chunks of dims that are contiguous in
  storage; a size-1 dim of the new shape takes ``view_numel * chunk_base_stride`` at its
  place in the walk from the innermost dim; a size-1 dim of the old shape never ends a
  chunk, whatever its stride; size-0 tensors get contiguous strides, or keep theirs when the
  shape is unchanged; a rank-0 tensor views as strides of 1). A PyTorch leg checks the table
  itself against ``torch.Tensor.view``.
* Bounds: for each entry point, the last valid value and the first invalid one, on both
  sides where there are two; the valid one is checked against PyTorch's result (shape,
  strides, offset), the invalid one must raise the library's error class (and PyTorch must
  raise too).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch

import functional_strides as fs
from functional_strides import Layout, LayoutError, OutOfRangeError, StorageError, ViewError, oracle, views

# -- view: aten computeStride ----------------------------------------------------------------------

VIEW_CASES = [
    # (old shape, old strides, new shape, expected strides or None when no view exists)
    ((2, 3), (3, 1), (6,), (1,)),
    ((2, 3), (3, 1), (3, 2), (2, 1)),
    ((2, 3), (3, 1), (-1, 3), (3, 1)),
    ((2, 3), (3, 1), (3, -1), (2, 1)),
    ((2, 3), (1, 2), (6,), None),                   # transposed: one chunk per dim
    ((2, 3), (1, 2), (2, 3), (1, 2)),               # the same shape is always a view
    ((2, 3), (1, 2), (2, 1, 3), (1, 6, 2)),         # new size-1 dim: view_numel * base stride
    ((2, 3), (3, 1), (2, 1, 3), (3, 3, 1)),
    ((2, 3), (3, 1), (1, 2, 3), (6, 3, 1)),         # leading size-1 dim: numel * base stride
    ((2, 3), (3, 1), (2, 3, 1), (3, 1, 1)),         # trailing size-1 dim: the base stride
    ((2, 1, 3), (3, 99, 1), (6,), (1,)),            # old size-1 dim: its stride is ignored
    ((2, 1, 3), (3, 99, 1), (3, 2), (2, 1)),
    ((2, 1, 1, 3), (3, 7, 0, 1), (2, 3), (3, 1)),
    ((3, 1), (1, 1), (1, 3), (3, 1)),
    ((3, 1), (1, 5), (3,), (1,)),
    ((3, 1), (1, 5), (3, 1), (1, 5)),               # the size-1 dim keeps its stride
    ((3, 1), (1, 5), (1, 3, 1), (3, 1, 5)),
    ((1,), (5,), (), ()),
    ((1, 1), (9, 4), (1,), (4,)),
    ((), (), (1,), (1,)),                           # rank 0: strides of 1
    ((), (), (1, 1), (1, 1)),
    ((), (), (-1,), (1,)),
    ((4,), (2,), (2, 2), (4, 2)),
    ((4,), (2,), (2, -1), (4, 2)),
    ((2, 3, 4), (24, 4, 1), (2, 12), (24, 1)),      # a sliced parent: two chunks
    ((2, 3, 4), (24, 4, 1), (6, 4), None),
    ((2, 3, 4), (24, 4, 1), (2, 3, 2, 2), (24, 4, 2, 1)),
    ((0, 3), (3, 1), (3, 0), (1, 1)),               # size 0: contiguous, extents read as >= 1
    ((0, 3), (7, 5), (0, 3), (7, 5)),               # size 0, same shape: strides kept
    ((2, 0), (1, 1), (0, 5), (5, 1)),
    ((2, 0), (1, 1), (0, 2, 1), (2, 1, 1)),
    ((0,), (4,), (2, 0, 3), (3, 3, 1)),
    ((0, 3), (3, 1), (-1,), (1,)),                  # -1 next to no other extent: 0
    ((0, 3), (3, 1), (-1, 3), (3, 1)),
]


def _view_id(case) -> str:
    return "{}:{}->{}".format(*case[:3])


@pytest.mark.parametrize("shape, strides, new, expected", VIEW_CASES, ids=[_view_id(c) for c in VIEW_CASES])
def test_view_rule_table(shape, strides, new, expected):
    layout = Layout(shape, strides, 2)
    if expected is None:
        with pytest.raises(ViewError, match="view"):
            views.view(layout, new)
        return
    got = views.view(layout, new)
    known = int(np.prod([n for n in new if n != -1]))
    inferred = tuple(layout.numel // known if n == -1 else n for n in new)
    assert (got.shape, got.strides, got.offset) == (inferred, expected, 2)
    if layout.numel:  # the view reads the same elements in the same order
        np.testing.assert_array_equal(oracle.element_indices(got), oracle.element_indices(layout))


@pytest.mark.parametrize("shape, strides, new, expected", VIEW_CASES, ids=[_view_id(c) for c in VIEW_CASES])
def test_view_rule_table_is_torchs(shape, strides, new, expected):
    torch = import_torch()
    t = torch.zeros(64).as_strided(shape, strides, 2)
    if expected is None:
        with pytest.raises(RuntimeError):
            t.view(new)
        return
    assert tuple(t.view(new).stride()) == expected


@pytest.mark.parametrize("shape, new, match", [
    ((2, 3), (4,), "shape"),
    ((2, 3), (-1, -1), "-1"),
    ((0, 3), (-1, 0), "-1"),                     # 0 elements: -1 could be anything
    ((2, 3), (7, -1), "shape"),
    ((2, 3), (-2, 3), "-2"),
], ids=str)
def test_view_shape_errors(shape, new, match):
    with pytest.raises(LayoutError, match=match):
        views.view(Layout(shape, fs.contiguous_strides(shape)), new)


# -- bounds at the boundary ---------------------------------------------------------------------------

class Case(NamedTuple):
    id: str
    ours: Any            # () -> result
    theirs: Any          # torch -> result, or None (no PyTorch counterpart)
    error: type | None   # None: valid


def _x():
    return fs.from_array(jnp.arange(12.0).reshape(3, 4))


def _t(torch):
    return torch.arange(12.0).reshape(3, 4)


def _pair(name, ours, theirs, good, bad, error):
    """The last valid argument ``good`` and the first invalid one ``bad`` of one check."""
    return [
        Case(f"{name}-ok-{good!r}", lambda: ours(good), theirs and (lambda torch: theirs(torch, good)), None),
        Case(f"{name}-bad-{bad!r}", lambda: ours(bad), theirs and (lambda torch: theirs(torch, bad)), error),
    ]


def _at_set(idx):
    return _x().at[idx].set(-1.0)


def _torch_set(torch, idx):
    t = _t(torch).clone()
    t[idx] = -1.0
    return t


_STORE = jnp.arange(12.0)

BOUNDS = [
    # StridedArray(storage, layout), fs.as_strided, x.as_strided: the storage end
    *_pair("StridedArray-offset", lambda o: fs.StridedArray(_STORE, Layout((2, 3), (4, 1), o)),
           lambda torch, o: torch.arange(12.0).as_strided((2, 3), (4, 1), o), 5, 6, StorageError),
    *_pair("as_strided-offset", lambda o: fs.as_strided(_STORE, (2, 3), (4, 1), o),
           lambda torch, o: torch.arange(12.0).as_strided((2, 3), (4, 1), o), 5, 6, StorageError),
    *_pair("as_strided-stride", lambda s: fs.as_strided(_STORE, (2, 3), (s, 1), 4),
           lambda torch, s: torch.arange(12.0).as_strided((2, 3), (s, 1), 4), 5, 6, StorageError),
    *_pair("as_strided-size", lambda n: fs.as_strided(_STORE, (n,), (2,), 1),
           lambda torch, n: torch.arange(12.0).as_strided((n,), (2,), 1), 6, 7, StorageError),
    *_pair("as_strided-negative-offset", lambda o: fs.as_strided(_STORE, (2,), (1,), o),
           lambda torch, o: torch.arange(12.0).as_strided((2,), (1,), o), 0, -1, LayoutError),
    *_pair("as_strided-negative-size", lambda n: fs.as_strided(_STORE, (n,), (1,)),
           lambda torch, n: torch.arange(12.0).as_strided((n,), (1,)), 0, -1, LayoutError),
    *_pair("x.as_strided-offset", lambda o: _x().as_strided((3,), (4,), o),
           lambda torch, o: _t(torch).as_strided((3,), (4,), o), 3, 4, StorageError),
    *_pair("x.as_strided-stride", lambda s: _x().as_strided((2, 2), (s, 1), 0),
           lambda torch, s: _t(torch).as_strided((2, 2), (s, 1), 0), 10, 11, StorageError),
    # Layout(...): offsets and extents
    *_pair("Layout-offset", lambda o: Layout((2,), (1,), o), None, 0, -1, LayoutError),
    *_pair("Layout-extent", lambda n: Layout((n,), (1,)), None, 0, -1, LayoutError),
    # narrow(dim, start, length)
    *_pair("narrow-end", lambda n: _x().narrow(1, 2, n), lambda torch, n: _t(torch).narrow(1, 2, n),
           2, 3, OutOfRangeError),
    *_pair("narrow-start", lambda s: _x().narrow(1, s, 0), lambda torch, s: _t(torch).narrow(1, s, 0),
           4, 5, OutOfRangeError),
    *_pair("narrow-negative-start", lambda s: _x().narrow(1, s, 1), 
           lambda torch, s: _t(torch).narrow(1, s, 1), -4, -5, OutOfRangeError),
    *_pair("narrow-length", lambda n: _x().narrow(1, 0, n), lambda torch, n: _t(torch).narrow(1, 0, n),
           0, -1, LayoutError),
    *_pair("narrow-dim", lambda d: _x().narrow(d, 0, 1), lambda torch, d: _t(torch).narrow(d, 0, 1),
           1, 2, OutOfRangeError),
    *_pair("narrow-negative-dim", lambda d: _x().narrow(d, 0, 1), lambda torch, d: _t(torch).narrow(d, 0, 1),
           -2, -3, OutOfRangeError),
    # select(dim, index)
    *_pair("select-index", lambda i: _x().select(1, i), lambda torch, i: _t(torch).select(1, i),
           3, 4, OutOfRangeError),
    *_pair("select-negative-index", lambda i: _x().select(0, i), lambda torch, i: _t(torch).select(0, i),
           -3, -4, OutOfRangeError),
    *_pair("select-dim", lambda d: _x().select(d, 0), lambda torch, d: _t(torch).select(d, 0),
           1, 2, OutOfRangeError),
    *_pair("select-negative-dim", lambda d: _x().select(d, 0), lambda torch, d: _t(torch).select(d, 0),
           -2, -3, OutOfRangeError),
    # unfold(dimension, size, step)
    *_pair("unfold-size", lambda n: _x().unfold(1, n, 1), lambda torch, n: _t(torch).unfold(1, n, 1),
           4, 5, LayoutError),
    *_pair("unfold-step", lambda s: _x().unfold(1, 2, s), lambda torch, s: _t(torch).unfold(1, 2, s),
           1, 0, LayoutError),
    *_pair("unfold-dim", lambda d: _x().unfold(d, 2, 1), lambda torch, d: _t(torch).unfold(d, 2, 1),
           1, 2, OutOfRangeError),
    *_pair("unfold-negative-dim", lambda d: _x().unfold(d, 2, 1), lambda torch, d: _t(torch).unfold(d, 2, 1),
           -2, -3, OutOfRangeError),
    # diagonal(offset, dim1, dim2): any offset is valid (an empty diagonal past the corner)
    *_pair("diagonal-dim2", lambda d: _x().diagonal(0, 0, d), lambda torch, d: _t(torch).diagonal(0, 0, d),
           1, 2, OutOfRangeError),
    *_pair("diagonal-dim1", lambda d: _x().diagonal(0, d, 1), lambda torch, d: _t(torch).diagonal(0, d, 1),
           -2, -3, OutOfRangeError),
    *_pair("diagonal-same-dims", lambda d: _x().diagonal(0, 0, d), 
           lambda torch, d: _t(torch).diagonal(0, 0, d), -1, -2, LayoutError),
    Case("diagonal-offset-past-corner", lambda: _x().diagonal(4), lambda t: _t(t).diagonal(4), None),
    Case("diagonal-offset-below-corner", lambda: _x().diagonal(-3), lambda t: _t(t).diagonal(-3), None),
    # split(split_size_or_sections, dim)
    *_pair("split-sections-sum", lambda k: _x().split([1, k], 1), lambda torch, k: _t(torch).split([1, k], 1),
           3, 4, LayoutError),
    *_pair("split-sections-short", lambda k: _x().split([1, k], 1), 
           lambda torch, k: _t(torch).split([1, k], 1), 3, 2, LayoutError),
    *_pair("split-size", lambda k: _x().split(k, 1), lambda torch, k: _t(torch).split(k, 1),
           1, 0, LayoutError),
    *_pair("split-dim", lambda d: _x().split(1, d), lambda torch, d: _t(torch).split(1, d),
           -2, -3, OutOfRangeError),
    # getitem: ints at both ends, too many indices, slices (clamped, never out of range)
    *_pair("getitem-int", lambda i: _x()[i], lambda torch, i: _t(torch)[i], 2, 3, OutOfRangeError),
    *_pair("getitem-negative-int", lambda i: _x()[i], lambda torch, i: _t(torch)[i], -3, -4, OutOfRangeError),
    *_pair("getitem-int-dim1", lambda i: _x()[:, i], lambda torch, i: _t(torch)[:, i], 3, 4, OutOfRangeError),
    *_pair("getitem-rank", lambda k: _x()[k], lambda torch, k: _t(torch)[k], (0, 0), (0, 0, 0),
           OutOfRangeError),
    *_pair("getitem-slice-step", lambda k: _x()[::k], lambda torch, k: _t(torch)[::k], 1, 0, LayoutError),
    Case("getitem-slice-past-end", lambda: _x()[3:], lambda torch: _t(torch)[3:], None),
    Case("getitem-slice-far-past-end", lambda: _x()[:, 9:20], lambda torch: _t(torch)[:, 9:20], None),
    Case("getitem-slice-far-before-start", lambda: _x()[-9:1], lambda torch: _t(torch)[-9:1], None),
    # x.at[idx] writes: the same index checks
    *_pair("at-int", _at_set, _torch_set, 2, 3, OutOfRangeError),
    *_pair("at-negative-int", _at_set, _torch_set, -3, -4, OutOfRangeError),
    *_pair("at-int-dim1", _at_set, _torch_set, (slice(None), 3), (slice(None), 4), OutOfRangeError),
    *_pair("at-rank", _at_set, _torch_set, (0, 0), (0, 0, 0), OutOfRangeError),
    # fs.materialize, fs.write, with_storage: the storage end
    *_pair("materialize-offset", lambda o: fs.materialize(_STORE, Layout((2, 3), (4, 1), o)), None,
           5, 6, StorageError),
    *_pair("materialize-storage", lambda n: fs.materialize(jnp.arange(float(n)), Layout((2, 3), (4, 1), 5)),
           None, 12, 11, StorageError),
    *_pair("write-offset", lambda o: fs.write(_STORE, Layout((2, 3), (4, 1), o), 1.0), None,
           5, 6, StorageError),
    *_pair("write-storage", lambda n: fs.write(jnp.zeros(n), Layout((2, 3), (4, 1), 5), 1.0),
           None, 12, 11, StorageError),
    *_pair("with_storage", lambda n: _x()[1:].with_storage(jnp.zeros(n)), None, 12, 11, StorageError),
    Case("with_storage-empty-view", lambda: _x()[3:].with_storage(jnp.zeros(0)), None, None),
]


def _describe(r):
    if isinstance(r, tuple):
        return [_describe(p) for p in r]
    if hasattr(r, "storage_offset"):
        return (tuple(r.shape), tuple(r.stride()), r.storage_offset())
    return None


@pytest.mark.parametrize("case", BOUNDS, ids=[c.id for c in BOUNDS])
def test_bounds_at_the_boundary(case):
    if case.error is None:
        case.ours()
    else:
        with pytest.raises(case.error):
            case.ours()


@pytest.mark.parametrize("case", [c for c in BOUNDS if c.theirs], ids=[c.id for c in BOUNDS if c.theirs])
def test_bounds_at_the_boundary_match_torch(case):
    torch = import_torch()
    if case.error is not None:
        with pytest.raises((RuntimeError, IndexError, ValueError)):
            case.theirs(torch)
        return
    ours, theirs = case.ours(), case.theirs(torch)
    assert _describe(ours) == _describe(theirs)
    if not isinstance(ours, tuple):
        np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())


def test_boundary_values_read_the_right_elements():
    # the last valid offset reads the last storage element; the first valid negative index
    # reads the first row
    x = fs.as_strided(_STORE, (2, 3), (4, 1), 5)
    np.testing.assert_array_equal(np.asarray(x), [[5, 6, 7], [9, 10, 11]])
    assert _x()[-3].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert _x().narrow(1, -4, 1).tolist() == [[0.0], [4.0], [8.0]]
    assert _x().narrow(1, 4, 0).shape == (3, 0)
    out = fs.write(jnp.zeros(12), Layout((2, 3), (4, 1), 5), 1.0)
    assert np.asarray(out).tolist() == [0.0] * 5 + [1.0] * 3 + [0.0] + [1.0] * 3
