"""The ``StridedArray`` surface: a ``torch.Tensor`` name either does what PyTorch's does, or is absent.

Operators (materialise, return ``jax.Array``), the table of absent ``torch.Tensor`` methods,
``repr``, wrong-type arguments (``TypeError``/``IndexError`` as in PyTorch), DLPack export,
pickling and copying.
"""

from __future__ import annotations

import copy
import importlib
import operator
import pickle
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples, import_torch
from hypothesis import given
from strategies import strided_arrays

import functional_strides as fs
from functional_strides import Layout, LayoutError, StridedArray
from functional_strides._src.array import tensor_names as _tensor_names
from functional_strides._src.core.layout import format_layout


def _view(dtype: str = "float32") -> StridedArray:
    """A 3x3 non-contiguous view with an offset: rows 1..3, every other column, transposed."""
    storage = (np.arange(1, 31) % 11 + 1).astype(dtype)
    return StridedArray(jnp.asarray(storage), Layout((3, 3), (2, 7), 5))


def _dense(x: StridedArray) -> np.ndarray:
    return fs.oracle.materialize(np.asarray(x.storage), x.layout)


# -- 1. operators --------------------------------------------------------------------------------
FLOAT_BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                "eq", "ne", "lt", "le", "gt", "ge"]
INT_BINARY = ["and_", "or_", "xor", "lshift", "rshift"]
OPERANDS = ["int", "float", "np_scalar", "np_array", "jax_array", "strided"]


def _operand(kind: str, dtype: str):
    other = _view(dtype).t()  # same shape, another layout of the same values
    dense = _dense(other)
    return {"int": 2, "float": 2.0, "np_scalar": np.dtype(dtype).type(2), "np_array": dense,
            "jax_array": jnp.asarray(dense), "strided": other}[kind]


def _binary_cases():
    for name in FLOAT_BINARY + INT_BINARY:
        dtype = "int32" if name in INT_BINARY else "float32"
        for kind in OPERANDS:
            if name == "matmul" and kind in ("int", "float", "np_scalar"):
                continue  # a scalar operand of @ is an error in jnp too
            if dtype == "int32" and kind == "float":
                continue  # no float bitwise ops
            yield pytest.param(name, dtype, kind, id=f"{name}-{kind}")


@pytest.mark.sampled(4)
@pytest.mark.parametrize("name,dtype,kind", list(_binary_cases()))
@pytest.mark.parametrize("side", ["left", "right"])
def test_binary_operator_materialises_to_jax_array(name, dtype, kind, side):
    """``x op y`` and ``y op x`` for every operand kind equal jnp's result on the dense values,
    as a ``jax.Array``, whatever the other operand is (NumPy arrays and scalars included)."""
    op = getattr(operator, name)
    x, other = _view(dtype), _operand(kind, dtype)
    dense_other = jnp.asarray(other) if kind == "strided" else other
    if side == "left":
        got, want = op(x, other), op(jnp.asarray(_dense(x)), dense_other)
    else:
        got, want = op(other, x), op(dense_other, jnp.asarray(_dense(x)))
    assert isinstance(got, jax.Array) and not isinstance(got, np.ndarray), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape == (3, 3)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("kind", OPERANDS)
def test_divmod_both_sides(kind):
    x, other = _view(), _operand(kind, "float32")
    dense_other = jnp.asarray(other) if kind == "strided" else other
    for got, want in ((divmod(x, other), divmod(jnp.asarray(_dense(x)), dense_other)),
                      (divmod(other, x), divmod(dense_other, jnp.asarray(_dense(x))))):
        assert all(isinstance(g, jax.Array) for g in got)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("name,dtype", [("neg", "float32"), ("pos", "float32"), ("abs", "float32"),
                                        ("invert", "int32"), ("invert", "bool")])
def test_unary_operator(name, dtype):
    x = _view(dtype)
    if dtype != "bool":
        x = x.with_storage(x.storage - 6)  # negative values too
    got = getattr(operator, name)(x)
    assert isinstance(got, jax.Array) and got.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(got), getattr(operator, name)(_dense(x)))


def test_operators_against_the_oracle():
    """The values, not just agreement with jnp: the NumPy oracle's dense array."""
    x = _view()
    d = _dense(x)
    np.testing.assert_allclose(np.asarray(2 * x + x @ x - 1 / x), 2 * d + d @ d - 1 / d, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(x == x.t()), d == d.T)


@examples(5)
@given(x=strided_arrays())
def test_operators_match_the_oracle_on_any_layout(x):
    """Random layouts (empty, rank 0, stride 0, overlapping, offset): arithmetic, comparison
    and reflected forms with a NumPy left operand equal NumPy on the oracle's dense array."""
    d = _dense(x)
    ones = np.ones(x.shape, np.float32)
    results = {"np+x": (ones + x, ones + d), "x==d": (x == d, d == d), "-x": (-x, -d)}
    for name, (got, want) in results.items():
        assert isinstance(got, jax.Array), name
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)


@examples(5)
@given(x=strided_arrays())
def test_repr_matches_jnp_on_any_layout(x):
    ours, theirs = " ".join(str(x).split()), " ".join(repr(jnp.asarray(x)).split())
    want = theirs.replace("Array(", "StridedArray(", 1).replace(", dtype=", f", layout={x.layout}, dtype=")
    assert ours == want


def test_operators_under_jit_and_batched():
    x = _view()
    f = jax.jit(lambda s: StridedArray(s, x.layout) * 2 + 1)
    np.testing.assert_array_equal(np.asarray(f(x.storage)), 2 * _dense(x) + 1)
    batch = StridedArray(jnp.stack([x.storage, -x.storage]), x.layout, batched=True)
    np.testing.assert_array_equal(np.asarray(batch + 1), np.stack([_dense(x), -_dense(x)]) + 1)


def test_comparison_is_elementwise_and_unhashable():
    x = _view()
    eq = x == x
    assert isinstance(eq, jax.Array) and eq.shape == (3, 3) and bool(eq.all())
    assert not bool((x != x).any())
    assert StridedArray.__hash__ is None
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)
    with pytest.raises(TypeError, match="unhashable"):
        {x}  # noqa: B018


def test_unknown_operand_falls_back_to_python():
    x = _view()
    assert (x == "text") is False and (x != "text") is True  # NotImplemented both ways: identity
    with pytest.raises(TypeError):
        x + "text"


def test_inplace_operator_rebinds_to_a_jax_array():
    x = _view()
    y = x
    y += 1  # no __iadd__: like jax.Array, y becomes a new jax.Array and x is untouched
    assert isinstance(y, jax.Array) and isinstance(x, StridedArray)
    np.testing.assert_array_equal(np.asarray(y), _dense(x) + 1)


# -- 2. absent torch.Tensor methods ---------------------------------------------------------------
TABLE_NAMES = sorted(_tensor_names.TABLE)
# StridedArray still has these four write methods; x.at[idx] replaces them, after which the
# table answers for them (the tests below for those names pass from then on).
AT_REPLACED = ("add", "mul", "min", "max")


@pytest.mark.parametrize("name", TABLE_NAMES)
def test_non_view_torch_method_is_absent(name):
    x = _view()
    assert not hasattr(x, name)
    with pytest.raises(AttributeError, match=re.escape(_tensor_names.message(name))) as info:
        getattr(x, name)
    assert info.value.name == name
    msg = str(info.value)
    assert msg.startswith("StridedArray has no ") and f"torch.Tensor.{name} " in msg
    category = _tensor_names.TABLE[name][0]
    expected = {"write": ".at[", "cast": ".astype(", "device": "jax.device_put",
                "grad": "jax."}.get(category)
    if expected is not None:
        assert expected in msg


def test_message_examples():
    x = _view()
    cases = {
        "sum": "StridedArray has no method 'sum' (torch.Tensor.sum is not a view op). Materialise and use "
               "jnp: jnp.asarray(x).sum(axis=...)",
        "add_": "x.at[idx].add(other)", "mul_": "x.at[idx].multiply(other)", "copy_": "x.at[idx].set(src)",
        "fill_": "x.at[idx].set(value)", "zero_": "x.at[idx].set(0)", "index_put_": "x.at[idx].set(values)",
        "clamp_min_": "x.at[idx].max(min)", "clamp_max_": "x.at[idx].min(max)",
        "float": "jnp.asarray(x).astype(jnp.float32)", "long": "jnp.asarray(x).astype(jnp.int64)",
        "half": "jnp.asarray(x).astype(jnp.float16)", "to": "jax.device_put(x, device)",
        "cpu": "jax.device_put", "cuda": "jax.device_put",
        "softmax": "jax.nn.softmax(jnp.asarray(x), axis=...)",
        "masked_fill": "jnp.where(mask, value, jnp.asarray(x))", "detach": "jax.lax.stop_gradient(x)",
        "backward": "jax.grad", "requires_grad_": "jax.grad", "exp": "jnp.exp(jnp.asarray(x), ...)",
        "argmax": "jnp.asarray(x).argmax(axis=...)", "matmul": "x @ other",
        "device": "StridedArray has no attribute 'device'",
    }
    for name, text in cases.items():
        if name in AT_REPLACED:
            continue
        with pytest.raises(AttributeError) as info:
            getattr(x, name)
        assert text in str(info.value), (name, str(info.value))


@pytest.mark.parametrize("name", AT_REPLACED)
def test_removed_write_methods_answer_with_jnp(name):
    """add/mul/min/max are torch.Tensor ops that are not views: absent, with the jnp way."""
    with pytest.raises(AttributeError, match=re.escape(f"torch.Tensor.{name} is not a view op")):
        getattr(_view(), name)


def test_unknown_name_is_a_plain_attribute_error():
    x = _view()
    with pytest.raises(AttributeError, match=r"^'StridedArray' object has no attribute 'no_such_name'$"):
        x.no_such_name  # noqa: B018
    assert getattr(x, "no_such_name", 5) == 5 and not hasattr(x, "__array_interface__")
    assert hasattr(x, "view") and hasattr(x, "__jax_array__")
    with pytest.raises(AttributeError, match="immutable"):
        x.sum = 1  # still refused: no attribute can be set


def _referenced(hint: str) -> list[str]:
    """Dotted names a hint calls: ``jnp.linalg.inv``, ``jax.nn.softmax``, ``fs.select_scatter``
    and ``jax.Array.<name>`` for ``jnp.asarray(x).<name>``."""
    refs = re.findall(r"\b((?:jnp|jax|fs)(?:\.[A-Za-z_]\w*)+)", hint)
    refs += [f"jax.Array.{m}" for m in re.findall(r"jnp\.asarray\(x\)\.([A-Za-z_]\w*)", hint)]
    return [r for r in refs if not r.startswith("jnp.asarray(")]


def _resolve(dotted: str) -> object:
    head, *rest = dotted.split(".")
    obj = {"jnp": jnp, "jax": jax, "fs": fs}[head]
    for i, part in enumerate(rest):
        if not hasattr(obj, part) and isinstance(obj, type(jax)):
            obj = importlib.import_module(f"{obj.__name__}.{part}")  # e.g. jax.scipy.special
        else:
            obj = getattr(obj, part)
        del i
    return obj


def test_hints_name_existing_jax_functions():
    missing = []
    for name, (_, hint) in _tensor_names.TABLE.items():
        for ref in _referenced(hint):
            try:
                _resolve(ref)
            except (AttributeError, ImportError):
                missing.append((name, ref))
    assert not missing


def test_hints_name_existing_strided_array_attributes():
    """``x.<attr>`` in a hint is a StridedArray attribute (``x.at`` once the functional writes
    through ``x.at[idx]`` are in)."""
    used = {m for _, hint in _tensor_names.TABLE.values()
            for m in re.findall(r"(?<![\w.)])x\.([A-Za-z_]\w*)", hint)}
    assert "at" in used and "transpose" in used
    assert not {m for m in used if not hasattr(StridedArray, m) and m not in StridedArray.__slots__}


def test_table_matches_torch_tensor():
    """Every public torch.Tensor name is implemented by StridedArray or listed in the table,
    and the table lists nothing torch.Tensor lacks (run against the installed torch)."""
    torch = import_torch()  # the PyTorch legs are skipped (naming the extra) without it
    public = {n for n in dir(torch.Tensor) if not n.startswith("_")}
    table = set(_tensor_names.TABLE)
    implemented = {n for n in public if n not in table and hasattr(StridedArray, n)}
    assert not table - public, sorted(table - public)
    assert not public - table - implemented, sorted(public - table - implemented)
    properties = {n for n in public if isinstance(getattr(torch.Tensor, n, None), property)
                  or type(getattr(torch.Tensor, n, None)).__name__ == "getset_descriptor"}
    assert properties & table == _tensor_names.PROPERTIES & table


def test_pickle_and_copy_keep_storage_and_layout():
    x = _view()[1:, ::2]
    for y in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x)):
        assert isinstance(y, StridedArray) and y.layout == x.layout
        np.testing.assert_array_equal(np.asarray(y.storage), np.asarray(x.storage))
        np.testing.assert_array_equal(np.asarray(y), _dense(x))
    assert copy.copy(x).storage is x.storage
    batch = StridedArray(jnp.ones((2, 40)), Layout((3,), (2,), 1), batched=True)
    assert pickle.loads(pickle.dumps(batch)).batch_shape == (2,)


# -- 3. repr ---------------------------------------------------------------------------------
REPR_LAYOUTS = [Layout((2, 2), (1, 3), 0), Layout((3,), (4,), 2), Layout((), (), 7),
                Layout((2, 0), (1, 1), 0), Layout((2, 3, 4), (0, 4, 1), 5), Layout((40, 40), (1, 0), 0)]


@pytest.mark.parametrize("layout", REPR_LAYOUTS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "bfloat16"])
def test_repr_matches_jnp_plus_layout(layout, dtype):
    """``str``: the values print exactly as jnp prints ``jnp.asarray(x)`` (up to the alignment
    the longer prefix gives), followed by the layout; ``repr``: the short form, dtype and
    shape as JAX's ``str_short`` writes them, then the layout."""
    x = StridedArray(jnp.asarray((np.arange(50) % 7).astype(dtype)), layout)
    ours, theirs = " ".join(str(x).split()), " ".join(repr(jnp.asarray(x)).split())
    assert theirs.startswith("Array(") and ours.startswith("StridedArray(")
    assert ours == theirs.replace("Array(", "StridedArray(", 1).replace(
        ", dtype=", f", layout={layout}, dtype=")
    short = jax.core.ShapedArray(layout.shape, jnp.dtype(dtype)).str_short(short_dtypes=True)
    assert repr(x) == f"StridedArray({short}, {layout})"


def test_repr_example_and_notation():
    x = fs.from_array(jnp.arange(6.0).reshape(2, 3))[:, :2].t()
    assert str(x) == ("StridedArray([[0., 3.],\n              [1., 4.]], layout=(2,2):(1,3)+0, "
                      "dtype=float32)")
    assert repr(x) == "StridedArray(f32[2,2], (2,2):(1,3)+0)"


def test_repr_batched_shows_every_item():
    x = StridedArray(jnp.arange(12.0).reshape(2, 6), Layout((2, 2), (1, 3)), batched=True)
    r = " ".join(str(x).split())
    assert r == ("StridedArray([[[ 0., 3.], [ 1., 4.]], [[ 6., 9.], [ 7., 10.]]], layout=(2,2):(1,3)+0, "
                 "batch_shape=(2,), dtype=float32)")
    assert repr(x) == "StridedArray(f32[2,2], (2,2):(1,3)+0, batch_shape=(2,))"


def test_repr_under_trace_does_not_materialise():
    seen = []

    @jax.jit
    def f(storage, k):
        seen.append(repr(StridedArray(storage, Layout((2, 2), (1, 3)))))
        seen.append(repr(StridedArray(storage, Layout((2,), (1,), k))))
        return storage

    f(jnp.arange(8.0), jnp.int32(1))
    jax.vmap(lambda s: seen.append(repr(StridedArray(s, Layout((2,), (3,))))) or s)(jnp.ones((2, 8)))
    first, second, third = seen
    assert first.startswith("StridedArray(layout=(2,2):(1,3)+0, dtype=float32, storage=")
    assert "float32[8]" in first
    assert "layout=(2,):(1,)+<traced>" in second and "offset=" in second and "int32[]" in second
    assert third.startswith("StridedArray(layout=(2,):(3,)+0, dtype=float32, storage=")
    assert all("[[" not in r and "0.," not in r for r in seen)  # no values: nothing materialised


def test_repr_of_a_scalar_storage_says_why():
    """What vmap over a 1-D storage makes of a StridedArray: a scalar storage. repr says so."""
    leaves, treedef = jax.tree_util.tree_flatten(_view())
    leaves = [jnp.float32(1) if jnp.ndim(leaf) == 1 else leaf for leaf in leaves]
    assert "error=StorageError" in str(jax.tree_util.tree_unflatten(treedef, leaves))


# -- 4. wrong Python types: TypeError (or IndexError) subclasses that are LayoutErrors ----------
# (id, call on an array of shape (3, 4) -- a StridedArray or a torch.Tensor, builtin class torch raises)
BAD_TYPES = [
    ("view-float", lambda t: t.view(2.0), TypeError),
    ("view-str", lambda t: t.view("2"), TypeError),
    ("view-tuple-float", lambda t: t.view((2.0, 6)), TypeError),
    ("view-bool", lambda t: t.view(True, 12), TypeError),
    ("view-none", lambda t: t.view(None), TypeError),
    ("reshape-float", lambda t: t.reshape(12.0), TypeError),
    ("permute-float", lambda t: t.permute(0.0, 1), TypeError),
    ("transpose-float", lambda t: t.transpose(0.0, 1), TypeError),
    ("select-index-float", lambda t: t.select(0, 1.5), TypeError),
    ("select-dim-float", lambda t: t.select(1.0, 0), TypeError),
    ("select-index-bool", lambda t: t.select(0, True), TypeError),
    ("narrow-start-str", lambda t: t.narrow(0, "1", 2), TypeError),
    ("narrow-length-float", lambda t: t.narrow(0, 0, 2.0), TypeError),
    ("unfold-size-float", lambda t: t.unfold(0, 2.0, 1), TypeError),
    ("unfold-step-float", lambda t: t.unfold(0, 2, 1.0), TypeError),
    ("unfold-size-bool", lambda t: t.unfold(0, True, 1), TypeError),
    ("diagonal-offset-float", lambda t: t.diagonal(0.5), TypeError),
    ("diagonal-offset-bool", lambda t: t.diagonal(True), TypeError),
    ("diagonal-dim-float", lambda t: t.diagonal(0, 0.0, 1), TypeError),
    ("split-size-float", lambda t: t.split(2.0), TypeError),
    ("split-sections-float", lambda t: t.split([1.0, 2]), TypeError),
    ("split-dim-float", lambda t: t.split(2, 0.0), TypeError),
    ("split-none", lambda t: t.split(None), TypeError),
    ("chunk-float", lambda t: t.chunk(2.0), TypeError),
    ("chunk-dim-float", lambda t: t.chunk(2, 0.5), TypeError),
    ("unbind-float", lambda t: t.unbind(0.0), TypeError),
    ("squeeze-float", lambda t: t.squeeze(0.0), TypeError),
    ("squeeze-tuple-float", lambda t: t.squeeze((0.0,)), TypeError),
    ("unsqueeze-float", lambda t: t.unsqueeze(0.0), TypeError),
    ("movedim-float", lambda t: t.movedim(0.0, 1), TypeError),
    ("movedim-tuple-float", lambda t: t.movedim((0,), (1.0,)), TypeError),
    ("expand-float", lambda t: t.expand(2.0, 3, 4), TypeError),
    ("flatten-float", lambda t: t.flatten(0.0), TypeError),
    ("unflatten-sizes-float", lambda t: t.unflatten(0, (1.0, 3)), TypeError),
    ("unflatten-dim-float", lambda t: t.unflatten(0.0, (1, 3)), TypeError),
    ("unflatten-sizes-int", lambda t: t.unflatten(0, 3), TypeError),
    ("size-float", lambda t: t.size(0.0), TypeError),
    ("stride-float", lambda t: t.stride(0.0), TypeError),
    ("as_strided-size-float", lambda t: t.as_strided((2.0,), (1,)), TypeError),
    ("as_strided-stride-float", lambda t: t.as_strided((2,), (1.0,)), TypeError),
    ("as_strided-offset-float", lambda t: t.as_strided((2,), (1,), 0.5), TypeError),
    ("as_strided-offset-str", lambda t: t.as_strided((2,), (1,), "0"), TypeError),
    ("as_strided-size-int", lambda t: t.as_strided(2, 1), TypeError),
    ("expand_as-int", lambda t: t.expand_as(3), TypeError),
    ("broadcast_to-float", lambda t: t.broadcast_to(2.0), TypeError),
    ("broadcast_to-tuple-float", lambda t: t.broadcast_to((3, 4.0)), TypeError),
    ("permute-none", lambda t: t.permute(None), TypeError),
    ("permute-tuple-float", lambda t: t.permute((0.0, 1)), TypeError),
    ("view-np-float", lambda t: t.view(np.float32(12)), TypeError),
    ("view-int-none", lambda t: t.view(12, None), TypeError),
    ("reshape-none", lambda t: t.reshape(None), TypeError),
    ("squeeze-none", lambda t: t.squeeze(None), TypeError),
    ("transpose-none", lambda t: t.transpose(0, None), TypeError),
    ("flatten-str", lambda t: t.flatten(0, "a"), TypeError),
    ("unflatten-str", lambda t: t.unflatten(0, "ab"), TypeError),
    ("narrow-start-none", lambda t: t.narrow(0, None, 1), TypeError),
    ("select-dim-none", lambda t: t.select(None, 0), TypeError),
    ("getitem-float", lambda t: t[1.5], IndexError),
    ("getitem-ellipsis-float", lambda t: t[..., 1.5], IndexError),
    ("getitem-slice-start-float", lambda t: t[1.0:2], TypeError),
    ("getitem-tuple-float", lambda t: t[0, 1.5], IndexError),
    ("getitem-none-float", lambda t: t[None, 1.5], IndexError),
    ("getitem-object", lambda t: t[object()], IndexError),
    ("getitem-np-float", lambda t: t[np.float32(1)], IndexError),
    ("getitem-str", lambda t: t["a"], TypeError),
    ("getitem-slice-float", lambda t: t[1:2.5], TypeError),
    ("getitem-step-float", lambda t: t[::2.0], TypeError),
]


@pytest.mark.parametrize("call,builtin", [pytest.param(c, b, id=i) for i, c, b in BAD_TYPES])
def test_bad_type_raises_like_torch(call, builtin):
    x = fs.from_array(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    with pytest.raises(LayoutError) as ours:
        call(x)
    assert isinstance(ours.value, builtin), type(ours.value).__mro__
    assert isinstance(ours.value, fs.LayoutTypeError)
    torch = import_torch()  # the PyTorch legs are skipped (naming the extra) without it
    with pytest.raises(Exception) as theirs:
        call(torch.arange(12.0).reshape(3, 4))
    assert isinstance(theirs.value, builtin), type(theirs.value)
    for cls in (TypeError, IndexError, ValueError):  # every builtin class torch's error has, ours has
        assert not isinstance(theirs.value, cls) or isinstance(ours.value, cls), cls


@pytest.mark.parametrize("call,match", [
    (lambda: Layout((2.0,), (1,)), "shape[0]=2.0 is a float, not an integer"),
    (lambda: Layout((2,), ("1",)), "strides[0]='1' is a str, not an integer"),
    (lambda: Layout((2,), (1,), 0.5), "offset 0.5 is not an integer"),
    (lambda: Layout((2,), (1,), "0"), "offset '0' is not an integer"),
    (lambda: Layout(2.5, ()), "shape must be a sequence of integers (got shape=2.5 of type float)"),
    (lambda: Layout((2,), (1,))(1.0), "coordinate 1.0 of dim 0 is a float, not an integer"),
    (lambda: fs.view(np.zeros(6), 6), "view: shape must be a tuple of ints, not int"),
    (lambda: fs.reshape(np.zeros(6), 6), "reshape: shape must be a tuple of ints, not int"),
    (lambda: fs.permute(np.zeros((2, 3)), 1), "permute: dims must be a tuple of ints, not int"),
    (lambda: fs.expand(np.zeros(1), "3"), "expand: shape must be a tuple of ints, not str"),
    (lambda: fs.select(np.zeros(3), 0, 1.5), "select: index must be an int, not float"),
    (lambda: fs.overlaps(1, 2), "overlaps: expects two StridedArray or two Layout"),
    (lambda: StridedArray(jnp.zeros(3), "layout"), "layout must be a functional_strides.Layout, not str"),
    (lambda: len(fs.from_array(np.float32(1))), "len() of a 0-d StridedArray"),
    (lambda: iter(fs.from_array(np.float32(1))), "iteration over a 0-d StridedArray"),
], ids=["layout-shape", "layout-stride", "layout-offset-float", "layout-offset-str", "layout-shape-scalar",
        "layout-call", "fs.view", "fs.reshape", "fs.permute", "fs.expand", "fs.select", "overlaps",
        "StridedArray-layout", "len-0d", "iter-0d"])
def test_bad_type_without_torch_counterpart(call, match):
    with pytest.raises(fs.LayoutTypeError, match=re.escape(match)) as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, LayoutError)


@pytest.mark.parametrize("call,cls", [
    (lambda x: x.view(-2, 6), LayoutError), (lambda x: x.select(0, 5), fs.OutOfRangeError),
    (lambda x: x.narrow(0, 0, -1), LayoutError), (lambda x: x.unfold(0, 2, 0), LayoutError),
    (lambda x: x[5], fs.OutOfRangeError), (lambda x: x.as_strided((2,), (1,), -1), fs.StorageError),
    (lambda x: x[[0, 1]], LayoutError), (lambda x: x[True, 0], LayoutError),
    (lambda x: x[np.array([0, 1])], LayoutError), (lambda x: x.broadcast_to(4), LayoutError),
], ids=["view-negative", "select-range", "narrow-negative", "unfold-step-0", "getitem-range",
        "as_strided-offset", "getitem-list", "getitem-bool", "getitem-int-array", "broadcast_to-rank"])
def test_bad_values_are_not_type_errors(call, cls):
    """Wrong values (and index kinds PyTorch accepts but that copy) keep their classes."""
    x = fs.from_array(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    with pytest.raises(cls) as info:
        call(x)
    assert not isinstance(info.value, TypeError)


def test_integer_like_arguments_still_accepted():
    x = fs.from_array(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    assert x[None].squeeze().shape == (3, 4) and fs.squeeze(x[None], None).shape == (3, 4)
    assert x.broadcast_to((2, 3, 4)).stride() == (0, 4, 1) and x[0].broadcast_to(4).shape == (4,)
    assert x.view(np.int64(12)).shape == (12,) and x[np.int64(1)].shape == (4,)
    assert x.select(0, jnp.int32(2)).storage_offset() == 8 and x.size(np.int8(1)) == 4


# -- 5. negative offsets in messages --------------------------------------------------------------
def test_negative_offset_is_printed_with_a_minus():
    assert format_layout((3,), (1,), -2) == "(3,):(1,)-2"
    assert format_layout((2, 3), (3, 1), 4) == "(2,3):(3,1)+4" and format_layout((), (), 0) == "():()+0"
    with pytest.raises(LayoutError) as info:
        Layout((3,), (1,), -2)
    assert "(3,):(1,)-2" in str(info.value) and "+-" not in str(info.value)


# -- 6. DLPack ------------------------------------------------------------------------------------
DLPACK_CASES = [("float32", Layout((3, 3), (2, 7), 5)), ("int32", Layout((4,), (3,), 1)),
                ("int16", Layout((2, 3), (1, 2), 0)), ("uint8", Layout((), (), 4)),
                ("float16", Layout((2, 2, 2), (0, 1, 8), 3))]


@pytest.mark.parametrize("dtype,layout", DLPACK_CASES, ids=lambda v: str(v))
def test_numpy_from_dlpack(dtype, layout):
    storage = (np.arange(30) % 13).astype(dtype)
    x = StridedArray(jnp.asarray(storage), layout)
    out = np.from_dlpack(x)
    assert out.dtype == x.dtype and out.shape == layout.shape
    np.testing.assert_array_equal(out, fs.oracle.materialize(np.asarray(x.storage), layout))
    assert x.__dlpack_device__() == x.storage.__dlpack_device__()


@pytest.mark.parametrize("convert", ["from_dlpack", "as_tensor"])
@pytest.mark.parametrize("dtype,layout", [*DLPACK_CASES, ("bfloat16", Layout((3, 2), (1, 4), 2))],
                         ids=lambda v: str(v))
def test_torch_from_dlpack_and_as_tensor(convert, dtype, layout):
    torch = import_torch()  # the PyTorch legs are skipped (naming the extra) without it
    storage = jnp.asarray((np.arange(30) % 13).astype(np.float32)).astype(dtype)
    x = StridedArray(storage, layout)
    out = getattr(torch, convert)(x)
    assert out.dtype == getattr(torch, dtype) and tuple(out.shape) == layout.shape
    want = fs.oracle.materialize(np.asarray(storage.astype(jnp.float32)), layout)
    np.testing.assert_array_equal(out.float().numpy(), want)


# -- 7. other torch.Tensor dunders ----------------------------------------------------------------
def test_iteration_index_and_scalar_conversions():
    x = _view()
    rows = list(x)
    assert len(rows) == 3 and all(fs.shares_storage(r, x) for r in rows)
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in rows]), _dense(x))
    i = fs.from_array(np.arange(5, dtype=np.int32))[3]
    assert operator.index(i) == 3 and [10, 11, 12, 13][i] == 13
    with pytest.raises(TypeError):
        operator.index(fs.from_array(np.arange(5.0))[3])
    assert complex(fs.from_array(np.arange(5.0))[2]) == 2 + 0j
