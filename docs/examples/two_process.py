"""One storage sharded over two processes: a view of it read under ``jit``, checked against NumPy.

Run ``python two_process.py``: it takes a free port on localhost for the coordinator, starts
itself twice (process ids 0 and 1), waits for both and exits with status 0 when both checked
their values. Or start each process yourself, on one machine or on two (the coordinator is
process 0's host)::

    python two_process.py 12355 0 &
    python two_process.py 12355 1

Each process has 4 CPU devices (``XLA_FLAGS``, set before JAX starts) and the collectives
between processes go through gloo; the mesh spans the 8 devices of both. A process holds and
checks only its own shards (``addressable_shards``), as a real multi-host program does.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

PROCESSES, DEVICES_PER_PROCESS, TIMEOUT_S = 2, 4, 120


def worker(port: int, process_id: int, host: str = "localhost") -> None:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={DEVICES_PER_PROCESS}"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import functional_strides as fs

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"{host}:{port}", num_processes=PROCESSES, process_id=process_id,
                               initialization_timeout=60)
    assert jax.process_count() == PROCESSES and jax.device_count() == PROCESSES * DEVICES_PER_PROCESS
    mesh = jax.make_mesh((jax.device_count(),), ("x",))  # every process's devices, explicit axis

    rows, cols = 64, 48
    values = np.arange(rows * cols, dtype=np.float32)  # every process knows the whole input here
    with jax.set_mesh(mesh):
        # each process puts only its own blocks of the storage on its devices
        storage = jax.make_array_from_callback(values.shape, NamedSharding(mesh, P("x")),
                                               lambda index: values[index])

        @jax.jit
        def read(storage):
            x = fs.StridedArray(storage, fs.Layout.contiguous((rows * cols,))).view(rows, cols)
            window = x.t()[::2, 8:56]           # a transpose, every other row, a window: a view
            return window.contiguous()          # its values, sharded over the 8 devices

        out = read(storage)

    expect = values.reshape(rows, cols).T[::2, 8:56]  # NumPy's view of the same values
    assert out.shape == expect.shape and out.layout == fs.Layout.contiguous(expect.shape)
    flat = expect.reshape(-1)  # out's storage holds the values in row-major order
    shards = out.storage.addressable_shards
    assert len(shards) == DEVICES_PER_PROCESS
    for shard in shards:
        np.testing.assert_array_equal(np.asarray(shard.data), flat[shard.index])
    print(f"process {process_id}: OK, {len(shards)} shards of {out.shape} checked", flush=True)
    jax.distributed.shutdown()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def main() -> int:
    """Start the processes on a free port, wait for them; the worst exit status."""
    port = str(free_port())
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), port, str(pid)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for pid in range(PROCESSES)]
    deadline, outputs = time.monotonic() + TIMEOUT_S, []
    try:
        for proc in procs:
            try:
                outputs.append(proc.communicate(timeout=max(deadline - time.monotonic(), 0))[0])
            except subprocess.TimeoutExpired:  # one failed, the other waits for it: stop it
                proc.kill()
                outputs.append(proc.communicate()[0] + f"(stopped after {TIMEOUT_S} s)\n")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    for pid, (proc, output) in enumerate(zip(procs, outputs, strict=True)):
        print(f"--- process {pid} exited with status {proc.returncode}\n{output}", end="", flush=True)
    return max(abs(proc.returncode) for proc in procs)


if __name__ == "__main__":
    if len(sys.argv) == 3:  # python two_process.py PORT PROCESS_ID: one process
        worker(int(sys.argv[1]), int(sys.argv[2]))
    else:
        sys.exit(main())
