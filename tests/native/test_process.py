"""The strided copy as a guest in the process (``_src/native/parallel.h``, ``process.py``): no
thread of its own (the thread count does not grow over many calls, and the work runs on XLA's
intra-op pool), no CPU burnt between calls, a thread count that is XLA's pool's (affinity,
simulated devices) under ``fs.config.kernel_threads``, and forks: a child forked after
JAX started gets :class:`functional_strides.ForkError` instead of a hang, a forked child that
runs a compiled program anyway runs the kernel alone, and the ``spawn`` and ``forkserver``
start methods work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from _support import copy_kernel

pytestmark = pytest.mark.usefixtures("_built")

LINUX_TASKS = pytest.mark.skipif(not os.path.isdir("/proc/self/task"),
                                 reason="counts threads in Linux's /proc")
_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
TWO_CPUS = pytest.mark.skipif(_CPUS < 2, reason="needs two CPUs for a split over the pool")


@pytest.fixture
def _built():
    copy_kernel()


def _run(code: str, env: dict[str, str] | None = None, timeout: int = 240, argv: tuple[str, ...] = (),
         cwd: str | None = None) -> list[str]:
    """The stdout lines of ``python -c code`` (or of the script ``argv``) in a fresh process
    (JAX on the CPU) and session; fails the calling test when it exits with an error or runs
    past ``timeout`` seconds, and then ends every process of the session (a forked child that
    hangs included)."""
    environ = {**os.environ, "JAX_PLATFORMS": "cpu", **(env or {})}
    command = [sys.executable, *(argv or ("-c", textwrap.dedent(code)))]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ,
                            cwd=cwd, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the process ran past {timeout} s (a hang): {out}\n{err}")
    assert proc.returncode == 0, out + err
    return out.split("\n")


# -- no thread of ours ------------------------------------------------------------------------

MANY_CALLS = """
    import os, threading, time
    import jax, jax.numpy as jnp, numpy as np
    from numpy.lib.stride_tricks import as_strided
    import functional_strides as fs
    from functional_strides import Layout, materialize
    from functional_strides._src.native import copy_kernel

    def threads():
        return sorted(os.listdir("/proc/self/task"))

    def named(word):
        return sum(word in open(f"/proc/self/task/{t}/comm").read() for t in threads())

    cases = [(Layout((1024, 1024), (1, 1024)), 2**20), (Layout((4093, 1024), (256, 1)), 2**20),
             (Layout((16, 8, 256, 64), (2**17, 64, 512, 1)), 2**21), (Layout((512, 1024), (4096, 2)), 2**21)]
    tables = {"ours": [], "xla": []}
    for layout, n in cases:
        storage = np.arange(n, dtype=np.float32)
        values = np.ones(layout.shape, np.float32)
        args = (jnp.asarray(storage), jnp.asarray(values))
        # NumPy's read and add through the view (the oracle's loop would take seconds here)
        index = as_strided(np.arange(n)[layout.offset:], layout.shape, [8 * s for s in layout.strides])
        want_add = storage.copy()
        np.add.at(want_add, index.reshape(-1), values.reshape(-1))
        wants = (storage[index], want_add)
        for table, read, write in (("ours", "strided_copy", "strided_copy"), ("xla", "gather", "scatter")):
            r = jax.jit(lambda s, lay=layout, m=read: materialize(s, lay, method=m)).lower(args[0]).compile()
            w = jax.jit(lambda s, v, lay=layout, m=write: fs.write(s, lay, v, mode="add", method=m)).lower(
                *args).compile()  # compiled, not run: the kernel has not run before the first count
            tables[table].append((r, w, *args, *wants))
    ok = []

    def work(k, table):
        read, add, s, v, want_read, want_add = table[k % len(table)]
        ok.append(all(np.array_equal(np.asarray(read(s)).reshape(want_read.shape), want_read)
                      and np.array_equal(np.asarray(add(s, v)), want_add) for _ in range(25)))

    def run(table):
        for k in range(4):
            work(k, table)
        runners = [threading.Thread(target=work, args=(k, table)) for k in range(4)]
        for r in runners:
            r.start()
        for r in runners:
            r.join()
        # JAX's runtime starts threads of its own for calls from several Python threads, which
        # end within a fraction of a second: count a second after
        time.sleep(1.0)
        return threads()

    run(tables["xla"])
    before = run(tables["xla"])
    run(tables["ours"])
    after = run(tables["ours"])
    stats = copy_kernel.stats()
    print(all(ok), len(ok))
    print(len(before), len(after), before == after)
    print(stats["pool_threads"], named("XLAEigen"), stats["tasks_scheduled"] > 0, stats["tasks_joined"] > 0)
"""


@pytest.mark.slow
@LINUX_TASKS
@TWO_CPUS
def test_many_calls_start_no_thread_and_run_on_xlas_pool():
    """Hundreds of reads and writes through the kernel (from the main thread and from four
    Python threads at once), every value checked: the process's threads are the same before
    and after (once the threads JAX's runtime starts for a while, for calls from several
    Python threads, have ended, as they do for the same calls by XLA's own ops), and the
    calls' parts ran as tasks on XLA's intra-op pool, whose size the kernel reads."""
    values, counts, pool = _run(MANY_CALLS)[:3]
    assert values == "True 32"
    n_before, n_after, same = counts.split()
    assert same == "True", counts
    pool_threads, eigen_threads, scheduled, joined = pool.split()
    assert pool_threads == eigen_threads and int(pool_threads) >= 2, pool
    assert (scheduled, joined) == ("True", "True"), pool


IDLE = """
    import resource, time
    import jax, jax.numpy as jnp
    from functional_strides import Layout, materialize

    def cpu():
        u = resource.getrusage(resource.RUSAGE_SELF)
        return u.ru_utime + u.ru_stime

    layout = Layout((2048, 2048), (1, 2048))
    storage = jnp.arange(2048 * 2048, dtype=jnp.float32)
    ours = jax.jit(lambda s: materialize(s, layout, method="strided_copy")).lower(storage).compile()
    a = jnp.ones((768, 768))
    pool_op = jax.jit(lambda x: x @ x).lower(a).compile()  # an XLA op on its pool

    def asleep(call, rounds=60, sleep=10e-3):
        call()
        burnt = 0.0
        for _ in range(rounds):
            call()
            t = cpu()
            time.sleep(sleep)
            burnt += cpu() - t
        return burnt / (rounds * sleep)

    print(asleep(lambda: ours(storage).block_until_ready()),
          asleep(lambda: pool_op(a).block_until_ready()))
"""


@pytest.mark.slow
@TWO_CPUS
def test_nothing_runs_between_calls():
    """The CPU the process burns while its caller sleeps after each call (``getrusage``
    around the sleeps) is no more than XLA's own pool burns after one of its ops, with room
    for noise: no thread of ours spins for the next call."""
    ours, xla = map(float, _run(IDLE)[0].split())
    assert ours <= max(0.05, 3 * xla), (ours, xla)


# -- the thread count is XLA's ----------------------------------------------------------------

SPLIT = """
    import os, sys
    {before}
    import jax, jax.numpy as jnp, numpy as np
    from functional_strides import Layout, materialize
    from functional_strides._src.native import copy_kernel
    layout = Layout((2048, 2048), (1, 2048))
    storage = np.arange(2048 * 2048, dtype=np.float32)
    read = jax.jit(lambda s: materialize(s, layout, method="strided_copy"))
    want = storage.reshape(2048, 2048).T  # NumPy's transpose (the oracle's loop takes seconds here)
    ok = all(np.array_equal(np.asarray(read(jnp.asarray(storage))), want) for _ in range(5))
    s = copy_kernel.stats()
    print(ok, s["pool_threads"], s["max_parts"], s["tasks_scheduled"], s["calls"])
"""


@pytest.mark.slow
@TWO_CPUS
@pytest.mark.parametrize(("name", "before", "env", "check"), [
    ("default", "", {}, lambda pool, cap, tasks, calls: pool >= 2 and cap == 64 and tasks >= calls),
    ("one-cpu", "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})", {},
     lambda pool, cap, tasks, calls: pool == 1 and tasks == 0),
    ("capped-at-one", "import functional_strides as fs; fs.config.update('kernel_threads', 1)", {},
     lambda pool, cap, tasks, calls: pool >= 2 and cap == 1 and tasks == 0),
    ("eight-devices", "", {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"},
     lambda pool, cap, tasks, calls: pool >= 8 and calls <= tasks <= (pool - 1) * calls),
    ("eight-devices-capped-at-two",
     "import functional_strides as fs; fs.config.update('kernel_threads', 2)",
     {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"},
     lambda pool, cap, tasks, calls: pool >= 8 and cap == 2 and tasks == calls),
], ids=lambda v: v if isinstance(v, str) else "")
def test_thread_count_is_xlas_pool(name, before, env, check):
    """A call of 16 MiB splits over as many threads as XLA's pool has, as jaxlib's own kernels
    take it (the pool's size follows the affinity mask, and XLA raises it to the devices it
    simulates), capped only by ``fs.config.kernel_threads`` where it is set; the values are
    NumPy's every time."""
    if not hasattr(os, "sched_setaffinity") and "affinity" in before:
        pytest.skip("no os.sched_setaffinity")
    ok, pool, cap, tasks, calls = _run(SPLIT.format(before=before), env=env)[0].split()
    assert ok == "True"
    assert check(int(pool), int(cap), int(tasks), int(calls)), (name, pool, cap, tasks, calls)


def test_kernel_threads_is_the_kernels_cap_at_once():
    """``fs.config.update("kernel_threads", n)`` sets the extension's cap on the parts of one
    call (0: the pool's size, 64 at most), read at every call; ``using`` refuses it (the cap
    is the process's), and values outside 0..64 are refused naming the range."""
    import functional_strides as fs
    from functional_strides._src.native import copy_kernel as kernel

    before = fs.config.kernel_threads
    try:
        fs.config.update("kernel_threads", 3)
        assert kernel.stats()["max_parts"] == 3
        fs.config.update("kernel_threads", 0)
        assert kernel.stats()["max_parts"] == 64
    finally:
        fs.config.update("kernel_threads", before)
    with pytest.raises(fs.LayoutError, match=r"process's.*fs\.config\.update\('kernel_threads', 2\)"):
        with fs.config.using(kernel_threads=2):
            pass
    for bad in (-1, 65, True, 1.5):
        with pytest.raises(fs.LayoutError, match=r"'kernel_threads' takes 0 .* 1 to 64"):
            fs.config.update("kernel_threads", bad)


# -- forks ------------------------------------------------------------------------------------

FORKED = """
    import os, warnings
    warnings.simplefilter("ignore")  # JAX warns of os.fork() in a threaded process
    import jax, jax.numpy as jnp, numpy as np
    import functional_strides as fs
    from functional_strides import Layout, materialize
    from functional_strides._src.native import copy_kernel
    layout = Layout((2048, 2048), (1, 2048))
    x = jnp.arange(2048 * 2048, dtype=jnp.float32)
    compiled = jax.jit(lambda s: materialize(s, layout, method="strided_copy")).lower(x).compile()
    want = np.asarray(compiled(x))
    pid = os.fork()
    if pid == 0:
        lines = []
        for name, call in (("materialize", lambda: materialize(x, layout)),
                           ("contiguous", lambda: fs.as_strided(x, (2048, 2048), (1, 2048), 0).contiguous()),
                           ("write", lambda: fs.write(x, layout, 1.0)),
                           ("from_numpy", lambda: fs.from_numpy(np.ones(3)))):
            try:
                call()
                lines.append(f"{name} ran")
            except fs.ForkError as e:
                lines.append(f"{name} ForkError {'spawn' in str(e) and 'forkserver' in str(e)}")
        lines.append("views " + str(fs.views.permute(Layout((2, 3), (3, 1)), (1, 0))))
        before = copy_kernel.stats()
        ok = np.array_equal(np.asarray(compiled(x)), want)  # a compiled program, run anyway
        after = copy_kernel.stats()
        lines.append(f"kernel {ok} {after['calls_alone'] - before['calls_alone']} "
                     f"{after['tasks_scheduled'] - before['tasks_scheduled']}")
        with open(os.environ["CHILD_OUT"], "w") as f:
            f.write("\\n".join(lines))
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.slow
def test_a_child_forked_after_jax_started_gets_a_fork_error(tmp_path):
    """In a child of ``os.fork()`` from a process whose JAX runtime had started, the entry
    points that would run JAX raise ``ForkError`` naming the start methods that work (JAX's
    compile, transfers and pool-run programs would wait there forever for threads that are
    not in the child); layout arithmetic still works; and a program compiled in the parent,
    run anyway, runs the kernel on the calling thread alone (no task for a pool whose workers
    are gone)."""
    out = tmp_path / "child.txt"
    assert _run(FORKED, env={"CHILD_OUT": str(out)}, timeout=180)[0] == "child 0"
    assert out.read_text().split("\n") == [
        "materialize ForkError True", "contiguous ForkError True", "write ForkError True",
        "from_numpy ForkError True", "views (3,2):(1,3)+0", "kernel True 1 0"]


FORKED_EARLY = """
    import os
    import jax.numpy as jnp, numpy as np
    import functional_strides as fs
    from functional_strides import Layout, materialize, oracle
    pid = os.fork()  # before JAX's runtime starts: the child starts its own
    if pid == 0:
        layout = Layout((600, 500), (1, 600))
        got = np.asarray(materialize(jnp.arange(300000.0), layout, method="strided_copy"))
        os._exit(0 if np.array_equal(got, oracle.materialize(np.arange(300000.0, dtype=np.float32), layout))
                 else 3)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.slow
def test_a_child_forked_before_jax_started_runs_the_library():
    assert _run(FORKED_EARLY, timeout=180)[0] == "child 0"


POOLS = """
    import multiprocessing as mp, sys, warnings
    warnings.simplefilter("ignore")
    import jax.numpy as jnp, numpy as np
    import functional_strides as fs

    def task(k):  # the library's entry first: in a forked worker, JAX's own calls would hang
        x = fs.from_numpy(np.arange(k, k + 512 * 512, dtype=np.float32).reshape(512, 512))
        return float(np.asarray(x.t().contiguous())[3, 5])

    if __name__ == "__main__":
        method = sys.argv[1]
        fs.from_array(jnp.ones(4)).contiguous()  # JAX's runtime started in the parent
        with mp.get_context(method).Pool(2) as pool:
            try:
                print(method, pool.map(task, [0, 10, 20]))
            except fs.ForkError as e:
                print(method, "ForkError", "spawn" in str(e))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("method", "want"), [
    ("spawn", "spawn [2563.0, 2573.0, 2583.0]"),
    ("forkserver", "forkserver [2563.0, 2573.0, 2583.0]"),
    ("fork", "fork ForkError True"),
])
def test_worker_pools_by_start_method(tmp_path, method, want):
    """``multiprocessing`` pools after JAX started in the parent: ``spawn`` and ``forkserver``
    workers read through the kernel (values checked); ``fork`` workers raise ``ForkError``
    in the parent's ``map`` instead of hanging."""
    if method not in __import__("multiprocessing").get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    script = tmp_path / "pools.py"
    script.write_text(textwrap.dedent(POOLS))
    assert _run("", timeout=300, argv=(str(script), method), cwd=str(tmp_path))[0] == want
