"""``StridedArray`` and ``Layout`` as pytrees in JAX's and equinox's transforms. A Python int
offset is static metadata (the storage is the one leaf); an array offset is a leaf. Whatever a
transform leaves as the leaves (``None``, ``object()``, ``ShapeDtypeStruct``, float0
cotangents, tracers) is a valid value that prints its static layout and the leaves' kinds;
``eval_shape`` of view ops gives ``ShapeDtypeStruct`` leaves; ``tree_map`` round trips;
gradients through views (``allow_int=True``, and with respect to the storage), with
``jax.grad`` and ``eqx.filter_grad``; ``eqx.partition``/``combine`` and ``eqx.filter_jit``;
hashing a ``Layout`` returned from ``jit``; placeholders refused, with the way out, where
values are needed."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import functional_strides as fs
from functional_strides import Layout, LayoutTypeError, StridedArray

eqx = pytest.importorskip("equinox", reason="equinox is in the test extra: pip install -e '.[test]'")


def _view() -> StridedArray:
    """A transposed, sliced view with a non-zero int offset: (3,3):(1,4)+1 over 12 elements."""
    return fs.from_array(jnp.arange(12.0).reshape(3, 4)).t()[1:]


def _array_view() -> StridedArray:
    """The same view with its offset an array (a pytree leaf)."""
    x = _view()
    return x.as_strided(x.shape, x.stride(), jnp.asarray(1))


def _loss(x: StridedArray) -> jax.Array:
    return jnp.sum(jnp.sin(jnp.asarray(x)) * jnp.arange(9.0).reshape(3, 3))


FLOAT0 = np.zeros((), dtype=jax.dtypes.float0)
PLACEHOLDERS = {
    "None": (None, None, "None"),
    "object": (object(), object(), "object"),
    "ShapeDtypeStruct": (jax.ShapeDtypeStruct((12,), jnp.float32), jax.ShapeDtypeStruct((), jnp.int32),
                         "ShapeDtypeStruct(int32[])"),
    "float0": (np.zeros(12, jax.dtypes.float0), FLOAT0, "ndarray(float0[])"),
}


@pytest.mark.parametrize("name", PLACEHOLDERS)
def test_placeholder_leaves_print_the_static_layout_and_their_kinds(name):
    storage, offset, kind = PLACEHOLDERS[name]
    treedef = jax.tree_util.tree_structure(_array_view())
    x = jax.tree_util.tree_unflatten(treedef, [storage, offset])
    for text in (repr(x), str(x)):
        assert text.startswith("StridedArray(layout=(3,3):(1,4)+<"), text
        assert f"offset={kind}" in text and "storage=" in text, text
    lay = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(_array_view().layout), [offset])
    assert str(lay) == f"(3,3):(1,4)+<{kind}>"
    assert repr(lay).startswith("Layout(shape=(3, 3), strides=(1, 4), offset=")
    # an int offset is in the treedef: the storage is the one leaf, and the layout prints whole
    y = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(_view()), [storage])
    assert repr(y).startswith("StridedArray(layout=(3,3):(1,4)+1, ") and "offset=" not in repr(y)
    assert jax.tree_util.tree_structure(_view().layout).num_leaves == 0


def test_every_leaf_kind_is_named():
    x = jax.tree_util.tree_map(lambda _: None, _array_view())
    assert repr(x) == "StridedArray(layout=(3,3):(1,4)+<None>, storage=None, offset=None)"
    none = jax.tree_util.tree_map(lambda _: None, _view())
    assert repr(none) == "StridedArray(layout=(3,3):(1,4)+1, storage=None)"
    y = StridedArray._wrap(jax.ShapeDtypeStruct((2, 12), jnp.int8), Layout((3,), (1,)))
    assert repr(y) == ("StridedArray(layout=(3,):(1,)+0, batch_shape=(2,), dtype=int8, "
                       "storage=ShapeDtypeStruct(int8[2,12]))")


def test_tracers_print_the_layout_and_their_abstract_values():
    seen = []

    @jax.jit
    def f(x):
        seen.append((repr(x), str(x.layout)))
        return x.contiguous()

    f(_array_view())
    text, layout = seen[0]
    assert layout == "(3,3):(1,4)+<traced>"
    assert text.startswith("StridedArray(layout=(3,3):(1,4)+<traced>, dtype=float32, storage=")
    assert "float32[12]" in text and "int32[]" in text
    f(_view())  # an int offset is static: it prints as itself
    text, layout = seen[1]
    assert layout == "(3,3):(1,4)+1" and "float32[12]" in text and "int32[]" not in text


@pytest.mark.parametrize("array_offset", [False, True], ids=["int_offset", "array_offset"])
def test_eval_shape_of_view_ops_gives_shape_dtype_structs(array_offset):
    x = _array_view() if array_offset else _view()
    for op in (lambda v: v.t(), lambda v: v[1:, ::2], lambda v: v.unsqueeze(0).expand(2, 3, 3),
               lambda v: v.contiguous()):
        want = op(x)
        got = jax.eval_shape(op, x)
        assert isinstance(got, StridedArray)
        assert (got.shape, got.stride()) == (want.shape, want.stride())
        assert isinstance(got.storage, jax.ShapeDtypeStruct)
        assert (got.storage.shape, got.storage.dtype) == (want.storage.shape, want.storage.dtype)
        if not isinstance(want.layout.offset, int):  # an array offset: a leaf, abstract here
            assert array_offset and isinstance(got.layout.offset, jax.ShapeDtypeStruct)
            assert "ShapeDtypeStruct" in repr(got) and "ShapeDtypeStruct" in str(got.layout)
        else:
            assert got.layout == want.layout and isinstance(got.layout.offset, int)
            assert "ShapeDtypeStruct" in repr(got)


@pytest.mark.parametrize("array_offset", [False, True], ids=["int_offset", "array_offset"])
@pytest.mark.parametrize("fill", [None, "object"], ids=["None", "object"])
def test_tree_map_round_trips(fill, array_offset):
    x = _array_view() if array_offset else _view()
    token = object() if fill == "object" else None
    placeholders = jax.tree_util.tree_map(lambda _: token, x)
    assert jax.tree_util.tree_structure(placeholders, is_leaf=lambda v: v is None) == \
        jax.tree_util.tree_structure(x, is_leaf=lambda v: v is None)
    assert placeholders.layout.shape == x.shape and placeholders.layout.strides == x.stride()
    back = jax.tree_util.tree_map(lambda _, v: v, placeholders, x, is_leaf=lambda v: v is None)
    assert back.layout == x.layout and back.storage is x.storage
    same = jax.tree_util.tree_map(lambda v: v, x)
    np.testing.assert_array_equal(np.asarray(same), np.asarray(x))


def test_grad_of_a_view_with_an_int_offset_is_a_view_whose_storage_is_the_gradient():
    x = _view()
    g = jax.grad(_loss)(x)  # the storage is the one leaf: no allow_int needed
    assert isinstance(g, StridedArray) and g.layout == x.layout
    want = jax.grad(lambda s: _loss(x.with_storage(s)))(x.storage)
    np.testing.assert_allclose(np.asarray(g.storage), np.asarray(want), rtol=1e-6)
    step = jax.tree_util.tree_map(lambda p, d: p - 0.1 * d, x, g)  # a hand-written SGD step
    assert step.layout == x.layout
    np.testing.assert_allclose(np.asarray(step.storage), np.asarray(x.storage - 0.1 * want), rtol=1e-6)


def test_grad_with_allow_int_returns_a_strided_cotangent_whose_storage_is_the_gradient():
    x = _array_view()
    g = jax.grad(_loss, allow_int=True)(x)
    assert isinstance(g, StridedArray) and g.layout.shape == x.shape and g.layout.strides == x.stride()
    assert g.layout.offset.dtype == jax.dtypes.float0
    want = jax.grad(lambda s: _loss(x.with_storage(s)))(x.storage)
    np.testing.assert_allclose(np.asarray(g.storage), np.asarray(want), rtol=1e-6)
    # the gradient with respect to the storage is the chain rule through the read
    read = fs.oracle.element_indices(x.layout).reshape(-1)
    manual = np.zeros(12, np.float32)
    np.add.at(manual, read, np.cos(np.asarray(x).reshape(-1)) * np.arange(9.0))
    np.testing.assert_allclose(np.asarray(want), manual, rtol=1e-6)
    assert "float0" in repr(g) and "+<ndarray(float0[])>" in str(g.layout)


def test_grad_without_allow_int_is_jaxs_refusal_of_the_offset():
    with pytest.raises(TypeError, match="allow_int"):
        jax.grad(_loss)(_array_view())


def test_equinox_filter_grad_and_partition_keep_an_int_offset():
    x = _view()
    g = eqx.filter_grad(_loss)(x)
    assert isinstance(g, StridedArray) and g.layout == x.layout
    np.testing.assert_allclose(np.asarray(g.storage), np.asarray(jax.grad(_loss)(x).storage), rtol=1e-6)
    dynamic, static = eqx.partition(x, eqx.is_inexact_array)
    assert dynamic.storage is x.storage and dynamic.layout == x.layout
    assert static.storage is None and static.layout == x.layout
    np.testing.assert_array_equal(np.asarray(eqx.combine(dynamic, static)), np.asarray(x))


def test_equinox_filter_grad_partition_and_filter_jit():
    x = _array_view()
    g = eqx.filter_grad(_loss)(x)
    assert isinstance(g, StridedArray) and g.layout.offset is None
    np.testing.assert_allclose(np.asarray(g.storage),
                               np.asarray(jax.grad(lambda s: _loss(x.with_storage(s)))(x.storage)), rtol=1e-6)
    assert repr(g).startswith("StridedArray(layout=(3,3):(1,4)+<None>, dtype=float32, storage=Array(")
    dynamic, static = eqx.partition(x, eqx.is_inexact_array)
    assert dynamic.storage is x.storage and dynamic.layout.offset is None
    assert static.storage is None and static.layout.offset == 1
    assert "storage=None" in repr(static) and "+<None>" in repr(dynamic)
    again = eqx.combine(dynamic, static)
    assert again.layout == x.layout
    np.testing.assert_array_equal(np.asarray(again), np.asarray(x))
    out = eqx.filter_jit(lambda v: v.t().contiguous())(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x).T)
    value, grad = eqx.filter_jit(eqx.filter_value_and_grad(_loss))(x)
    np.testing.assert_allclose(float(value), float(_loss(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(grad.storage), np.asarray(g.storage), rtol=1e-6)


SPELLING = "jax.grad(lambda s: loss(x.with_storage(s)))(x.storage)"


@pytest.mark.parametrize("make", [
    lambda: jax.grad(_loss, allow_int=True)(_array_view()),
    lambda: eqx.filter_grad(_loss)(_array_view()),
    lambda: jax.tree_util.tree_map(lambda _: None, _array_view()),
    lambda: jax.eval_shape(lambda v: v, _array_view()),
    lambda: jax.tree_util.tree_map(lambda _: None, _view()),
    lambda: jax.eval_shape(lambda v: v, _view()),
], ids=["float0_offset", "filter_grad", "tree_map_none", "eval_shape", "int_offset_none",
        "int_offset_eval_shape"])
def test_placeholders_are_refused_where_values_are_needed_naming_the_way_to_a_gradient(make):
    p = make()
    for read in (lambda: p.contiguous(), lambda: np.asarray(p), lambda: p.at[...].set(1.0)):
        with pytest.raises(LayoutTypeError, match=re.escape(SPELLING)):
            read()


def test_the_public_constructor_refuses_placeholders_and_unflatten_keeps_them():
    message = "StridedArray: storage must be a 1-D JAX or NumPy array, not None"
    with pytest.raises(LayoutTypeError, match=message):
        StridedArray(None, Layout((2,), (1,)))
    with pytest.raises(LayoutTypeError, match="not ShapeDtypeStruct"):
        StridedArray(jax.ShapeDtypeStruct((4,), jnp.float32), Layout((2,), (1,)))
    treedef = jax.tree_util.tree_structure(StridedArray(jnp.zeros(4), Layout((2,), (1,))))
    assert jax.tree_util.tree_unflatten(treedef, [None]).storage is None
    treedef = jax.tree_util.tree_structure(StridedArray(jnp.zeros(4), Layout((2,), (1,), jnp.asarray(0))))
    assert jax.tree_util.tree_unflatten(treedef, [None, None]).storage is None


def test_a_layout_returned_from_jit_hashes_by_value():
    assert jax.jit(lambda v: v.layout)(_view()) == _view().layout  # static: returned as it is
    x = _array_view()
    lay = jax.jit(lambda v: v.layout)(x)
    assert isinstance(lay.offset, jax.Array)
    assert lay == x.layout and hash(lay) == hash(x.layout)
    assert {lay: "value"}[x.layout] == "value"
    assert hash(Layout((3,), (1,), np.int64(2))) == hash(Layout((3,), (1,), 2))
    assert hash(Layout((3,), (1,), jnp.int32(2))) == hash(Layout((3,), (1,), 2))
    assert hash(jax.tree_util.tree_map(lambda _: None, x.layout)) == hash(((3, 3), (1, 4), None))


@pytest.mark.parametrize("offset, why", [
    (np.array([1, 2]), "its offset holds 2 offsets (one per item of a batched array)"),
    (FLOAT0, "its offset is a ndarray(float0[]), not an integer"),
], ids=["per_item", "float0"])
def test_a_layout_that_cannot_hash_says_why(offset, why):
    treedef = jax.tree_util.tree_structure(Layout((2,), (1,), jnp.asarray(0)))  # an array offset: a leaf
    lay = jax.tree_util.tree_unflatten(treedef, [offset])
    with pytest.raises(TypeError, match=re.escape(why)):
        hash(lay)


def test_a_traced_layout_cannot_hash_and_says_why():
    def f(v):
        with pytest.raises(TypeError, match="its offset is traced"):
            hash(v.layout)
        return v.storage

    jax.jit(f)(_array_view())


def test_a_leaf_offset_keeps_its_treedef_whatever_a_transform_puts_in_it():
    """Axis specs and filter flags replace leaves with ints and bools: the tree keeps its
    structure (equinox's filter_vmap builds its out_axes so)."""
    y = _array_view()
    spec = jax.tree_util.tree_map(lambda _: 0, y)
    assert jax.tree_util.tree_structure(spec) == jax.tree_util.tree_structure(y)
    flags = jax.tree_util.tree_map(lambda _: True, y)
    assert jax.tree_util.tree_structure(flags) == jax.tree_util.tree_structure(y)
    assert spec.layout == Layout(y.shape, y.stride(), 0)  # the leaf marker is not part of the value

    def make(key):
        return fs.from_array(jax.random.normal(key, (13,))).as_strided((3, 4), (4, 1), jnp.asarray(1))

    keys = jax.random.split(jax.random.key(0), 3)
    ensemble = eqx.filter_vmap(make)(keys)
    assert ensemble.batch_shape == (3,) and ensemble.layout.offset.tolist() == [1, 1, 1]
    sums = eqx.filter_vmap(lambda v: jnp.asarray(v).sum())(ensemble)
    np.testing.assert_allclose(np.asarray(sums), [float(jnp.asarray(make(k)).sum()) for k in keys], rtol=1e-6)
