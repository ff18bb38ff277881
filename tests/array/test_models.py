"""Views held in models (docs/models.md): equinox modules, flax NNX modules, optax and plain
``jax.grad`` over parameters that are views, each program raced for equality against the
same model written with plain ``jax.Array``s: values, gradients, 30 optax steps of losses,
``filter_vmap`` ensembles against their members, checkpoints, ``scan`` carries, key paths and
the short forms that hold no values."""

from __future__ import annotations

import io

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import functional_strides as fs

eqx = pytest.importorskip("equinox", reason="equinox is in the test extra: pip install -e '.[test]'")
optax = pytest.importorskip("optax", reason="optax is in the test extra: pip install -e '.[test]'")

VOCAB, D = 16, 8
TOKENS, TARGETS = jnp.array([1, 3, 5, 7, 2]), jnp.array([3, 5, 7, 9, 0])


class Tied(eqx.Module):
    """An embedding table whose transpose (a view) is the output projection."""

    emb: fs.StridedArray

    def __init__(self, key: jax.Array):
        self.emb = fs.from_array(0.1 * jax.random.normal(key, (VOCAB * D,))).view(VOCAB, D)

    def __call__(self, tokens: jax.Array) -> jax.Array:
        return jnp.tanh(jnp.asarray(self.emb)[tokens]) @ jnp.asarray(self.emb.t())


class TiedTwin(eqx.Module):
    emb: jax.Array

    def __call__(self, tokens: jax.Array) -> jax.Array:
        return jnp.tanh(self.emb[tokens]) @ self.emb.T


def _loss(model) -> jax.Array:
    return optax.softmax_cross_entropy_with_integer_labels(model(TOKENS), TARGETS).mean()


def _pair(seed: int = 0) -> tuple[Tied, TiedTwin]:
    model = Tied(jax.random.key(seed))
    return model, TiedTwin(jnp.asarray(model.emb))


def test_jax_grad_over_a_model_holding_a_view_matches_the_plain_model():
    model, twin = _pair()
    np.testing.assert_allclose(float(_loss(model)), float(_loss(twin)), rtol=1e-6)
    g, gt = jax.grad(_loss)(model), jax.grad(_loss)(twin)
    assert isinstance(g.emb, fs.StridedArray) and g.emb.layout == model.emb.layout
    np.testing.assert_allclose(np.asarray(g.emb.storage).reshape(VOCAB, D), np.asarray(gt.emb), rtol=1e-5)
    # a hand-written SGD step over params and grads
    sgd = jax.tree.map(lambda p, d: p - 0.5 * d, model, g)
    sgd_twin = jax.tree.map(lambda p, d: p - 0.5 * d, twin, gt)
    assert sgd.emb.layout == model.emb.layout
    np.testing.assert_allclose(np.asarray(sgd.emb), np.asarray(sgd_twin.emb), rtol=1e-5, atol=1e-7)


def _train(model, opt, steps: int, *, filtered: bool) -> tuple[list[float], object]:
    params = eqx.filter(model, eqx.is_array) if filtered else model
    state = opt.init(params)

    @jax.jit
    def step(m, state):
        value, g = jax.value_and_grad(_loss)(m)
        updates, state = opt.update(g, state, m)
        return optax.apply_updates(m, updates), state, value

    losses = []
    for _ in range(steps):
        model, state, value = step(model, state)
        losses.append(float(value))
    return losses, model


@pytest.mark.parametrize("filtered", [False, True], ids=["optax", "optax_filtered"])
def test_thirty_adam_steps_match_the_plain_model(filtered):
    model, twin = _pair()
    losses, trained = _train(model, optax.adam(1e-2), 30, filtered=filtered)
    twin_losses, twin_trained = _train(twin, optax.adam(1e-2), 30, filtered=filtered)
    np.testing.assert_allclose(losses, twin_losses, rtol=1e-5)
    assert losses[-1] < 0.9 * losses[0]  # it trains
    assert trained.emb.layout == model.emb.layout
    np.testing.assert_allclose(np.asarray(trained.emb), np.asarray(twin_trained.emb), rtol=1e-4, atol=1e-6)


def test_equinox_filter_value_and_grad_under_filter_jit_matches_jax_grad():
    model, _ = _pair()
    value, g = eqx.filter_jit(eqx.filter_value_and_grad(_loss))(model)
    np.testing.assert_allclose(float(value), float(_loss(model)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g.emb.storage), np.asarray(jax.grad(_loss)(model).emb.storage),
                               rtol=1e-6, atol=1e-8)  # float32 sums in another order near 0


class SharedConv(eqx.Module):
    """Four width-3 filters that are overlapping windows of one storage (shared weights)."""

    w: fs.StridedArray

    def __init__(self, storage: jax.Array):
        self.w = fs.as_strided(storage, (4, 2, 3), (1, 6, 1))  # (out, in, width); in-channels 6 apart

    def __call__(self, x: jax.Array) -> jax.Array:
        return lax.conv_general_dilated(x[None], jnp.asarray(self.w), (1,), "VALID")[0]


def test_a_conv_kernel_through_as_strided_matches_stacked_slices():
    storage = jax.random.normal(jax.random.key(2), (12,))
    x = jax.random.normal(jax.random.key(3), (2, 9))

    def twin(s, x):
        kernel = jnp.stack([jnp.stack([s[6 * c + o:6 * c + o + 3] for c in range(2)]) for o in range(4)])
        return lax.conv_general_dilated(x[None], kernel, (1,), "VALID")[0]

    model = SharedConv(storage)
    np.testing.assert_allclose(np.asarray(model(x)), np.asarray(twin(storage, x)), rtol=1e-5)
    weights = jnp.arange(4 * 7.0).reshape(4, 7)
    g = jax.grad(lambda m: (m(x) * weights).sum())(model)
    gt = jax.grad(lambda s: (twin(s, x) * weights).sum())(storage)
    assert g.w.layout == model.w.layout
    np.testing.assert_allclose(np.asarray(g.w.storage), np.asarray(gt), rtol=1e-5, atol=1e-6)


class KVCache(eqx.Module):
    cache: fs.StridedArray  # (max_len, heads, dim) over one storage
    length: jax.Array

    def __init__(self, max_len: int = 6, heads: int = 2, dim: int = 3):
        self.cache = fs.from_array(jnp.zeros(max_len * heads * dim)).view(max_len, heads, dim)
        self.length = jnp.array(0)

    def append(self, k: jax.Array) -> KVCache:
        return eqx.tree_at(lambda c: (c.cache, c.length), self,
                           (self.cache.at[self.length].set(k), self.length + 1))

    def keys(self) -> fs.StridedArray:
        return self.cache.permute(1, 0, 2)  # (heads, max_len, dim), no copy


def test_a_kv_cache_in_an_equinox_module_matches_a_plain_cache():
    kv, plain = KVCache(), jnp.zeros((6, 2, 3))
    append = eqx.filter_jit(KVCache.append)
    for i in range(4):
        k = jax.random.normal(jax.random.key(i), (2, 3))
        kv, plain = append(kv, k), plain.at[i].set(k)
        np.testing.assert_array_equal(np.asarray(kv.keys()), np.asarray(plain.transpose(1, 0, 2)))
    assert kv.keys().stride() == (3, 6, 1) and int(kv.length) == 4
    assert kv.cache.storage.shape == (36,)


def test_filter_vmap_ensembles_equal_their_members():
    keys = jax.random.split(jax.random.key(4), 3)
    ensemble = eqx.filter_vmap(Tied)(keys)
    assert ensemble.emb.batch_shape == (3,) and ensemble.emb.layout == Tied(keys[0]).emb.layout
    out = eqx.filter_vmap(lambda m: m(TOKENS))(ensemble)
    losses = eqx.filter_vmap(_loss)(ensemble)
    for i, key in enumerate(keys):
        member = Tied(key)
        np.testing.assert_allclose(np.asarray(out[i]), np.asarray(member(TOKENS)), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(float(losses[i]), float(_loss(member)), rtol=1e-6)
    by_jax = jax.vmap(Tied)(keys)  # jax.vmap over the constructor too
    np.testing.assert_array_equal(np.asarray(by_jax.emb.storage), np.asarray(ensemble.emb.storage))


def test_a_checkpoint_round_trip_restores_storage_and_layout(tmp_path):
    model, _ = _pair(5)
    path = tmp_path / "tied.eqx"
    eqx.tree_serialise_leaves(path, model)
    restored = eqx.tree_deserialise_leaves(path, Tied(jax.random.key(6)))
    assert restored.emb.layout == model.emb.layout
    np.testing.assert_array_equal(np.asarray(restored.emb.storage), np.asarray(model.emb.storage))
    buffer = io.BytesIO()
    eqx.tree_serialise_leaves(buffer, model.emb.t())
    buffer.seek(0)
    like = fs.from_array(jnp.zeros(VOCAB * D)).view(VOCAB, D).t()
    back = eqx.tree_deserialise_leaves(buffer, like)
    np.testing.assert_array_equal(np.asarray(back), np.asarray(model.emb.t()))


def test_scan_carries_and_key_paths():
    def body(carry, i):
        return carry.at[i % 2].add(1.0), jnp.asarray(carry).sum()

    start = fs.from_array(jnp.zeros(8)).view(2, 4).t()  # (4,2):(1,4)+0
    final, sums = lax.scan(body, start, jnp.arange(3))
    assert final.layout == start.layout
    np.testing.assert_array_equal(np.asarray(final), [[2.0, 2.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(np.asarray(sums), [0.0, 2.0, 4.0])  # each step reads the carry first
    model, _ = _pair()
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(model)[0]]
    assert paths == [".emb.storage"]
    at = model.emb.as_strided((4,), (1,), jnp.asarray(3))
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(at)[0]]
    assert paths == [".storage", ".offset"]


def test_short_forms_hold_no_values():
    model, other = Tied(jax.random.key(7)), Tied(jax.random.key(8))  # other values, one layout
    short = "StridedArray(f32[16,8], (16,8):(8,1)+0)"
    for show in (eqx.tree_pformat, repr, lambda m: repr([m.emb]), lambda m: repr({"w": m.emb})):
        text = show(model)
        assert short in text and text == show(other), text  # the same text: no values in it
    assert eqx.tree_pformat(model) == f"Tied(emb={short})"
    assert repr(fs.from_array(jnp.zeros((4, 6), jnp.bfloat16)).view(4, 6)[1:, ::2]) == \
        "StridedArray(bf16[3,3], (3,3):(6,2)+6)"
    batched = fs.StridedArray(jnp.zeros((2, 6), jnp.int8), fs.Layout((3,), (2,)), batched=True)
    assert repr(batched) == "StridedArray(i8[3], (3,):(2,)+0, batch_shape=(2,))"
    assert str(model.emb).startswith("StridedArray([[")  # print(view) alone shows the values
    assert "emb=StridedArray([[" in eqx.tree_pformat(model, short_arrays=False)  # values on request


nnx = pytest.importorskip("flax.nnx", reason="flax is in the test extra: pip install -e '.[test]'")


class NNXTied(nnx.Module):
    def __init__(self, storage: jax.Array):
        self.emb = nnx.Param(fs.from_array(storage).view(VOCAB, D))

    def __call__(self, tokens: jax.Array) -> jax.Array:
        emb = self.emb[...]
        return jnp.tanh(jnp.asarray(emb)[tokens]) @ jnp.asarray(emb.t())


class NNXTwin(nnx.Module):
    def __init__(self, storage: jax.Array):
        self.emb = nnx.Param(storage.reshape(VOCAB, D))

    def __call__(self, tokens: jax.Array) -> jax.Array:
        return jnp.tanh(self.emb[...][tokens]) @ self.emb[...].T


class NNXStorageTied(nnx.Module):
    """The storage in the Param, the view built in the call: the form for nnx.Optimizer."""

    def __init__(self, storage: jax.Array):
        self.emb = nnx.Param(storage)
        self.layout = fs.Layout((VOCAB, D), (D, 1))

    def __call__(self, tokens: jax.Array) -> jax.Array:
        emb = fs.StridedArray(self.emb[...], self.layout)
        return jnp.tanh(jnp.asarray(emb)[tokens]) @ jnp.asarray(emb.t())


def test_an_nnx_param_holding_a_view_under_nnx_value_and_grad_matches_the_plain_module():
    storage = 0.1 * jax.random.normal(jax.random.key(8), (VOCAB * D,))
    model, twin = NNXTied(storage), NNXTwin(storage)
    value, g = nnx.value_and_grad(_loss)(model)
    twin_value, gt = nnx.value_and_grad(_loss)(twin)
    np.testing.assert_allclose(float(value), float(twin_value), rtol=1e-6)
    grad = g["emb"][...]
    assert isinstance(grad, fs.StridedArray) and grad.layout == model.emb[...].layout
    np.testing.assert_allclose(np.asarray(grad), np.asarray(gt["emb"][...]), rtol=1e-5, atol=1e-7)
    value, g = nnx.jit(nnx.value_and_grad(_loss))(model)
    np.testing.assert_allclose(np.asarray(g["emb"][...]), np.asarray(gt["emb"][...]), rtol=1e-5, atol=1e-7)


def test_nnx_optimizer_over_the_storage_trains_as_the_plain_module():
    storage = 0.1 * jax.random.normal(jax.random.key(9), (VOCAB * D,))
    runs = []
    for model in (NNXStorageTied(storage), NNXTwin(storage)):
        opt = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)

        @nnx.jit
        def step(model, opt):
            value, g = nnx.value_and_grad(_loss)(model)
            opt.update(model, g)
            return value

        runs.append([float(step(model, opt)) for _ in range(30)])
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-5)
    assert runs[0][-1] < 0.9 * runs[0][0]


class NNXCache(nnx.Module):
    def __init__(self, max_len: int = 6, heads: int = 2, dim: int = 3):
        self.cache = nnx.Cache(fs.from_array(jnp.zeros(max_len * heads * dim)).view(max_len, heads, dim))
        self.length = nnx.Cache(jnp.array(0))

    def __call__(self, k: jax.Array) -> jax.Array:
        self.cache.set_value(self.cache[...].at[self.length[...]].set(k))
        self.length[...] += 1
        return jnp.asarray(self.cache[...].permute(1, 0, 2))


def test_a_kv_cache_in_an_nnx_module_matches_a_plain_cache_and_displays_short():
    kv, plain = NNXCache(), jnp.zeros((6, 2, 3))
    step = nnx.jit(lambda c, k: c(k))
    for i in range(4):
        k = jax.random.normal(jax.random.key(10 + i), (2, 3))
        keys, plain = step(kv, k), plain.at[i].set(k)
        np.testing.assert_array_equal(np.asarray(keys), np.asarray(plain.transpose(1, 0, 2)))
    assert int(kv.length[...]) == 4 and kv.cache[...].layout == fs.Layout((6, 2, 3), (6, 3, 1))
    treescope = pytest.importorskip("treescope", reason="treescope comes with flax")
    empty = NNXCache()
    empty.length[...] = 4  # the same length, other cache values
    text = treescope.render_to_text(kv)
    assert "StridedArray(f32[6,2,3], (6,2,3):(6,3,1)+0)" in text
    assert text == treescope.render_to_text(empty) and repr(kv) == repr(empty)  # no values shown
