"""Running a script on simulated CPU devices in a subprocess (the device count is fixed when
JAX starts): the prelude every multi-device test script begins with, and :func:`run`."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PRELUDE = textwrap.dedent(
    """
    import os, warnings
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count={devices}"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
    import functional_strides as fs
    from functional_strides import Layout, StridedArray, oracle, sharded
    warnings.simplefilter("error")

    def compiled(f, *args):
        return jax.jit(f).lower(*args).compile()

    def moved(c):
        found = sharded.collectives(c)
        return sorted({{k.op for k in found}}), sum(k.moved for k in found)
    """
)


def run(script: str, devices: int = 8, timeout: int = 300) -> str:
    """Run ``PRELUDE + script`` with ``devices`` simulated CPU devices; its stdout (it must exit 0)."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    code = PRELUDE.format(devices=devices) + textwrap.dedent(script)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout
