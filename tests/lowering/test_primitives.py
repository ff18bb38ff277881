"""The primitives strided_read and strided_write: what jaxprs hold, their derivatives to second
order in both modes through every kind of view, batching (vmap over storages, offsets and
values, and vmap of grad), the abstract evaluation's checks, and what the exported programs
for GPU and TPU hold."""

from __future__ import annotations

import re

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import functional_strides as fs
from functional_strides import Layout, StorageError, materialize, oracle, write
from functional_strides._src.lowering import primitives

#: Wrappers a read or write must not hold: derivatives and batching are the primitives' rules.
WRAPPERS = ("custom_jvp_call", "custom_vjp_call", "custom_vmap_call", "custom_lin", "pure_callback",
            "native_or_xla")


def _names(jaxpr) -> list[str]:
    """Every primitive of a closed jaxpr, sub-jaxprs included."""
    out = []

    def subs(value):
        if isinstance(value, jax.extend.core.ClosedJaxpr):
            yield value.jaxpr
        elif isinstance(value, jax.extend.core.Jaxpr):
            yield value
        elif isinstance(value, (tuple, list)):
            for v in value:
                yield from subs(v)

    def walk(j):
        for eqn in j.eqns:
            out.append(eqn.primitive.name)
            for sub in subs(tuple(eqn.params.values())):
                walk(sub)

    walk(jaxpr.jaxpr)
    return out


def _assert_primitives(jaxpr, *want: str) -> None:
    names = _names(jaxpr)
    for name in want:
        assert name in names, (name, names)
    assert not [n for n in names if any(w in n for w in WRAPPERS)], names


S16 = jnp.arange(16.0)


def _t(s):
    return fs.from_array(s).view(4, 4).t()


def test_jaxprs_of_reads_writes_grads_and_vmap_hold_the_primitives():
    read = lambda s: _t(s).contiguous().storage  # noqa: E731
    set_ = lambda s, v: _t(s).at[1:3, ::2].set(v).storage  # noqa: E731
    v = jnp.ones((2, 2))
    _assert_primitives(jax.make_jaxpr(read)(S16), "strided_read")
    _assert_primitives(jax.make_jaxpr(set_)(S16, v), "strided_write")
    _assert_primitives(jax.make_jaxpr(jax.grad(lambda s: jnp.vdot(read(s), S16)))(S16), "strided_read")
    grad_write = jax.grad(lambda s, v: jnp.vdot(set_(s, v), S16), argnums=(0, 1))
    _assert_primitives(jax.make_jaxpr(grad_write)(S16, v), "strided_write", "strided_read")
    vmapped = jax.make_jaxpr(jax.vmap(read))(jnp.stack([S16, S16]))
    _assert_primitives(vmapped, "strided_read")
    (eqn,) = [e for e in vmapped.jaxpr.eqns if e.primitive.name == "strided_read"]
    assert eqn.params["batch"] == (2,) and eqn.params["batched"] == (True, False)


def test_a_multiplying_write_differentiates_by_its_own_product_rule():
    """``mul`` through overlapping windows: its JVP is the primitives again (a multiplying
    write into ones, an add-write of the tangents times the others' products), no wrapper; a
    zero contribution gets the product of the others in its slot, exactly (no division)."""
    windows = Layout((3, 4), (2, 1))  # slots 2, 3 and 4, 5 are shared by two windows each
    v = jnp.ones((3, 4)).at[0, 2].set(0.0).at[1, 0].set(3.0)
    f = lambda s, v: jnp.sum(write(s, windows, v, mode="mul", overlap="error"))  # noqa: E731
    jaxpr = jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(jnp.arange(1.0, 9.0), v)
    _assert_primitives(jaxpr, "strided_write")
    g_s, g_v = jax.grad(f, argnums=(0, 1))(jnp.arange(1.0, 9.0), v)
    # slot 2 holds v[0, 2] = 0 and v[1, 0] = 3: d/dv[0, 2] = storage[2] * 3, d/dv[1, 0] = 0
    assert g_v[0, 2] == 3.0 * 3.0 and g_v[1, 0] == 0.0
    assert g_s.tolist() == [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]


def test_the_jaxpr_prints_the_view():
    text = str(jax.make_jaxpr(lambda s: materialize(s, Layout((4, 4), (1, 4), 0)))(S16))
    for part in ("strided_read[", "shape=(4, 4)", "strides=(1, 4)", "offset=0", "method=auto"):
        assert part in text, text
    traced = str(jax.make_jaxpr(lambda s, o: materialize(s, Layout((2, 2), (1, 4), o)))(S16, 3))
    assert "offset=None" in traced, traced


def test_the_read_transposes_to_a_write_or_an_inverse_read():
    """A transpose of the whole storage transposes to a read of the cotangent; a slice to an
    add-write into zeros, its stride-0 dims summed first."""
    def grad_names(layout, n):
        f = lambda s: jnp.vdot(materialize(s, layout), jnp.ones(layout.shape))  # noqa: E731
        return _names(jax.make_jaxpr(jax.grad(f))(jnp.zeros(n)))

    assert grad_names(Layout((4, 4), (1, 4)), 16).count("strided_write") == 0
    assert "strided_write" in grad_names(Layout((2, 2), (1, 4), 1), 16)
    expanded = jax.make_jaxpr(jax.grad(lambda s: jnp.sum(materialize(s, Layout((3, 4), (0, 1), 2)))))(S16)
    (eqn,) = [e for e in expanded.jaxpr.eqns if e.primitive.name == "strided_write"]
    assert eqn.params["shape"] == (4,) and eqn.params["mode"] == "add"


#: One view of every kind, over a storage of 24 elements.
KINDS = {
    "transpose": Layout((4, 6), (1, 4)),
    "permute3": Layout((2, 3, 4), (1, 8, 2)),
    "slice_steps": Layout((3, 2), (8, 3), 1),
    "diagonal": Layout((4,), (7,), 2),
    "expand": Layout((3, 5), (0, 1), 4),
    "unfold": Layout((5, 6), (3, 1)),
    "flip": Layout((4, 3), (-6, 2), 19),
    "overlap_add": Layout((4, 8), (5, 1)),
}


@pytest.mark.sampled(4)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_grads_of_reads_and_writes_to_second_order(kind):
    layout = KINDS[kind]
    with jax.enable_x64(True):
        storage = jnp.linspace(-1.0, 1.0, 24)
        values = jnp.linspace(0.5, 1.5, layout.numel).reshape(layout.shape)
        read = jax.jit(lambda s: jnp.sin(materialize(s, layout)))
        check_grads(read, (storage,), order=2, modes=("fwd", "rev"))
        overlap = "last" if oracle.has_internal_overlap(layout) else "error"
        for mode in ("set", "add", "mul"):  # mul: the product rule, of primitives again
            f = jax.jit(lambda s, v, mode=mode: write(s, layout, jnp.sin(v), mode=mode, overlap=overlap))
            check_grads(f, (storage, values), order=2, modes=("fwd", "rev"))


def test_grads_match_the_plain_jax_program():
    with jax.enable_x64(True):
        s = jnp.linspace(-1.0, 1.0, 16)
        w = jnp.linspace(2.0, 3.0, 16).reshape(4, 4)
        ours = jax.grad(lambda s: jnp.vdot(_t(s).contiguous().storage.reshape(4, 4), w))(s)
        plain = jax.grad(lambda s: jnp.vdot(s.reshape(4, 4).T, w))(s)
        np.testing.assert_allclose(ours, plain)
        v = jnp.ones((2, 2))
        ours = jax.grad(lambda s, v: jnp.vdot(_t(s).at[1:3, ::2].set(v).storage, s), argnums=(0, 1))(s, v)
        plain = jax.grad(lambda s, v: jnp.vdot(s.reshape(4, 4).T.at[1:3, ::2].set(v).T.reshape(-1), s),
                         argnums=(0, 1))(s, v)
        for a, b in zip(ours, plain, strict=True):
            np.testing.assert_allclose(a, b)


def test_overlapping_set_gives_its_values_cotangent_to_the_last_element_only():
    layout = Layout((3, 2), (1, 1))  # (i, j) -> slot i + j: (1, 0) and (2, 0) win slots 1 and 2
    g = jax.grad(lambda v: jnp.sum(write(jnp.zeros(4), layout, v, overlap="last") * jnp.arange(4.0)))(
        jnp.ones((3, 2)))
    np.testing.assert_array_equal(g, [[0.0, 0.0], [1.0, 0.0], [2.0, 3.0]])  # slot k weighs k


def test_vmap_over_storages_offsets_and_values():
    storages = jnp.arange(48.0).reshape(3, 16)
    layout = Layout((2, 3), (1, 4), 1)
    got = jax.vmap(lambda s: materialize(s, layout))(storages)
    want = [oracle.materialize(np.asarray(s), layout) for s in storages]
    np.testing.assert_array_equal(got, np.stack(want))
    offsets = jnp.array([0, 3, 6])
    got = jax.vmap(lambda o: materialize(S16, Layout((2, 3), (1, 4), o)))(offsets)
    want = [oracle.materialize(np.asarray(S16), Layout((2, 3), (1, 4), int(o))) for o in offsets]
    np.testing.assert_array_equal(got, np.stack(want))
    values = jnp.arange(18.0).reshape(3, 2, 3)
    got = jax.vmap(lambda o, v: write(jnp.zeros(16), Layout((2, 3), (1, 4), o), v))(offsets, values)
    want = [oracle.scatter(np.zeros(16), Layout((2, 3), (1, 4), int(o)), np.asarray(v), "set")
            for o, v in zip(offsets, values, strict=True)]
    np.testing.assert_array_equal(got, np.stack(want))
    nested = jax.jit(jax.vmap(jax.vmap(lambda s: materialize(s, layout))))(jnp.stack([storages, storages]))
    assert nested.shape == (2, 3, 2, 3)


def test_vmap_of_grad_and_grad_of_vmap():
    storages = jnp.linspace(-1.0, 1.0, 48).reshape(3, 16)
    layout = Layout((4, 4), (1, 4))
    w = jnp.arange(16.0).reshape(4, 4)
    ours = jax.jit(jax.vmap(jax.grad(lambda s: jnp.vdot(jnp.sin(materialize(s, layout)), w))))(storages)
    plain = jax.vmap(jax.grad(lambda s: jnp.vdot(jnp.sin(s.reshape(4, 4).T), w)))(storages)
    np.testing.assert_allclose(ours, plain, rtol=1e-6)
    columns = lambda s: jax.vmap(lambda o: materialize(s, Layout((4,), (4,), o)))(jnp.arange(4))  # noqa: E731
    g = jax.grad(lambda s: jnp.sum(columns(s)))(S16)
    np.testing.assert_array_equal(g, np.ones(16))  # every slot read once by the four columns
    offsets = jnp.array([0, 1])
    g_s, g_v = jax.grad(lambda s, v: jnp.sum(jax.vmap(lambda o, v: write(s, Layout((4,), (4,), o), v))(
        offsets, v)), argnums=(0, 1))(S16, jnp.ones((2, 4)))
    # each item writes its own column: that column's slots carry no cotangent in that item
    np.testing.assert_array_equal(g_s, np.tile([1.0, 1.0, 2.0, 2.0], 4))
    np.testing.assert_array_equal(g_v, np.ones((2, 4)))


def test_the_abstract_evaluation_checks_the_operands():
    layout = Layout((4,), (4,), 1)
    with pytest.raises(StorageError, match="the storage must have shape"):
        jax.make_jaxpr(lambda s: primitives.strided_read_p.bind(
            s, shape=(4,), strides=(4,), offset=1, method="auto", native=False, batch=(),
            batched=(False, False)))(jnp.zeros((2, 16)))
    with pytest.raises(StorageError, match=re.escape("spans 13 storage elements")):
        jax.make_jaxpr(lambda s, o: materialize(s, Layout((4,), (4,), o)))(jnp.zeros(12), 0)
    with pytest.raises(StorageError, match="the offset operand must be an integer"):
        jax.make_jaxpr(lambda s, o: primitives.strided_read_p.bind(
            s, o, shape=(4,), strides=(4,), offset=None, method="auto", native=False, batch=(),
            batched=(False, False)))(jnp.zeros(16), jnp.zeros(()))
    with pytest.raises(StorageError, match="the values must have shape"):
        jax.make_jaxpr(lambda s, v: primitives.strided_write_p.bind(
            s, v, shape=layout.shape, strides=layout.strides, offset=1, mode="set", overlapping=False,
            method="auto", op="write", native=False, batch=(), batched=(False, False)))(
            jnp.zeros(16), jnp.zeros(3))


@pytest.mark.parametrize("platform", ["cuda", "tpu"])
def test_exported_gpu_and_tpu_programs_hold_no_loop_and_no_custom_call(platform):
    """Off the CPU the plans are XLA's transpose, slices and gathers: no tile loop, no handler."""
    n = 512
    big = jnp.zeros(n * n, jnp.float32)
    programs = {
        "transpose": lambda s: materialize(s, Layout((n, n), (1, n))),
        "sliced_transpose": lambda s: materialize(s, Layout((n // 2, n // 2), (2, 2 * n), 1)),
        "transposed_write": lambda s: write(s, Layout((n, n), (1, n)), 1.0, mode="add"),
        "grad": jax.grad(lambda s: jnp.sum(materialize(s, Layout((n, n), (1, n))) ** 2)),
    }
    for name, fn in programs.items():
        text = jax.export.export(jax.jit(fn), platforms=[platform])(big).mlir_module()
        assert "stablehlo.while" not in text, name
        assert "stablehlo.custom_call" not in text, name
