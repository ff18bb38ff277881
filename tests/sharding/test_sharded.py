"""One 1-D storage sharded across devices: values against the oracle, and the collectives
and per-device memory of the compiled programs (8 simulated CPU devices, in a subprocess),
and a two-process ``jax.distributed`` run on localhost."""

import os
import socket
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples
from hypothesis import given
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import functional_strides as fs
from functional_strides import Layout, sharded
from functional_strides._src.sharding import plans

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HLO = """HloModule m, num_partitions=8
  %a = f32[16,128]{1,0} all-gather(f32[2,128]{1,0} %p), channel_id=1, replica_groups=[1,8]<=[8]
  %b = (f32[4,8]{1,0}, f32[4,8]{1,0}) all-to-all(%x, %y), channel_id=2
  %c = bf16[24]{0} collective-permute(bf16[24]{0} %z), channel_id=3, source_target_pairs={{0,1},{1,2},{2,2}}
  ROOT %d = s32[] all-reduce(s32[] %w), channel_id=4, to_apply=%add
"""


def test_collectives_parses_ops_sizes_and_pairs():
    found = sharded.collectives(HLO)
    assert [(c.op, c.bytes, c.moved) for c in found] == [
        ("all-gather", 16 * 128 * 4, 16 * 128 * 4 * 7),
        ("all-to-all", 2 * 4 * 8 * 4, 2 * 4 * 8 * 4 * 7),
        ("collective-permute", 48, 96),  # {2,2} stays on its device
        ("all-reduce", 4, 28),
    ]
    assert sharded.collectives("HloModule m\n  %x = f32[4]{0} add(%a, %b)") == []


def test_single_device_storage_takes_the_plain_path():
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4)).t()
    assert sharded.partition(x.storage) is None
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    one = jax.device_put(jnp.arange(12.0), NamedSharding(mesh, P("x")))
    assert sharded.partition(one) is None  # one block: nothing to partition
    assert "sharding" not in [name for name, _ in fs.explain(x, show=False).parts]
    y = x.contiguous(out_sharding=NamedSharding(mesh, P("x", None)))
    np.testing.assert_array_equal(np.asarray(y), np.arange(12.0).reshape(3, 4).T)
    assert y.stride() == (3, 1) and y.storage.shape == (12,)


def test_out_sharding_must_be_a_named_sharding():
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    part = sharded.Partition(mesh, "x", 8)
    with pytest.raises(fs.LayoutTypeError, match="out_sharding must be a jax.sharding.NamedSharding"):
        sharded.read_plan(Layout((8,), (1,)), 64, part, out_sharding="x")


def test_inside_jit_without_out_sharding_is_refused():
    with pytest.raises(fs.LayoutError, match="inside jit the storage's sharding is not known"):
        jax.jit(lambda s: sharded.read(s, Layout((4,), (2,))))(jnp.zeros(16))


SCRIPT = textwrap.dedent(
    """
    import os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import functional_strides as fs
    from functional_strides import Layout, StridedArray, oracle, sharded
    from functional_strides._src.lowering.reads import materialize

    D = 8
    mesh = Mesh(np.array(jax.devices()), ("x",))
    rows = NamedSharding(mesh, P("x"))

    def signal(n):
        plain = (np.arange(n, dtype=np.float32) * 0.5 - 3.0) % 97.0
        return plain, jax.device_put(jnp.asarray(plain), rows)

    def compiled(x, out_sharding=None):
        return sharded.program(x.storage, x.layout, out_sharding).lower(x.storage).compile()

    def check_values(x, plain, out_sharding=None):
        out = sharded.read(x.storage, x.layout, out_sharding)
        np.testing.assert_array_equal(np.asarray(out), oracle.materialize(plain, x.layout))
        return out

    def naive(x, out_sharding):  # the element gather, partitioned by XLA on the same input
        f = jax.jit(lambda s: materialize(s, x.layout, method="gather"), out_shardings=out_sharding)
        return f.lower(x.storage).compile()

    # -- framing: only halos cross shard boundaries -------------------------------------
    w, h, n = 256, 64, 32960                        # 512 frames tile the signal exactly
    plain, storage = signal(n)
    frames = StridedArray(storage, Layout.contiguous((n,))).unfold(0, w, h)
    assert frames.shape == (512, w)
    plan = sharded.read_plan(frames.layout, n, sharded.partition(storage))
    assert plan.strategy == "halo" and plan.dim == 0, plan
    c = compiled(frames)
    found = sharded.collectives(c)
    assert {k.op for k in found} == {"collective-permute"}, found
    assert sum(k.moved for k in found) == (D - 1) * (w - h) * 4, found   # w - h per boundary
    out = check_values(frames, plain)
    assert out.sharding.spec == P("x"), out.sharding
    block = n // D
    m = c.memory_analysis()
    assert m.argument_size_in_bytes == block * 4, m
    assert m.output_size_in_bytes == 512 // D * w * 4, m
    assert m.temp_size_in_bytes <= (block + max(plan.left) + max(plan.right)) * 4, (m, plan)
    g = naive(frames, plan.out_sharding)
    assert "all-gather" in {k.op for k in sharded.collectives(g)}
    assert g.memory_analysis().temp_size_in_bytes >= n * 4        # the whole storage on each device
    print("frames", sum(k.moved for k in found), "vs naive", sum(k.moved for k in sharded.collectives(g)))

    # frames that drift across blocks: each boundary still moves only what its neighbour needs
    x = StridedArray(storage, Layout.contiguous((n,)))[40:].unfold(0, 200, 48)[:680]
    p2 = sharded.read_plan(x.layout, n, sharded.partition(storage))
    found = sharded.collectives(compiled(x))
    assert p2.strategy == "halo" and {k.op for k in found} == {"collective-permute"}, (p2, found)
    assert sum(k.moved for k in found) == p2.halo_elements * 4, (p2, found)
    check_values(x, plain)

    # the same frames inside a user's jit, the sharding named by out_sharding
    f = jax.jit(lambda s: StridedArray(s, frames.layout).contiguous(out_sharding=rows).storage)
    found = sharded.collectives(f.lower(storage).compile())
    assert {k.op for k in found} == {"collective-permute"}, found
    flat = f(storage)
    np.testing.assert_array_equal(np.asarray(flat), oracle.materialize(plain, frames.layout).reshape(-1))

    # -- a 2-D transpose is one all-to-all ------------------------------------------------
    plain, storage = signal(128 * 256)
    mat = StridedArray(storage, Layout.contiguous((128, 256)))
    c = compiled(mat.t())
    found = sharded.collectives(c)
    assert [k.op for k in found] == ["all-to-all"], found
    assert found[0].moved == plain.nbytes * (D - 1) // D, found
    out = check_values(mat.t(), plain)
    assert out.sharding.spec == P("x"), out.sharding
    assert c.memory_analysis().temp_size_in_bytes <= 2 * plain.nbytes // D
    y = mat.t().contiguous(out_sharding=NamedSharding(mesh, P(None, "x")))
    np.testing.assert_array_equal(np.asarray(y), plain.reshape(128, 256).T)
    assert y.stride() == (128, 1)
    print("transpose", found[0].moved)

    # -- slices and selects within shards, and expand, move nothing -----------------------
    for name, v in {"slice": mat[:, 10:74:2], "select": mat.select(1, 5), "narrow": mat[:, 200:],
                    "expand": mat.view(-1).unsqueeze(1).expand(-1, 3),
                    "diagonal-blocks": mat.view(128, 16, 16).diagonal(0, 1, 2)}.items():
        found = sharded.collectives(compiled(v))
        assert not found, (name, found)
        check_values(v, plain)
        assert sharded.read_plan(v.layout, plain.size, sharded.partition(storage)).strategy == "local", name
        print(name, "local")
    wide = mat.view(-1).unsqueeze(0).expand(D, -1)    # every device needs the whole source
    found = sharded.collectives(compiled(wide))
    assert found and all(k.bytes <= plain.nbytes for k in found), found
    check_values(wide, plain)

    # -- writes: each device writes its part, halo updates go back to their owners ---------
    plain, storage = signal(n)
    base = StridedArray(storage, Layout.contiguous((n,)))
    part = sharded.partition(storage)
    src = (np.arange(512 * w, dtype=np.float32).reshape(512, w) % 7.0) - 3.0
    for mode, method in (("add", "add"), ("mul", "multiply"), ("min", "min"), ("max", "max")):
        new = getattr(base.unfold(0, w, h).at[...], method)(src)
        assert new.storage.sharding == storage.sharding and new.layout == frames.layout
        np.testing.assert_array_equal(np.asarray(new.storage),
                                      oracle.scatter(plain, frames.layout, src, mode))
        plan = sharded.write_plan(frames.layout, n, part, mode=mode)
        c = sharded.write_program(storage, frames.layout, mode=mode, op=mode).lower(storage, src).compile()
        found = sharded.collectives(c)
        assert {k.op for k in found} == {"collective-permute"}, (mode, found)
        assert sum(plan.left) + sum(plan.right) == (D - 1) * (w - h), plan  # w - h per boundary
        # an add or multiply through the overlapping frames keeps the view's order: the halos'
        # stored values are fetched, right halos handed on, left ones handed on and back
        ordered = mode in ("add", "mul")
        crossings = 2 * sum(plan.right) + 3 * sum(plan.left) if ordered else (D - 1) * (w - h)
        assert sum(k.moved for k in found) == crossings * 4, (mode, found, plan)
        window = (block + max(plan.left) + max(plan.right)) * 4
        m = c.memory_analysis()       # its block and share of src, the window and its updates
        assert m.argument_size_in_bytes == block * 4 + src.nbytes // D, (mode, m)
        windows = 5 if mode in ("add", "mul") else 3  # the ordered write: two or three passes over the window
        assert m.temp_size_in_bytes <= windows * window < n * 4, (mode, m.temp_size_in_bytes, window)
    new = base.unfold(0, w, h).at[...].set(src, overlap="last")
    np.testing.assert_array_equal(np.asarray(new.storage), oracle.scatter(plain, frames.layout, src, "set"))
    drift = base[40:].unfold(0, 200, 48)[:680][:, ::3]
    new = drift.at[...].add(1.5)
    np.testing.assert_array_equal(np.asarray(new.storage), oracle.scatter(plain, drift.layout, 1.5, "add"))
    assert sharded.write_plan(drift.layout, n, part, mode="add").strategy == "halo"
    new = base.view(32, 1030).at[:, 3].set(2.0)          # rows within shards: no collective
    assert new.storage.sharding == storage.sharding
    assert sharded.write_plan(base.view(32, 1030)[:, 3].layout, n, part).strategy == "local"
    expect = plain.copy().reshape(32, 1030)
    expect[:, 3] = 2.0
    np.testing.assert_array_equal(np.asarray(new.storage), expect.reshape(-1))
    new = base[: 128 * 256].view(128, 256).t().at[5].set(-1.0)   # partitioned by XLA
    np.testing.assert_array_equal(np.asarray(new.storage), oracle.scatter(
        plain, base[: 128 * 256].view(128, 256).t()[5].layout, np.float32(-1.0), "set"))
    for bad in (lambda: frames.at[...].set(0.0), lambda: frames.at[...].add(jnp.ones((3, w))),
                lambda: frames.at[...].add(jnp.ones((512, w), jnp.complex64))):
        try:
            bad()
        except fs.LayoutError as e:
            print("refused", type(e).__name__)
        else:
            raise AssertionError("a bad write went through")

    # -- contiguous(), jnp.asarray and the default output sharding ------------------------
    y = frames.contiguous()
    assert y.storage.sharding.spec == P("x") and y.stride() == (w, 1)
    np.testing.assert_array_equal(np.asarray(y.storage), oracle.materialize(plain, frames.layout).reshape(-1))
    assert jnp.asarray(frames).sharding.spec == P("x")
    odd = base.unfold(0, w, h)[:501]                  # 501 frames: dim 0 does not split in 8
    assert jnp.asarray(odd).sharding.spec == P(None, "x")
    assert base.contiguous() is base

    # -- explain reports the collectives ---------------------------------------------------
    text = fs.explain(frames, show=False).section("sharding")
    assert "sharded read: halo" in text, text
    assert "read collectives: 14 collective-permute; 5376 bytes" in text, text
    assert "sharded write (at[...].add): halo" in text, text
    wrote = text.split("write collectives: ", 1)[1].split(";", 1)[0]  # the ordered halo write's
    assert wrote.endswith(" collective-permute") and int(wrote.split()[0]) > 14, text
    text = fs.explain(odd, show=False).section("sharding")   # read as 504 frames, then resharded
    assert "sharded read: halo" in text and "does not split into 8 equal parts" in text, text
    assert "contiguous() stores 504 rows" in text and "all-gather" not in text, text
    print(fs.explain(mat.t(), show=False).section("sharding"))

    # -- random frames and slices against the oracle --------------------------------------
    rng = np.random.default_rng(0)
    for _ in range(10):
        win, hop = int(rng.integers(2, 300)), int(rng.integers(1, 120))
        start = int(rng.integers(0, 500))
        count = ((n - start - win) // hop + 1) // D * D
        v = base[start:].unfold(0, win, hop)[:count]
        if rng.random() < 0.3:
            v = v[:, ::2]
        check_values(v, plain)
        found = sharded.collectives(compiled(v))
        p3 = sharded.read_plan(v.layout, n, sharded.partition(storage))
        assert p3.strategy in ("local", "halo"), (v.layout, p3)
        assert sum(k.moved for k in found) == p3.halo_elements * 4, (v.layout, found)

    # -- bad input: the errors of one device, on every strategy -----------------------------
    small = jax.device_put(jnp.arange(16.0), rows)
    past_end = Layout((4, 5), (4, 1))                    # reaches index 16 of 16 elements
    for call in (lambda: sharded.read(small, past_end),
                 lambda: sharded.write(small, past_end, 1.0, mode="add", overlap="error", op="add")):
        try:
            call()
        except fs.StorageError as err:
            assert "require a storage of 17 elements" in str(err), err
        else:
            raise AssertionError("a view past the storage end was read or written")
    try:
        sharded.write(small, Layout((4, 2), (4, 1)), 1.0, mode="bogus", overlap="error", op="write")
    except fs.LayoutError as err:
        assert "unknown mode 'bogus'" in str(err), err
    else:
        raise AssertionError("an unknown mode was accepted")
    print("OK")
    """
)


def _run(script: str, timeout: int = 300) -> str:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_sharded_storage_on_8_devices():
    out = _run(SCRIPT)
    assert out.strip().endswith("OK"), out
    for name in ("slice", "select", "narrow", "expand", "diagonal-blocks"):
        assert f"{name} local" in out, out
    assert out.count("refused") == 3 and "refused OverlapError" in out, out


DISTRIBUTED = textwrap.dedent(
    """
    import os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    port, pid = sys.argv[1], int(sys.argv[2])
    jax.distributed.initialize(f"localhost:{port}", num_processes=2, process_id=pid,
                               initialization_timeout=60)
    from functional_strides import Layout, StridedArray, oracle, sharded
    assert jax.device_count() == 8 and jax.local_device_count() == 4, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("x",))
    n, w, h = 32960, 256, 64
    plain = (np.arange(n, dtype=np.float32) * 0.25) % 31.0
    storage = jax.make_array_from_callback((n,), NamedSharding(mesh, P("x")), lambda i: plain[i])
    frames = StridedArray(storage, Layout.contiguous((n,))).unfold(0, w, h)
    found = sharded.collectives(sharded.program(storage, frames.layout).lower(storage).compile())
    assert {c.op for c in found} == {"collective-permute"}, found
    out = jnp.asarray(frames)
    expect = oracle.materialize(plain, frames.layout)
    assert len(out.addressable_shards) == 4
    for shard in out.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), expect[shard.index])
    print("OK", pid, sum(c.moved for c in found), flush=True)
    jax.distributed.shutdown()
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_frame_a_sharded_signal():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    root = REPO
    port = str(_free_port())
    procs = [subprocess.Popen([sys.executable, "-c", DISTRIBUTED, port, str(pid)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=root) for pid in range(2)]
    outs = []
    try:
        for proc in procs:
            outs.append(proc.communicate(timeout=240))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    for pid, (proc, (out, err)) in enumerate(zip(procs, outs, strict=True)):
        assert proc.returncode == 0, out + err
        assert f"OK {pid} {7 * 192 * 4}" in out, out + err


@examples(20, deadline=None)
@given(devices=st.integers(2, 8), block=st.integers(1, 40), window=st.integers(1, 30), hop=st.integers(1, 30),
       start=st.integers(0, 30), stride=st.integers(1, 3), data=st.data())
def test_halos_are_the_elements_each_part_needs_from_its_neighbours(devices, block, window, hop, start,
                                                                      stride, data):
    """Per device, the halos equal what the part's storage indices (from the oracle) reach
    past its own block; None exactly when some part reaches past a neighbour's block."""
    n = devices * block
    if start + window > n:
        return
    count = ((n - start - window) // hop + 1) // devices * devices
    if count == 0:
        return
    inner = data.draw(st.integers(1, window))  # elements kept per window, every stride-th
    inner = min(inner, (window - 1) // stride + 1)
    layout = Layout((count, inner), (hop, stride), start)
    per = count // devices
    parts = plans._dim_parts(layout, devices, 0, per)
    found = plans._halos(parts, (start, start), n, devices)
    lefts, rights = [], []
    for d in range(devices):
        idx = fs.oracle.element_indices(Layout((per, inner), (hop, stride), start + d * per * hop))
        lefts.append(max(0, d * block - int(idx.min())))
        rights.append(max(0, int(idx.max()) + 1 - (d + 1) * block))
    if max(lefts) > block or max(rights) > block:
        assert found is None
    else:
        assert found == (tuple(lefts), tuple(rights))
