"""In-place writes through views of a ``jax.Ref`` (``fs.from_ref``): PyTorch's in-place methods.

Differential against PyTorch first: the same strided tensor on both sides, a random chain of
view ops (``op_chains``), then an in-place op with a random operand; the whole storage must
agree, eagerly and under ``jit``, and the op is refused iff PyTorch refuses it, but for the
documented difference (every view that overlaps itself is refused here, where PyTorch finds
only stride-0 dims). Then PyTorch's dtype rules on a grid of dtypes and operands, the overlap
refusals, reads, ``.at[]`` (unchanged: functional), the methods' absence on arrays over a
``jax.Array``, writes inside JAX programs (``jit``, ``fori_loop``, ``scan``: in place, memory
bounded by the window, no retrace), ``grad`` and ``vmap``, the KV-cache decode loop, and eager
writes and reads of one ref from several threads.
"""

from __future__ import annotations

import gc
import re
import threading
import warnings
import weakref
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples, import_torch
from hypothesis import HealthCheck, event, given
from hypothesis import strategies as st
from jax import lax
from strategies import getitem_keys, op_chains

import functional_strides as fs
from functional_strides import Layout, LayoutError, OverlapError, StridedArray
from functional_strides._src.array import tensor_names
from functional_strides._src.lowering import refs as lowering_refs

TRANSFORMS = ("eager", "jit")
INPLACE = ("copy_", "fill_", "zero_", "add_", "sub_", "mul_", "div_", "div_trunc", "div_floor", "clamp_",
           "setitem", "+=", "-=", "*=", "/=", "//=")
METHODS = ("copy_", "fill_", "zero_", "add_", "sub_", "mul_", "div_", "clamp_")
_TORCH_ERRORS = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError, OverflowError)


def _ref_array(values: Any, layout: Layout | None = None) -> StridedArray:
    values = jnp.asarray(values)
    ref = jax.new_ref(values.reshape(-1))
    return fs.from_ref(ref).view(*values.shape) if layout is None else StridedArray(ref, layout)


def _storage(x: StridedArray) -> np.ndarray:
    return np.asarray(x.storage[...])


# -- the in-place op applied to either side ---------------------------------------------------------
@st.composite
def _operands(draw, shape: tuple[int, ...], *, number_ok: bool = True, nonzero: bool = False):
    """A Python number or a float32 array broadcastable to ``shape`` (a suffix of it, some
    extents 1, sometimes a leading 1 too few or too many: refused by both sides), with small
    integer values (nonzero for divisions), so that every result is exact on both sides."""
    values = st.sampled_from([-3, -2, -1, 1, 2, 3] if nonzero else [-3, -2, -1, 0, 1, 2, 3])
    if number_ok and draw(st.integers(0, 3)) == 0:
        return float(draw(values))
    k = draw(st.integers(0, len(shape)))
    sub = [1 if draw(st.integers(0, 3)) == 0 else n for n in shape[len(shape) - k:]]
    if draw(st.integers(0, 9)) == 0:
        sub = [2, *sub]  # more dims than the view: PyTorch refuses, so must we
    n = int(np.prod(sub))
    return np.asarray(draw(st.lists(values, min_size=n, max_size=n)), np.float32).reshape(sub)


@st.composite
def inplace_ops(draw, shape: tuple[int, ...]) -> tuple[str, tuple[Any, ...]]:
    """``(name, args)``: one in-place op of :data:`INPLACE` with its arguments for a view of
    ``shape`` (for ``setitem``, ``(key, value)`` with the value drawn for the indexed view)."""
    name = draw(st.sampled_from(INPLACE))
    if name == "zero_":
        return name, ()
    if name == "fill_":
        value = float(draw(st.integers(-3, 3)))
        return name, (value if draw(st.booleans()) else np.asarray(value, np.float32),)
    if name == "clamp_":
        if draw(st.booleans()):
            lo, hi = sorted(draw(st.integers(-3, 30)) for _ in range(2))
            return name, (float(lo) if draw(st.booleans()) else None, float(hi))
        return name, (draw(_operands(shape, number_ok=False)), draw(_operands(shape, number_ok=False)))
    if name == "setitem":
        key = draw(getitem_keys(shape))
        try:
            sub = fs.views.getitem(Layout.contiguous(shape), key).shape
        except LayoutError:
            sub = shape
        return name, (key, draw(_operands(sub)))
    divides = name.startswith("div_") or name in ("/=", "//=")
    other = draw(_operands(shape, nonzero=divides))
    if name in ("add_", "sub_") and draw(st.booleans()):
        return name, (other, float(draw(st.sampled_from([2, -1, 0.5]))))
    return name, (other,)


def _apply(x: Any, name: str, args: tuple[Any, ...], torch_side: bool) -> Any:
    """``name`` with ``args`` on ``x`` (a torch tensor or a ref-backed ``StridedArray``);
    arrays become torch tensors on the torch side."""
    if torch_side:
        torch = import_torch()
        args = tuple(torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a for a in args)
    if name == "setitem":
        x[args[0]] = args[1]
    elif name in ("+=", "-=", "*=", "/=", "//="):
        v = x
        if name == "+=":
            v += args[0]
        elif name == "-=":
            v -= args[0]
        elif name == "*=":
            v *= args[0]
        elif name == "/=":
            v /= args[0]
        else:
            v //= args[0]
        assert v is x  # the view itself, written in place
    elif name in ("add_", "sub_") and len(args) == 2:
        getattr(x, name)(args[0], alpha=args[1])
    elif name.startswith("div_") and name != "div_":
        x.div_(args[0], rounding_mode=name[4:])
    else:
        getattr(x, name)(*args)
    return x


def _ours(x: StridedArray, name: str, args: tuple[Any, ...], transform: str) -> None:
    """The op on our side, eagerly, or inside ``jit`` with the view and every array operand as
    arguments (the view's offset then traced)."""
    if transform == "eager":
        _apply(x, name, args, False)
        return
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def run(view, *values):
        full = list(args)
        for i, v in zip(arrays, values, strict=True):
            full[i] = v
        _apply(view, name, tuple(full), False)

    jax.jit(run)(x, *(jnp.asarray(args[i]) for i in arrays))


def _target(layout: Layout, name: str, args: tuple[Any, ...]) -> Layout | None:
    """The layout the op writes through (``None`` when indexing refuses the key)."""
    if name != "setitem":
        return layout
    try:
        return fs.views.getitem(layout, args[0])
    except LayoutError:
        return None


def _torch_refuses_overlap(layout: Layout) -> bool:
    """PyTorch's internal-overlap test: a stride-0 dim of extent > 1 ("Yes"; else "No" or
    "TooHard", which it lets through)."""
    return any(n > 1 and s == 0 for n, s in zip(layout.shape, layout.strides, strict=True))


def _chain(x: Any, t: Any, chain) -> tuple[Any, Any]:
    """Both sides through the chain; a step refused by either leaves both where they were."""
    for op in chain:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # x.T / x.mT deprecations, on both sides
            try:
                t2 = op.apply(t)
                x2 = op.apply(x)
            except (*_TORCH_ERRORS, LayoutError):
                continue
        t2, x2 = op.follow(t2), op.follow(x2)
        if t2 is None or x2 is None:
            break
        t, x = t2, x2
    return x, t


@pytest.mark.parametrize("transform", TRANSFORMS)
@examples(40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=op_chains(max_len=3), data=st.data())
def test_inplace_ops_through_view_chains_match_torch(transform, start, data):
    """Random view chains, then an in-place op: the whole storage equals PyTorch's, or both
    refuse; a copy in the chain (``reshape``, ``contiguous``) leaves an array over a new
    ``jax.Array`` on our side (PyTorch: a tensor that is not a view of the base), which has no
    in-place methods."""
    torch = import_torch()
    x0, chain = start
    base = np.asarray(x0.storage)
    t_base = torch.from_numpy(base.copy())
    t0 = torch.as_strided(t_base, x0.shape, x0.stride(), x0.storage_offset())
    ref = jax.new_ref(jnp.asarray(base))
    x, t = _chain(StridedArray(ref, x0.layout), t0, chain)
    assert (x.shape, x.stride(), x.storage_offset()) == (tuple(t.shape), t.stride(), t.storage_offset())
    shares = t.untyped_storage().data_ptr() == t_base.untyped_storage().data_ptr()
    assert lowering_refs.is_ref(x.storage) == shares, chain
    if not shares:  # a copy: PyTorch writes into the copy, our copy takes no writes
        assert not hasattr(x, "copy_")
        event("a copy in the chain")
        return
    name, args = data.draw(inplace_ops(x.shape), label="op")
    target = _target(x.layout, name, args)
    before = _storage(x)
    try:
        _ours(x, name, args, transform)
        err = None
    except LayoutError as e:
        err = e
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _apply(t, name, args, True)
        t_err = None
    except _TORCH_ERRORS as e:
        t_err = e
    what = f"{x0.layout}{chain} {name}{args}"
    if target is not None and target.has_internal_overlap():
        assert isinstance(err, OverlapError), what  # every overlapping view, exactly
        np.testing.assert_array_equal(_storage(x), before, err_msg=what)  # the ref is untouched
        if _torch_refuses_overlap(target) and name not in ("fill_", "zero_"):
            assert t_err is not None, what
        event("refused: overlapping view")
        return
    assert (err is None) == (t_err is None), f"{what}: ours {err!r}, torch {t_err!r}"
    event("written" if err is None else "refused by both")
    if err is None:
        np.testing.assert_array_equal(_storage(x), t_base.numpy(), err_msg=what)
    else:
        np.testing.assert_array_equal(_storage(x), before, err_msg=what)


@pytest.mark.parametrize("transform", TRANSFORMS)
@examples(20, deadline=None)
@given(start=op_chains(max_len=3), data=st.data())
def test_copy_and_add_through_view_chains_match_the_oracle(transform, start, data):
    """``copy_`` and ``add_`` through the view a chain leaves: the storage the oracle's
    ``scatter`` computes (``"set"``, ``"add"``), or a refusal exactly where the view overlaps
    itself."""
    x0, chain = start
    base = np.asarray(x0.storage)
    x, _ = _chain(StridedArray(jax.new_ref(jnp.asarray(base)), x0.layout), x0, chain)
    if not lowering_refs.is_ref(x.storage):
        return
    mode = data.draw(st.sampled_from(["set", "add"]), label="mode")
    values = data.draw(_operands(x.shape, number_ok=False), label="values")
    try:
        fits = np.broadcast_shapes(values.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:  # refusals of such operands are tested against PyTorch above
        values = np.ones(x.shape, np.float32)
    name = "copy_" if mode == "set" else "add_"
    if x.layout.has_internal_overlap():
        with pytest.raises(OverlapError):
            _ours(x, name, (values,), transform)
        np.testing.assert_array_equal(_storage(x), base)
        return
    _ours(x, name, (values,), transform)
    np.testing.assert_array_equal(_storage(x), fs.oracle.scatter(base, x.layout, values, mode))


# -- PyTorch's dtype rules ----------------------------------------------------------------------
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "float16", "bfloat16", "float32", "complex64")
SELF_VALUES = {"bool": [True, False, True], "uint8": [1, 0, 5], "complex64": [1 + 1j, 0, -2.5 + 0j]}
NUMBERS = [True, False, 2, -3, 0, 300, 2.5, -1.5, 1 + 2j, 2 + 0j]
ARRAY_DTYPES = ("bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64")
OPS = ("add_", "add_alpha", "sub_", "mul_", "div_", "div_trunc", "div_floor", "clamp_min", "clamp_max",
       "copy_", "fill_", "setitem")


def _self_values(dtype: str) -> list[Any]:
    if dtype in SELF_VALUES:
        return SELF_VALUES[dtype]
    return [-3, 0, 5] if "int" in dtype else [-3.5, 0.0, 5.25]


def _array_operand(dtype: str, rank: int) -> np.ndarray:
    values = {"bool": [True, False, True], "uint8": [2, 0, 3], "complex64": [1 - 1j, 2, 0.5j]}.get(
        dtype, [2, 0, -3] if "int" in dtype else [2.5, 0.0, -3.0])
    out = np.asarray(values, dtype)
    return out if rank else out[:1].reshape(())


def _operands_for(op: str) -> list[Any]:
    numbers = list(NUMBERS)
    arrays = [_array_operand(d, 1) for d in ARRAY_DTYPES] + [_array_operand(d, 0) for d in
                                                             ("int64", "float32", "float64", "bool")]
    if op == "fill_":
        return numbers + [a for a in arrays if a.ndim == 0] + [_array_operand("float32", 1)]
    return numbers + arrays


def _torch_dtype(torch, name: str):
    return getattr(torch, name)


def _run_case(x: Any, op: str, operand: Any, torch_side: bool) -> None:
    if torch_side:
        torch = import_torch()
        if isinstance(operand, np.ndarray):
            operand = torch.from_numpy(np.array(operand))
    if op == "add_alpha":
        x.add_(operand, alpha=2)
    elif op.startswith("div_") and op != "div_":
        x.div_(operand, rounding_mode=op[4:])
    elif op == "clamp_min":
        x.clamp_(operand)
    elif op == "clamp_max":
        x.clamp_(None, operand)
    elif op == "setitem":
        x[1:] = operand if np.ndim(operand) == 0 or not hasattr(operand, "shape") else operand[1:]
    else:
        getattr(x, op)(operand)


def _casts_complex_into_real(op: str, operand: Any, dtype: str) -> bool:
    """Whether PyTorch casts a complex value into the real view (and warns): ``copy_`` of any
    complex operand, ``fill_`` and ``x[i] = v`` of a complex array (numbers are checked)."""
    if dtype in ("bool", "complex64") or not np.iscomplexobj(operand):
        return False
    return op == "copy_" or (op in ("fill_", "setitem") and isinstance(operand, np.ndarray))


def _as_float64(values: Any) -> np.ndarray:
    return np.asarray(values).astype(np.complex128)


@pytest.mark.sampled(4)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_rules_match_torch(dtype, op):
    """Every operand kind (Python bool/int/float/complex numbers, arrays and rank-0 arrays of
    nine dtypes) against PyTorch: refused iff PyTorch refuses (result type not castable, an
    overflowing number, alpha, rounding modes on bool/complex, integer division by zero, ...),
    else the same values, bit for bit; a complex value cast into a real view warns (PyTorch
    warns the first time in a process)."""
    torch = import_torch()
    bad = []
    for operand in _operands_for(op):
        t = torch.tensor(_self_values(dtype), dtype=_torch_dtype(torch, dtype))
        x = _ref_array(np.asarray(_self_values(dtype), dtype=jnp.dtype(dtype)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                _run_case(t, op, operand, True)
                t_err = None
            except _TORCH_ERRORS as e:
                t_err = e
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            try:
                _run_case(x, op, operand, False)
                err = None
            except LayoutError as e:
                err = e
        label = f"{dtype}.{op}({operand!r}: {getattr(operand, 'dtype', type(operand).__name__)})"
        if (err is None) != (t_err is None):
            bad.append(f"{label}: ours {err!r}, torch {t_err!r}")
            continue
        if err is None:
            want = _as_float64(t.to(torch.complex128).numpy() if dtype != "bool" else t.numpy())
            got = _as_float64(np.asarray(x))
            if dtype == "complex64" and op.startswith("div_"):  # PyTorch's rounding: its vector kernels'
                same = np.allclose(got, want, rtol=1e-6, equal_nan=True)
            else:
                same = np.array_equal(got, want, equal_nan=True)
            if not same:
                bad.append(f"{label}: ours {got.tolist()}, torch {want.tolist()}")
        discards = any("imaginary part" in str(w.message) for w in warned)
        if discards != (err is None and _casts_complex_into_real(op, operand, dtype)):
            bad.append(f"{label}: complex-to-real warning {discards}")  # PyTorch's: once a process
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(("call", "message"), [
    (lambda x: x.add_(1.5), "result type Float can't be cast to the desired output type Int"),
    (lambda x: x.div_(2), "result type Float can't be cast to the desired output type Int"),
    (lambda x: x.add_(1, alpha=1.5), "For integral input tensors, argument alpha must not be a floating"),
    (lambda x: x.add_(1, alpha=True), "Boolean alpha only supported for Boolean results"),
    (lambda x: x.clamp_(1.5), "result type Float can't be cast to the desired output type int"),
    (lambda x: x.clamp_(), "At least one of 'min' or 'max' must not be None"),
    (lambda x: x.clamp_(jnp.zeros(3, jnp.int32), 2), "both be numbers or both be arrays"),
    (lambda x: x.fill_(2**31), "value cannot be converted to type int without overflow"),
    (lambda x: x.fill_(jnp.zeros(3)), "fill_ only supports 0-dimension value tensor"),
    (lambda x: x.div_(0, rounding_mode="floor"), "integer division by zero"),
    (lambda x: x.div_(2, rounding_mode="bad"), "rounding_mode to be one of None, 'trunc', or 'floor'"),
    (lambda x: x.sub_(True), "with a bool tensor is not supported"),
    (lambda x: x.copy_(jnp.zeros((2, 3))), "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    (lambda x: x.copy_(jnp.zeros(4)), "must match the size of src (4) at non-singleton dimension 0"),
    (lambda x: x.copy_([1, 2, 3]), "src must be a number or an array"),
    (lambda x: x.__setitem__(0, jnp.zeros(2)), "cannot be written to the view of shape ()"),
    (lambda x: x.__setitem__(5, 1), "index 5 is out of bounds"),
], ids=["float-into-int", "true-div-int", "float-alpha", "bool-alpha", "clamp-float-bound", "clamp-none",
        "clamp-mixed", "fill-overflow", "fill-array", "div-zero", "rounding-mode", "sub-bool", "copy-bigger",
        "copy-mismatch", "copy-list", "setitem-shape", "setitem-index"])
def test_refusals_name_the_rule(call, message):
    x = _ref_array(np.array([1, 2, 3], np.int32))
    before = _storage(x)
    with pytest.raises(LayoutError, match=re.escape(message)):
        call(x)
    np.testing.assert_array_equal(_storage(x), before)


def test_torch_scalar_semantics():
    """Numbers in arithmetic wrap (PyTorch casts them to the result type), numbers written by
    ``fill_`` and ``x[i] = v`` are checked (an unsigned dtype takes negative ones down to
    ``-max``), ``x[i] = v`` converts into float16 through double (so 1e6 is inf there)."""
    x = _ref_array(np.zeros(2, np.int8))
    assert x.add_(200).tolist() == [-56, -56]
    u = _ref_array(np.zeros(2, np.uint8))
    assert u.add_(-1).tolist() == [255, 255]
    assert u.fill_(-255).tolist() == [1, 1]
    with pytest.raises(LayoutError, match="uint8_t"):
        u.fill_(-256)
    h = _ref_array(np.zeros(2, np.float16))
    h[0] = 1e6
    assert h.tolist() == [np.inf, 0.0]
    with pytest.raises(LayoutError, match=re.escape("c10::Half")):
        h.fill_(1e6)
    b = _ref_array(np.zeros(3, bool))
    assert b.add_(True).tolist() == [True] * 3 and b.mul_(False).tolist() == [False] * 3
    i = _ref_array(np.array([-7, 7, -8], np.int32))
    assert i.div_(2, rounding_mode="trunc").tolist() == [-3, 3, -4]


def test_complex_into_real_keeps_the_real_part_and_warns():
    x = _ref_array(np.zeros(2, np.float32))
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        x.copy_(jnp.array([1 + 2j, 3 - 1j]))
    assert x.tolist() == [1.0, 3.0]


# -- overlap -----------------------------------------------------------------------------------
OVERLAPPING = {
    "expand": lambda x: x[:4].expand(3, 4),
    "unfold": lambda x: x.unfold(0, 4, 2),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 1)),
}


@pytest.mark.parametrize("method", [*METHODS, "setitem", "+="])
@pytest.mark.parametrize("view", sorted(OVERLAPPING))
def test_a_write_through_an_overlapping_view_is_refused_with_the_witness(view, method):
    """Every internally overlapping view is refused, ``fill_``/``zero_`` through an expand and
    every write through ``unfold`` windows included (PyTorch lets those through), and the
    message names the pair ``fs.internal_overlap_witness`` finds; the ref is left as it was."""
    x = _ref_array(np.arange(8, dtype=np.float32))
    v = OVERLAPPING[view](x)
    a, b = fs.internal_overlap_witness(v.layout)
    before = _storage(x)
    calls = {"copy_": lambda: v.copy_(1.0), "fill_": lambda: v.fill_(1.0), "zero_": v.zero_,
             "add_": lambda: v.add_(1.0), "sub_": lambda: v.sub_(1.0), "mul_": lambda: v.mul_(2.0),
             "div_": lambda: v.div_(2.0), "clamp_": lambda: v.clamp_(0, 1),
             "setitem": lambda: v.__setitem__(..., 1.0), "+=": lambda: v.__iadd__(1.0)}
    with pytest.raises(OverlapError, match=re.escape(f"coordinates {a} and {b} both address")) as info:
        calls[method]()
    assert "more than one element of the written-to tensor refers to a single memory" in str(info.value)
    np.testing.assert_array_equal(_storage(x), before)


def test_a_source_sharing_slots_with_the_written_view_is_refused():
    """PyTorch's partial overlap between an operand and the written view, exactly: refused
    where they share a slot (``x.t().copy_(x)``, ``x[1:].copy_(x[:-1])``), fine for the view
    itself and for disjoint views; a clone reads the source into a new storage."""
    torch = import_torch()
    x = _ref_array(np.arange(6, dtype=np.float32))
    t = torch.arange(6.0)
    for ours, theirs in ((lambda: x[1:].copy_(x[:-1]), lambda: t[1:].copy_(t[:-1])),
                         (lambda: x[1:].add_(x[:-1]), lambda: t[1:].add_(t[:-1])),
                         (lambda: x.view(2, 3)[:, :2].t().copy_(x.view(2, 3)[:, :2].t().flip(0)), None),
                         (lambda: x.__setitem__(slice(1, None), x[:-1]),
                          lambda: t.__setitem__(slice(1, None), t[:-1])),
                         (lambda: x.view(2, 3)[:, 1:].clamp_(x.view(2, 3)[:, :2], x[:2]), None)):
        if theirs is not None:
            with pytest.raises(RuntimeError, match="some elements of the input tensor"):
                theirs()
        with pytest.raises(OverlapError, match="some elements of the input tensor and the written-to tensor"):
            ours()
    np.testing.assert_array_equal(_storage(x), np.arange(6))
    x.add_(x)
    x[::2].copy_(x[1::2])
    x[1:].copy_(x[:-1].clone())
    t.add_(t)
    t[::2].copy_(t[1::2])
    t[1:].copy_(t[:-1].clone())
    np.testing.assert_array_equal(_storage(x), t.numpy())


def test_under_jit_a_source_of_the_same_ref_is_read_first():
    """With array (traced) offsets the partial overlap cannot be decided at trace time: the
    source is read before the write, as a clone would be."""
    x = _ref_array(np.arange(6, dtype=np.float32))

    @jax.jit
    def shift(v):
        v[1:].copy_(v[:-1])  # returns the view: a jitted function must not return it (a ref)

    shift(x.as_strided((6,), (1,), jnp.asarray(0)))  # an array offset: a leaf, traced in shift
    np.testing.assert_array_equal(_storage(x), [0, 0, 1, 2, 3, 4])


def test_under_jit_int_offsets_are_static_and_partial_overlap_is_refused():
    """Python int offsets are static metadata, so under jit the overlap of `v[1:]` and
    `v[:-1]` is decided at trace time and refused, as PyTorch refuses it eagerly."""
    x = _ref_array(np.arange(6, dtype=np.float32))

    @jax.jit
    def shift(v):
        v[1:].copy_(v[:-1])

    with pytest.raises(fs.OverlapError, match=re.escape("src.clone()")):
        shift(x)
    np.testing.assert_array_equal(_storage(x), np.arange(6))


# -- absent on arrays over a jax.Array ------------------------------------------------------------
@pytest.mark.parametrize("name", METHODS)
def test_methods_are_absent_on_immutable_arrays(name):
    x = fs.from_array(jnp.zeros(4))
    assert not hasattr(x, name) and hasattr(_ref_array(np.zeros(4)), name)
    with pytest.raises(AttributeError, match=re.escape(tensor_names.message(name))) as info:
        getattr(x, name)
    assert ".at[" in str(info.value) and "fs.from_ref" in str(info.value)
    assert getattr(StridedArray, name).__doc__  # the class still documents it


def test_setitem_and_augmented_operators_on_immutable_arrays_keep_their_meaning():
    x = fs.from_array(jnp.zeros(4))
    with pytest.raises(TypeError, match=re.escape("x.at[key].set(value)")) as info:
        x[0] = 1.0
    assert "fs.from_ref" in str(info.value)
    y = x
    y += 1
    y2 = fs.from_array(jnp.ones(2))
    y2 %= 2
    assert isinstance(y, jax.Array) and isinstance(y2, jax.Array) and isinstance(x, StridedArray)
    r = _ref_array(np.ones(2, np.float32))
    with pytest.raises(LayoutError, match=re.escape("x %= y on a view of a jax.Ref")):
        r %= 2


# -- construction, reads, .at[] -----------------------------------------------------------------
def test_from_ref_and_the_constructor():
    ref = jax.new_ref(jnp.arange(12.0))
    x = fs.from_ref(ref)
    assert x.storage is ref and x.layout == Layout((12,), (1,), 0)
    y = StridedArray(ref, Layout((3, 2), (1, 4), 1))
    assert y.tolist() == [[1.0, 5.0], [2.0, 6.0], [3.0, 7.0]]
    with pytest.raises(fs.LayoutTypeError, match="expects a jax.Ref"):
        fs.from_ref(jnp.zeros(3))
    with pytest.raises(fs.StorageError, match="must be 1-D"):
        fs.from_ref(jax.new_ref(jnp.zeros((2, 3))))
    with pytest.raises(fs.StorageError, match="must be 1-D and not batched"):
        StridedArray(jax.new_ref(jnp.zeros((2, 3))), Layout((3,), (1,)), batched=True)
    with pytest.raises(fs.StorageError, match="require a storage of 13 elements"):
        StridedArray(ref, Layout((13,), (1,)))
    with pytest.raises(LayoutError, match="cannot share its memory"):
        x.view(jnp.int32)
    with pytest.raises(LayoutError, match="cannot share its memory"):
        fs.view_as_complex(x.view(6, 2))


def test_reads_see_the_current_value():
    ref = jax.new_ref(jnp.zeros(6))
    x = fs.from_ref(ref).view(2, 3)
    col, clone = x[:, 1], x.t().clone()
    assert x.contiguous() is x and col.contiguous() is not col
    x[:, 1] = jnp.array([4.0, 5.0])
    assert col.tolist() == [4.0, 5.0] and np.asarray(col).tolist() == [4.0, 5.0]
    assert jnp.asarray(x).tolist() == [[0.0, 4.0, 0.0], [0.0, 5.0, 0.0]]
    assert "4." in str(x) and clone.tolist() == [[0.0] * 2] * 3  # the clone is a copy
    assert not lowering_refs.is_ref(clone.storage) and not hasattr(clone, "copy_")
    assert (x + 1).tolist() == [[1.0, 5.0, 1.0], [1.0, 6.0, 1.0]]


def test_to_torch_exports_the_current_values():
    import_torch()
    x = fs.from_ref(jax.new_ref(jnp.arange(6.0))).view(2, 3)
    x[:, 0] = -1.0
    t = fs.to_torch(x.t())
    assert t.stride() == (1, 3) and t.tolist() == [[-1.0, -1.0], [1.0, 4.0], [2.0, 5.0]]


def test_at_stays_functional_on_a_ref_backed_array():
    """``x.at[...]`` returns ``x``'s layout over a new ``jax.Array`` and leaves the ref as it
    was, with the functional overlap rules (``set`` through an expand refused, ``add``
    accumulating)."""
    ref = jax.new_ref(jnp.zeros(6))
    x = fs.from_ref(ref)
    y = x.at[1:3].set(7.0)
    assert isinstance(y.storage, jax.Array) and y.tolist() == [0, 7, 7, 0, 0, 0]
    assert x.tolist() == [0.0] * 6
    frames = x.unfold(0, 4, 2)
    assert frames.at[...].add(1.0).storage.tolist() == [1, 1, 2, 2, 1, 1]
    with pytest.raises(OverlapError, match="share a storage slot"):
        x[:1].expand(3).at[...].set(1.0)
    assert jax.jit(lambda v: v.at[0].add(1.0).storage)(x).tolist() == [1, 0, 0, 0, 0, 0]


# -- inside JAX programs -------------------------------------------------------------------------
def test_a_ref_backed_argument_is_written_in_the_caller_and_does_not_retrace():
    ref = jax.new_ref(jnp.zeros(16))
    x = fs.from_ref(ref).view(4, 4)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def f(view, v):
        view.add_(v)
        return jnp.asarray(view).sum()

    for k in range(3):  # column k of x, at an array offset (a leaf): one trace for all three
        assert float(f(x.t().as_strided((4,), (4,), jnp.asarray(k)), jnp.ones(4))) == 4.0
    expected = np.zeros((4, 4), np.float32)
    expected[:, :3] = 1
    np.testing.assert_array_equal(_storage(x).reshape(4, 4), expected)


def test_writes_in_fori_loop_and_scan():
    n, steps = 64, 5
    ref = jax.new_ref(jnp.zeros(n))
    x = fs.from_ref(ref).view(8, 8)

    @jax.jit
    def fori(view):
        def body(i, c):
            view.t()[i].copy_(jnp.full(8, i + 1.0))
            view[i, i] += 10.0
            return c
        lax.fori_loop(0, steps, body, 0)

    @jax.jit
    def scan(view, ks):
        def body(c, k):
            view[c].mul_(k)
            return c + 1, None
        lax.scan(body, 0, ks)

    fori(x)
    scan(x, jnp.arange(1.0, steps + 1))
    expected = np.zeros((8, 8), np.float32)
    for i in range(steps):
        expected[:, i] = i + 1
        expected[i, i] += 10
    for i in range(steps):
        expected[i] *= i + 1
    np.testing.assert_array_equal(_storage(x).reshape(8, 8), expected)


def test_a_closed_over_ref_is_read_and_written_at_every_run():
    # a ref the traced function closes over is no tracer: its reads and writes must be staged,
    # not run once while the function traces (and its reads frozen into constants)
    x = fs.from_ref(jax.new_ref(jnp.zeros(8)))

    @jax.jit
    def add():
        x[:2].add_(1.0)  # returns the view, as torch's add_ does; a ref is not returned from jit

    add.lower()
    np.testing.assert_array_equal(_storage(x)[:2], [0.0, 0.0])  # tracing writes nothing
    add()
    add()

    def step(i, c):
        x.view(2, 4).t()[1].sub_(1.0)
        return c

    jax.jit(lambda: lax.fori_loop(0, 3, step, 0))()

    def body(c, k):
        x.view(4, 2)[:, 0].mul_(k)
        x[c] += 100.0
        return c + 1, None

    jax.jit(lambda ks: lax.scan(body, 0, ks))(jnp.array([2.0, 3.0]))
    expected = np.zeros(8, np.float32)
    expected[:2] += 2
    expected[[1, 5]] -= 3
    for c, k in enumerate((2.0, 3.0)):
        expected[[0, 2, 4, 6]] *= k
        expected[c] += 100
    np.testing.assert_array_equal(_storage(x), expected)
    total = jax.jit(lambda: jnp.asarray(x.view(2, 4)[:, 1:]).sum())
    assert float(total()) == expected.reshape(2, 4)[:, 1:].sum()
    x.storage[...] = jnp.ones(8)  # a write outside: the compiled read sees it
    assert float(total()) == 6.0


N = 2**20


def _bound(numel: int) -> int:
    return 3 * 8 * numel + 4096


@pytest.mark.sampled(3)
@pytest.mark.parametrize("context", ["jit", "fori_loop", "scan"])
@pytest.mark.parametrize(("name", "view"), [
    ("row", lambda x: x.view(1024, 1024)[3]),
    ("column", lambda x: x.view(1024, 1024)[:, 3]),
    ("block_t", lambda x: x.view(1024, 1024)[:64, 8:72].t()),
    ("frames", lambda x: x.unfold(0, 256, 512)[:16]),
], ids=["row", "column", "block_t", "frames"])
def test_methods_write_in_place_under_jax_programs(name, view, context):
    """``add_`` and ``copy_`` through a view passed into the program (traced offset), under
    ``jit``, ``fori_loop`` and ``scan``: the ref is aliased, temporaries stay within the
    window (``compiled.memory_analysis()``)."""
    x = fs.from_ref(jax.new_ref(jnp.zeros(N)))
    v = view(x)
    values = jnp.ones(v.shape)

    def step(u, k):
        u.add_(values)
        u.mul_(k)

    if context == "jit":
        fn = step
    elif context == "fori_loop":
        def fn(u, k):
            lax.fori_loop(0, 3, lambda i, c: (step(u, k + i), c)[1], 0)
    else:
        def fn(u, k):
            lax.scan(lambda c, i: (step(u, k + i), (c, None))[1], 0, jnp.arange(3.0))
    m = jax.jit(fn).lower(v, jnp.float32(2.0)).compile().memory_analysis()
    assert m.alias_size_in_bytes == 4 * N
    assert m.temp_size_in_bytes <= _bound(v.numel()), (m.temp_size_in_bytes, _bound(v.numel()))


def test_returning_a_ref_from_jit_is_jax_s_error():
    x = fs.from_ref(jax.new_ref(jnp.zeros(4)))
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
        jax.jit(lambda v: v[1:])(x)


# -- grad and vmap -----------------------------------------------------------------------------
def _program(x):
    """A ref created inside, written through a transposed view and a row block, then read."""
    ref = jax.new_ref(jnp.zeros(16, x.dtype))
    v = fs.from_ref(ref).view(4, 4)
    v.t()[:3].copy_(x)
    v[1:].add_(x * x)
    v[2:, 1:].mul_(3.0)
    return (jnp.asarray(v) ** 2).sum()


def _dense_program(x):
    m = jnp.zeros((4, 4), x.dtype).at[:, :3].set(x.T)
    m = m.at[1:].add(x * x)
    m = m.at[2:, 1:].multiply(3.0)
    return (m**2).sum()


def test_grad_jvp_and_vmap_through_a_ref_created_inside():
    x = jnp.arange(12.0).reshape(3, 4) / 10
    np.testing.assert_allclose(jax.grad(_program)(x), jax.grad(_dense_program)(x), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(_program))(x), jax.grad(_dense_program)(x), rtol=1e-6)
    tangent = jnp.ones_like(x)
    np.testing.assert_allclose(jax.jvp(_program, (x,), (tangent,))[1],
                               jax.jvp(_dense_program, (x,), (tangent,))[1], rtol=1e-6)
    xs = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(jax.vmap(_program)(xs), jax.vmap(_dense_program)(xs), rtol=1e-6)


def test_what_jax_refuses_with_refs_is_as_the_docs_say():
    # docs/inplace.md, "grad and vmap": JAX's own rules, with JAX's errors
    x = fs.from_ref(jax.new_ref(jnp.zeros(8)))
    with pytest.raises(ValueError, match="got axis spec None"):  # forward mode of a ref inside
        jax.jacfwd(_program)(jnp.ones((3, 4)))
    with pytest.raises((ValueError, TypeError)):  # no derivative with respect to a ref
        jax.grad(lambda r: jnp.asarray(fs.from_ref(r)).sum())(x.storage)
    # vmap maps a StridedArray's leaves (here the ref alone): map the refs, build the view inside
    with pytest.raises(fs.StorageError, match="vmap over the raw arrays and build the StridedArray inside"):
        jax.vmap(lambda v: jnp.asarray(v).sum())(x.view(2, 4))
    rows = jax.new_ref(jnp.arange(8.0).reshape(2, 4))
    sums = jax.vmap(lambda r: jnp.asarray(fs.from_ref(r)[1::2]).sum())(rows)
    assert sums.tolist() == [4.0, 12.0]

def test_grad_of_a_write_into_an_outside_ref_names_the_fix():
    x = fs.from_ref(jax.new_ref(jnp.zeros(4)))

    def loss(v):
        x[:2].copy_(v)
        return jnp.asarray(x).sum()

    with pytest.raises(LayoutError, match=re.escape("create the ref inside (jax.new_ref(...))")):
        jax.grad(loss)(jnp.ones(2))

    def detached(v):  # a value that is not differentiated may be written
        x[:2].copy_(lax.stop_gradient(v))
        return jnp.asarray(x).sum() + v.sum()

    assert jax.grad(detached)(jnp.ones(2)).tolist() == [1.0, 1.0]


def test_vmap_writes_into_mapped_refs_and_refuses_unmapped_ones():
    refs = jax.new_ref(jnp.zeros((3, 8)))

    def write(ref, k, t):
        fs.from_ref(ref).view(2, 4).select(1, t).copy_(k)  # a mapped offset too

    jax.vmap(write)(refs, jnp.arange(6.0).reshape(3, 2), jnp.array([0, 1, 3]))
    expected = np.zeros((3, 8), np.float32)
    for b, t in enumerate([0, 1, 3]):
        expected[b, [t, 4 + t]] = [2 * b, 2 * b + 1]
    np.testing.assert_array_equal(np.asarray(refs[...]), expected)
    outside = fs.from_ref(jax.new_ref(jnp.zeros(4)))
    with pytest.raises(LayoutError, match="jax.vmap does not map"):
        jax.vmap(lambda k: outside[:2].copy_(k))(jnp.ones((3, 2)))


# -- the KV cache decode loop -----------------------------------------------------------------------
def test_kv_cache_decode_loop():
    """``cache.select(2, t).copy_(k_t)`` per step inside ``fori_loop``, for a cache
    ``[layers, heads, positions, dim]`` in one ref: every position written, in place."""
    layers, heads, positions, dim, steps = 2, 4, 256, 32, 12
    ks = jax.random.normal(jax.random.key(0), (steps, layers, heads, dim))
    ref = jax.new_ref(jnp.zeros(layers * heads * positions * dim))
    cache = fs.from_ref(ref).view(layers, heads, positions, dim)

    def decode(cache, ks):
        def body(t, acc):
            cache.select(2, t).copy_(ks[t])
            return acc + jnp.asarray(cache.select(2, t)).sum()
        return lax.fori_loop(0, steps, body, 0.0)

    total = jax.jit(decode)(cache, ks)
    expected = np.zeros((layers, heads, positions, dim), np.float32)
    expected[:, :, :steps] = np.moveaxis(np.asarray(ks), 0, 2)
    np.testing.assert_array_equal(_storage(cache).reshape(expected.shape), expected)
    np.testing.assert_allclose(float(total), float(np.asarray(ks).sum()), rtol=1e-5)
    m = jax.jit(decode).lower(cache, ks).compile().memory_analysis()
    assert m.alias_size_in_bytes == 4 * ref.shape[0]
    assert m.temp_size_in_bytes <= _bound(layers * heads * dim) + ks.size * 4


# -- threads ------------------------------------------------------------------------------------------
def _in_threads(work: Any, n: int) -> list[BaseException]:
    """Run ``work(i)`` in ``n`` threads started together; the exceptions they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run(i: int) -> None:
        start.wait()
        try:
            work(i)
        except BaseException as err:  # noqa: BLE001 - reported by the test
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    return errors


def test_eager_writes_from_several_threads_all_land():
    """4 threads x 100 ``add_(1)``, each thread through its own view of the whole ref (as is,
    transposed, reversed, strided by rows): every add lands, as in PyTorch (docs/inplace.md,
    "Threads")."""
    x = fs.from_ref(jax.new_ref(jnp.zeros(16)))
    views = [x, x.view(4, 4).t(), x.flip(0), x.view(2, 8)[:, ::2]]
    lowering_refs.clear_compiled()  # the threads also compile the programs at the same time

    def work(i: int) -> None:
        for _ in range(100):
            views[i].add_(1)

    assert _in_threads(work, 4) == []
    expected = np.full(16, 300.0, np.float32)
    expected[np.arange(16).reshape(2, 8)[:, ::2].reshape(-1)] += 100
    np.testing.assert_array_equal(_storage(x), expected)
    y = fs.from_ref(jax.new_ref(jnp.zeros(16)))
    assert _in_threads(lambda i: [y.view(4, 4)[i % 2:].add_(1) for _ in range(100)], 4) == []
    np.testing.assert_array_equal(_storage(y), np.repeat([200.0, 400.0], [4, 12]))
    z = fs.from_ref(jax.new_ref(jnp.zeros(16)))
    assert _in_threads(lambda i: [z.add_(1) for _ in range(100)], 4) == []
    np.testing.assert_array_equal(_storage(z), np.full(16, 400.0, np.float32))


def test_eager_reads_from_other_threads_see_whole_writes():
    """Readers of one ref (a strided read, the contiguous view, an operand read by another
    method) while writers add to it: no error, each read sees all or none of a write (every
    element equal), and the values never go back."""
    x = fs.from_ref(jax.new_ref(jnp.zeros(16)))
    out = fs.from_ref(jax.new_ref(jnp.zeros(16)))
    seen: list[list[float]] = [[], []]

    def work(i: int) -> None:
        for _ in range(60):
            if i < 2:
                x.view(4, 4).flip(1).add_(1)  # a write through a reversed view
            elif i == 2:
                seen[0].append(np.unique(np.asarray(x.view(4, 4).t())).tolist())
                seen[1].append(np.unique(x.tolist()).tolist())
            else:
                out.copy_(x.flip(0))  # x read as copy_'s operand
                assert len(np.unique(np.asarray(out))) == 1

    assert _in_threads(work, 4) == []
    assert all(len(values) == 1 for values in seen[0] + seen[1])
    for reads in seen:
        assert [v[0] for v in reads] == sorted(v[0] for v in reads)
    assert x.tolist() == [120.0] * 16


def test_an_operand_view_of_the_same_ref_is_read_with_the_write():
    """``x[:8].add_(x[8:])`` reads its operand and writes holding the ref's lock: two threads
    doubling the ref through it never lose a step."""
    x = fs.from_ref(jax.new_ref(jnp.ones(16)))
    assert _in_threads(lambda i: [x.add_(x) for _ in range(10)], 2) == []
    assert x.tolist() == [2.0**20] * 16


def test_the_lock_goes_with_its_ref():
    ref = jax.new_ref(jnp.zeros(4))
    lock = lowering_refs.ref_lock(ref)
    assert lowering_refs.ref_lock(ref) is lock
    assert lowering_refs.ref_lock(jax.new_ref(jnp.zeros(4))) is not lock
    fs.from_ref(ref)[1:].add_(1)
    alive = weakref.ref(lock)
    del ref, lock
    gc.collect()
    assert alive() is None


def test_the_compiled_programs_can_be_cleared_while_threads_write():
    x = fs.from_ref(jax.new_ref(jnp.zeros(8)))

    def work(i: int) -> None:
        for _ in range(30):
            if i == 0:
                fs.clear_caches()
            else:
                x[i - 1::2].add_(1)

    assert _in_threads(work, 3) == []
    assert x.tolist() == [30.0] * 8
