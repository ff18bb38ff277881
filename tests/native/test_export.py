"""``jax.export`` of programs that read and write through views: the exported module holds
standard StableHLO only (no custom call of the strided copy or write, for one platform or
several), its values are those of the jitted program, bit for bit, the serialized artifact
runs in a fresh process that never imports ``functional_strides``, and ``StridedArray`` and
``Layout`` serialize as arguments and results. Each runs in a subprocess of its own, so that
no registration of this process leaks into the one that deserializes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from _support import REPO, copy_kernel

pytestmark = pytest.mark.usefixtures("_built")
pytest.importorskip("flatbuffers", reason="jax.export's serialization needs flatbuffers (the test extra)")


@pytest.fixture
def _built():
    copy_kernel()


# Run first in a process that must not see the library: any import of it then raises ImportError.
_WITHOUT_LIBRARY = 'import sys\nsys.modules["functional_strides"] = None\n'


def _run(code: str, cwd, *, library: bool = True) -> str:
    """The standard output of ``python -c code`` in ``cwd`` with JAX on the CPU; without
    ``library`` no module of ``functional_strides`` can be imported there."""
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    code = textwrap.dedent(code) if library else _WITHOUT_LIBRARY + textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


# The programs: each takes the native handler under jit (checked), and is exported for the CPU
# and for three platforms; its inputs, the jitted values and the two artifacts are saved.
EXPORT = """
    import jax, jax.numpy as jnp, numpy as np
    import functional_strides as fs
    from functional_strides import Layout, oracle

    transposed, framed = Layout((512, 512), (1, 512)), Layout((1024, 256), (64, 1))
    windows = Layout((4096, 4), (1, 1))          # overlapping windows: overlap-add
    storage = (np.arange(512 * 512, dtype=np.float32) % 251) / 7
    values = (np.arange(4096 * 4, dtype=np.float32) % 13) / 3

    programs = {
        "transposed": (lambda s: fs.StridedArray(s, transposed).contiguous().storage, (storage,)),
        "framed": (lambda s: jnp.asarray(fs.StridedArray(s, framed)) * 2, (storage[:65728],)),
        "overlap_add": (lambda s, v: fs.StridedArray(s, windows).at[...].add(v).storage,
                        (storage[:4099], values.reshape(4096, 4))),
    }
    want = {
        "transposed": oracle.materialize(storage, transposed).reshape(-1),
        "framed": oracle.materialize(storage[:65728], framed) * 2,
        "overlap_add": oracle.scatter(storage[:4099], windows, values.reshape(4096, 4), "add"),
    }
    for name, (f, args) in programs.items():
        jitted = jax.jit(f)
        assert "functional_strides_strided" in jitted.lower(*args).as_text(), name  # the handler, under jit
        got = np.asarray(jitted(*args))
        np.testing.assert_allclose(got, want[name], rtol=1e-6)
        for tag, platforms in (("cpu", None), ("multi", ("cpu", "cuda", "tpu"))):
            exp = jax.export.export(jitted, platforms=platforms)(*args)
            text = exp.mlir_module()
            assert "custom_call" not in text and "functional_strides_strided" not in text, (name, tag)
            assert exp.platforms == (platforms or ("cpu",)), exp.platforms
            np.testing.assert_array_equal(np.asarray(exp.call(*args)), got)  # the XLA path, bit for bit
            with open(f"{name}.{tag}.bin", "wb") as out:
                out.write(exp.serialize())
        np.savez(f"{name}.npz", *args, want=got)
    print("exported", len(programs))
"""

# A fresh process that cannot import functional_strides: deserialize, run, compare.
RUN_ELSEWHERE = """
    import sys
    import jax, jax.export, numpy as np
    for name in ("transposed", "framed", "overlap_add"):
        data = np.load(f"{name}.npz")
        args = [data[f"arr_{i}"] for i in range(len(data.files) - 1)]
        for tag in ("cpu", "multi"):
            with open(f"{name}.{tag}.bin", "rb") as f:
                exp = jax.export.deserialize(bytearray(f.read()))
            np.testing.assert_array_equal(np.asarray(exp.call(*args)), data["want"])
    assert not any(m.startswith("functional_strides") and sys.modules[m] for m in sys.modules)
    try:
        import functional_strides  # noqa: F401
    except ImportError:
        print("ran without functional_strides")
"""


@pytest.mark.slow
def test_exported_reads_and_writes_hold_standard_stablehlo_and_run_without_the_library(tmp_path):
    assert _run(EXPORT, tmp_path).split() == ["exported", "3"]
    assert _run(RUN_ELSEWHERE, tmp_path, library=False).strip() == "ran without functional_strides"


PYTREES = """
    import jax, jax.numpy as jnp, numpy as np
    import functional_strides as fs

    x = fs.from_array(jnp.arange(24.0).reshape(4, 6))[1:, ::2]
    def f(view, layout):
        # a view and a layout in, a view, a copy and a layout out
        return view.t(), view.t().contiguous(), fs.Layout(layout.shape, layout.strides, layout.offset + 1)
    # x's int offset is in the signature; the layout's array offset is an argument
    exp = jax.export.export(jax.jit(f))(x, fs.Layout((2, 3), (3, 1), jnp.asarray(2)))
    with open("pytrees.bin", "wb") as out:
        out.write(exp.serialize())
    print("exported")
"""

RUN_PYTREES = """
    import jax, jax.numpy as jnp, numpy as np
    import functional_strides as fs

    with open("pytrees.bin", "rb") as f:
        exp = jax.export.deserialize(bytearray(f.read()))
    base = fs.from_array(jnp.arange(100.0, 124.0).reshape(4, 6))
    x = base[1:, ::2]
    view, copy, layout = exp.call(x, fs.Layout((2, 3), (3, 1), jnp.asarray(5)))
    assert isinstance(view, fs.StridedArray) and isinstance(copy, fs.StridedArray)
    assert (view.shape, view.stride(), view.storage_offset()) == ((3, 3), (2, 6), 6)
    assert copy.stride() == (3, 1) and copy.storage_offset() == 0
    np.testing.assert_array_equal(np.asarray(view), np.asarray(x.t()))
    np.testing.assert_array_equal(np.asarray(copy), np.asarray(x.t()))
    assert (layout.shape, layout.strides, int(layout.offset)) == ((2, 3), (3, 1), 6)
    print("ok")
"""


@pytest.mark.slow
def test_strided_arrays_and_layouts_are_arguments_and_results_of_a_serialized_export(tmp_path):
    assert _run(PYTREES, tmp_path).strip() == "exported"
    assert _run(RUN_PYTREES, tmp_path).strip() == "ok"


@pytest.mark.slow
def test_deserializing_their_treedefs_needs_the_library_imported(tmp_path):
    _run(PYTREES, tmp_path)
    code = """
        import jax, jax.export
        with open("pytrees.bin", "rb") as f:
            data = bytearray(f.read())
        try:
            jax.export.deserialize(data)
        except ValueError as e:
            print("functional_strides.StridedArray" in str(e))
    """
    assert _run(code, tmp_path, library=False).strip() == "True"


# -- outside a trace ---------------------------------------------------------------------------

def test_outside_a_trace_the_handler_runs_op_by_op():
    """Under ``jax.disable_jit`` (and called directly) the primitive is evaluated, not
    lowered: the handler on CPU operands, with the values of the XLA path."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from functional_strides import Layout, materialize, oracle, write
    from functional_strides._src.lowering import primitives
    from functional_strides._src.native import copy_kernel as kernel

    layout = Layout((512, 512), (1, 512))
    storage = np.arange(512 * 512, dtype=np.float32) % 251
    want = oracle.materialize(storage, layout)
    before = kernel.handler_time()[0]
    with jax.disable_jit():
        read = materialize(jnp.asarray(storage), layout, method="strided_copy")
        frames = Layout((4096, 4), (1, 1))
        added = write(jnp.zeros(4099), frames, 1.0, mode="add", method="strided_copy")
    np.testing.assert_array_equal(np.asarray(read), want)
    np.testing.assert_array_equal(np.asarray(added),
                                  oracle.scatter(np.zeros(4099, np.float32), frames, np.float32(1.0), "add"))
    direct = primitives.read(jnp.asarray(storage), layout, "strided_copy")  # a bind outside any trace
    np.testing.assert_array_equal(np.asarray(direct), want)
    assert kernel.handler_time()[0] >= before + 3
