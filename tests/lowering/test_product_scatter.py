"""Derivatives of multiplying writes (``write(..., mode="mul")``) through views whose
elements share storage slots, on every write path, against a NumPy reference of the product
rule and against PyTorch's autograd of ``scatter_reduce(..., "prod", include_self=True)``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples, import_torch
from hypothesis import given
from hypothesis import strategies as st
from jax.test_util import check_grads
from strategies import layouts

from functional_strides import Layout, oracle
from functional_strides._src.core.errors import LayoutError
from functional_strides._src.lowering.product_scatter import exclusive_products
from functional_strides._src.lowering.writes import METHODS, write, write_plan

PATHS = METHODS[1:]


def paths_for(layout: Layout, n: int) -> list[str]:
    """``"auto"`` and every forced path that applies to a multiplying write."""
    out = ["auto"]
    for method in PATHS:
        try:
            write_plan(layout, n, mode="mul", method=method)
        except LayoutError:
            continue
        out.append(method)
    return out


def reference_grads(storage: np.ndarray, layout: Layout, src: np.ndarray, cotangent: np.ndarray):
    """``(d storage, d src)`` of ``sum(cotangent * write(storage, layout, src, "mul"))``, by
    brute force from the definition: slot ``s`` becomes ``storage[s] * prod_{k -> s} src_k``."""
    idx = layout.indices().reshape(-1)
    v = np.broadcast_to(src, layout.shape).reshape(-1)
    per_slot = np.ones_like(storage)
    for i, x in zip(idx, v, strict=True):
        per_slot[i] *= x
    d_src = np.empty_like(v)
    for k, i in enumerate(idx):
        others = np.prod([v[j] for j in range(len(v)) if j != k and idx[j] == i], dtype=v.dtype)
        d_src[k] = cotangent[i] * storage[i] * others
    return cotangent * per_slot, d_src.reshape(layout.shape)


# -- the worked example and zeros ------------------------------------------------------------

EXAMPLE = Layout((2, 4), (2, 1))  # two windows of 4 every 2: slots 2 and 3 are shared


@pytest.mark.sampled(3)
@pytest.mark.parametrize("method", paths_for(EXAMPLE, 6))
@pytest.mark.parametrize("transform", [pytest.param(jax.jit, id="jit"),
                                       pytest.param(lambda f: f, id="eager")])
def test_worked_example(method, transform):
    storage, src = jnp.arange(1.0, 7.0), jnp.full((2, 4), 2.0)

    def loss(s, v):
        return write(s, EXAMPLE, v, mode="mul", method=method).sum()

    out = write(storage, EXAMPLE, src, mode="mul", method=method)
    d_storage, d_src = transform(jax.grad(loss, argnums=(0, 1)))(storage, src)
    assert out.tolist() == [2.0, 4.0, 12.0, 16.0, 10.0, 12.0]
    assert d_storage.tolist() == [2.0, 2.0, 4.0, 4.0, 2.0, 2.0]
    assert d_src.reshape(-1).tolist() == [1.0, 2.0, 6.0, 8.0, 6.0, 8.0, 5.0, 6.0]


@pytest.mark.sampled(3)
@pytest.mark.parametrize("method", paths_for(EXAMPLE, 6))
@pytest.mark.parametrize(
    "src, d_src",
    [([[2.0, 2.0, 0.0, 2.0], [2.0, 2.0, 2.0, 2.0]], [1, 2, 6, 8, 0, 8, 5, 6]),  # one zero in slot 2
     ([[2.0, 2.0, 0.0, 2.0], [0.0, 2.0, 2.0, 2.0]], [1, 2, 0, 8, 0, 8, 5, 6])],  # two zeros in slot 2
    ids=["one-zero", "two-zeros"],
)
def test_zeros_in_a_slot(method, src, d_src):
    # slot 2 = storage[2] * src[0, 2] * src[1, 0]: with src[0, 2] = 0 alone, its derivative is
    # 3 * src[1, 0] = 6 and the other's is 0; with both zero, both derivatives are 0
    storage, src = jnp.arange(1.0, 7.0), jnp.asarray(src)
    d = jax.jit(jax.grad(lambda s, v: write(s, EXAMPLE, v, mode="mul", method=method).sum(), (0, 1)))
    d_storage, got = d(storage, src)
    assert got.reshape(-1).tolist() == d_src
    expected_storage, _ = reference_grads(np.arange(1.0, 7.0), EXAMPLE, np.asarray(src), np.ones(6))
    np.testing.assert_array_equal(np.asarray(d_storage), expected_storage)
    assert np.all(np.isfinite(np.asarray(got)))


def test_zeros_along_an_expanded_dim():
    # stride-0 dims are multiplied out before the scatter (a product reduction)
    layout = Layout((3, 2, 2), (0, 2, 1))
    src = jnp.asarray([[[0.0, 2.0], [3.0, 0.0]], [[5.0, 2.0], [3.0, 0.0]], [[7.0, 2.0], [3.0, 1.0]]])
    storage = jnp.asarray([1.0, 1.5, 2.0, 2.5])  # products exact in float32
    got = jax.grad(lambda v: write(storage, layout, v, mode="mul").sum())(src)
    _, expected = reference_grads(np.asarray(storage), layout, np.asarray(src), np.ones(4))
    np.testing.assert_array_equal(np.asarray(got), expected)


_exclusive_products = jax.jit(exclusive_products)


@given(slots=st.lists(st.integers(0, 3), min_size=10, max_size=10),
       values=st.lists(st.sampled_from([0.0, 1.0, -2.0, 0.5, 3.0]), min_size=10, max_size=10))
@examples(13)
def test_exclusive_products_match_brute_force(slots, values):
    got = _exclusive_products(jnp.asarray(slots, jnp.int32), jnp.asarray(values, jnp.float32))
    expected = [np.prod([v for j, (t, v) in enumerate(zip(slots, values, strict=True)) if j != k and t == s])
                for k, s in enumerate(slots)]
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected, np.float32))


# -- finite differences ----------------------------------------------------------------------

GRAD_CASES = [
    Layout((2, 4), (2, 1)),  # windows
    Layout((5, 4), (2, 1)),  # many overlapping windows
    Layout((3, 3), (1, 1)),  # a Hankel view: each slot shared by up to 3 elements
    Layout((2, 3, 4), (0, 2, 1), 1),  # expanded windows
    Layout((4, 2), (1, 2)),  # interleaved rows: (i, j) -> i + 2j, so (2, 0) and (0, 1) share slot 2
    Layout((2, 2), (1, 2)),  # interleaved rows, no element overlap (the padded rows overlap)
]


@pytest.mark.slow  # thorough: the first order is checked on every path in the fast loop
def test_check_grads_second_order():
    with jax.enable_x64(True):  # float64 keeps the finite differences of check_grads accurate
        storage, src = jnp.linspace(-1.0, 1.5, 7), jnp.linspace(0.5, -1.5, 8).reshape(2, 4)

        def f(s, v):  # the row scatter takes the same derivative rule, checked to order 1 below
            return jnp.sin(write(s, EXAMPLE, v, mode="mul", method="scatter")) * jnp.linspace(0.1, 1.0, 7)

        check_grads(jax.jit(f), (storage, src), order=2, modes=("fwd", "rev"))


def test_grad_cases_overlap_as_their_comments_say():
    assert [oracle.has_internal_overlap(layout) for layout in GRAD_CASES] == [True] * 5 + [False]


@pytest.mark.sampled(3)
@pytest.mark.parametrize("layout", GRAD_CASES, ids=str)
def test_check_grads_on_every_path(layout):
    n = layout.required_storage_size + 2

    with jax.enable_x64(True):  # float64 keeps the finite differences of check_grads accurate
        storage = jnp.linspace(-1.0, 1.5, n)
        src = jnp.linspace(0.5, -1.5, layout.numel).reshape(layout.shape)
        weights = jnp.linspace(0.1, 1.0, n)
        methods = paths_for(layout, n)

        def f(s, v):  # every path in one program (a compile costs more than the paths)
            return [jnp.sin(write(s, layout, v, mode="mul", method=m)) * weights for m in methods]

        check_grads(jax.jit(f), (storage, src), order=1, modes=("fwd", "rev"))


@pytest.mark.slow  # thorough: per-example gradients of mul, checked item by item
def test_grads_under_vmap_of_batched_storages():
    layout = Layout((5, 4), (2, 1))

    def loss(storages, src):  # what a batched StridedArray's write runs: a vmap over storages
        out = jax.vmap(lambda s: write(s, layout, src, mode="mul"))(storages)
        return jnp.sum(out * jnp.arange(12.0)[None])

    with jax.enable_x64(True):
        storages = jnp.linspace(-1.0, 1.0, 36).reshape(3, 12)
        src = jnp.linspace(0.5, 1.5, 20).reshape(5, 4)
        check_grads(jax.jit(loss), (storages, src), order=1, modes=("fwd", "rev"))
        # per-example gradients: vmap of grad agrees with the reference item by item
        cot = np.arange(12.0)
        per_item = jax.vmap(jax.grad(lambda s, v: jnp.sum(write(s, layout, v, mode="mul") * cot), (0, 1)),
                            in_axes=(0, None))(storages, src)
        for i in range(3):
            ds, dv = reference_grads(np.asarray(storages[i]), layout, np.asarray(src), cot)
            np.testing.assert_allclose(np.asarray(per_item[0][i]), ds, rtol=1e-12)
            np.testing.assert_allclose(np.asarray(per_item[1][i]), dv, rtol=1e-12)


def test_grads_with_a_traced_offset():
    # a traced offset writes the window of span + 1 elements it starts; past the end it is
    # clamped to the last offset that fits (10 - 9 = 1), as lax.dynamic_update_slice clamps
    storage = jnp.linspace(1.0, 2.0, 10)
    src = jnp.linspace(0.5, 1.5, 12).reshape(4, 3)
    cot = np.arange(10.0)

    def loss(v, k):
        return jnp.sum(write(storage, Layout((4, 3), (2, 1), k), v, mode="mul") * cot)

    for k, effective in ((0, 0), (1, 1), (3, 1)):
        got = jax.jit(jax.grad(loss))(src, jnp.int32(k))
        _, expected = reference_grads(np.asarray(storage), Layout((4, 3), (2, 1), effective),
                                      np.asarray(src), cot)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


# -- random overlapping layouts ----------------------------------------------------------------

@given(layout=layouts(max_rank=3, max_extent=4, max_stride=3, max_offset=2, kinds=("random", "broadcast")),
       data=st.data())
@examples(5)
def test_random_layouts_match_reference(layout, data):
    n = layout.required_storage_size + data.draw(st.integers(0, 2))
    if layout.is_empty or n == 0:
        return
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    storage = rng.choice([-1.5, -0.5, 0.0, 0.5, 1.0, 2.0], n).astype(np.float32)
    src = rng.choice([-2.0, -1.0, 0.0, 0.5, 1.0, 1.5], layout.shape).astype(np.float32)
    cot = rng.choice([-1.0, 0.5, 1.0, 2.0], n).astype(np.float32)
    expected = reference_grads(storage, layout, src, cot)
    for method in paths_for(layout, n):
        out, vjp = jax.vjp(lambda s, v, method=method: write(s, layout, v, mode="mul", method=method),
                           jnp.asarray(storage), jnp.asarray(src))
        np.testing.assert_allclose(np.asarray(out), oracle.scatter(storage, layout, src, "mul"), rtol=1e-6)
        for got, want in zip(vjp(jnp.asarray(cot)), expected, strict=True):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6, err_msg=method)


# -- PyTorch ------------------------------------------------------------------------------------

TORCH_CASES = [Layout((3, 3), (1, 1)), Layout((4, 5), (3, 1), 1), Layout((2, 2, 3), (1, 2, 1))]


@pytest.mark.sampled(9)
@pytest.mark.parametrize("layout", TORCH_CASES, ids=str)
@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_matches_torch_scatter_reduce_prod(layout, zeros):
    torch = import_torch()
    n = layout.required_storage_size + 1
    rng = np.random.default_rng(zeros)
    storage = rng.uniform(0.5, 1.5, n)
    src = rng.uniform(-1.5, 1.5, layout.shape)
    flat_idx = layout.indices().reshape(-1)
    shared = next(i for i in flat_idx if np.count_nonzero(flat_idx == i) >= 2)  # a slot written twice
    for k in np.flatnonzero(flat_idx == shared)[:zeros]:
        src.reshape(-1)[k] = 0.0
    cot = rng.uniform(-1.0, 1.0, n)
    ts = torch.tensor(storage, requires_grad=True)
    tv = torch.tensor(src.reshape(-1), requires_grad=True)
    out = torch.scatter_reduce(ts, 0, torch.tensor(flat_idx), tv, "prod", include_self=True)
    (out * torch.tensor(cot)).sum().backward()
    with jax.enable_x64(True):
        got, vjp = jax.vjp(lambda s, v: write(s, layout, v, mode="mul"),
                           jnp.asarray(storage), jnp.asarray(src))
        d_storage, d_src = vjp(jnp.asarray(cot))
    np.testing.assert_allclose(np.asarray(got), out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(d_storage), ts.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(d_src).reshape(-1), tv.grad.numpy(), rtol=1e-12, atol=1e-15)
