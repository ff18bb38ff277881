"""The multi-device facts of ``docs/sharding.md``: every row of its two tables (what each view
costs in collectives and bytes, the plan and the sharding type) is run on 8 simulated CPU
devices, in a subprocess, and checked against the compiled HLO and the oracle; and its
two-process example (``docs/examples/two_process.py``) runs as a reader runs it."""

import os
import re
import subprocess
import sys

import pytest
from _devices import REPO, run

pytestmark = pytest.mark.slow

DOC = os.path.join(REPO, "docs", "sharding.md")


def _table(marker: str) -> list[list[str]]:
    """The rows (cells, stripped) of the table after ``<!-- {marker}: ... -->``."""
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    start = text.index(f"<!-- {marker}:")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[2:]  # past the header and its rule


def _code(cell: str) -> str:
    return re.match(r"`([^`]*)`", cell).group(1)


def _collectives(cell: str) -> tuple[dict[str, int], int]:
    if cell == "none":
        return {}, 0
    ops, size = cell.rsplit(", ", 1)
    counts = {}
    for part in ops.split(" + "):
        k, op = part.split(" ", 1)
        counts[op] = int(k)
    return counts, int(size.removesuffix(" B").replace(",", ""))


def test_the_tables_are_read():
    reads, writes = _table("reads"), _table("writes")
    assert len(reads) >= 8 and len(writes) >= 5
    assert _collectives("1 all-to-all + 1 collective-permute, 14,701,568 B") == (
        {"all-to-all": 1, "collective-permute": 1}, 14701568)


SCRIPT = """
import collections
N = 2**20
mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
jax.set_mesh(mesh)
plain = (np.arange(N, dtype=np.float32) * 0.5 - 3.0) % 97.0
storage = jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))
part = sharded.partition(storage)
base = StridedArray(storage, Layout.contiguous((N,)))

def facts(c):
    found = sharded.collectives(c)
    return dict(collections.Counter(k.op for k in found)), sum(k.moved for k in found)

for code, plan, typed, read, stored in READS:
    view = lambda s: eval(code, {"x": StridedArray(s, Layout.contiguous((N,)))})
    layout = view(storage).layout
    strategies = [p.split(",")[0].replace("stored: ", "").strip() for p in plan.split(";")]
    got = sharded.read_plan(layout, N, part)
    assert got.strategy == strategies[0] and bool(got.padded) == ("padded" in plan), (code, got)
    flat = sharded.read_plan(layout, N, part, flat=True)
    assert flat.strategy == strategies[-1], (code, flat)
    c = compiled(lambda s: jnp.asarray(view(s)), storage)
    out = c(storage)
    assert str(jax.typeof(out)) == typed, (code, jax.typeof(out))
    assert facts(c) == read, (code, facts(c), read)
    np.testing.assert_array_equal(np.asarray(out), oracle.materialize(plain, layout))
    c = compiled(lambda s: view(s).contiguous().storage, storage)
    assert facts(c) == stored, (code, facts(c), stored)
    print("read", code)

for code, plan, cost in WRITES:
    target = code.split(".at[")[0]
    method = re.search(r"\\.at\\[\\.\\.\\.\\]\\.(\\w+)\\(", code).group(1)
    mode = {"multiply": "mul"}.get(method, method)
    layout = eval(target, {"x": base}).layout
    y = np.arange(np.prod(layout.shape), dtype=np.float32).reshape(layout.shape) % 11
    assert sharded.write_plan(layout, N, part, mode=mode).strategy == plan.split(",")[0], code
    f = lambda s, y: eval(code, {"x": StridedArray(s, Layout.contiguous((N,))), "y": y}).storage
    c = compiled(f, storage, y)
    assert facts(c) == cost, (code, facts(c), cost)
    src = y if "(y)" in code else np.float32(eval(code.rsplit("(", 1)[1].rstrip(")")))
    np.testing.assert_array_equal(np.asarray(c(storage, y)), oracle.scatter(plain, layout, src, mode))
    print("write", code)
print("OK")
"""


def test_the_reads_table_holds_on_8_devices():
    reads = [(_code(r[0]), r[1], _code(r[2]), _collectives(r[3]), _collectives(r[4]))
             for r in _table("reads")]
    out = run(f"import re\nREADS = {reads!r}\nWRITES = []\n" + SCRIPT)
    assert out.strip().endswith("OK") and out.count("read ") == len(reads), out


def test_the_writes_table_holds_on_8_devices():
    writes = [(_code(r[0]), r[1], _collectives(r[2])) for r in _table("writes")]
    out = run(f"import re\nREADS = []\nWRITES = {writes!r}\n" + SCRIPT)
    assert out.strip().endswith("OK") and out.count("write ") == len(writes), out


EXAMPLE = os.path.join(REPO, "docs", "examples", "two_process.py")


def test_the_two_process_example_runs_and_each_process_checks_its_shards():
    """``python docs/examples/two_process.py``: two processes under ``jax.distributed`` on
    localhost (a free port, 4 CPU devices each, gloo), both exit 0 having checked their 4
    shards of the transposed window against NumPy; the page includes the file itself."""
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=150)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for pid in range(2):
        assert f"--- process {pid} exited with status 0" in proc.stdout, proc.stdout
        assert f"process {pid}: OK, 4 shards of (24, 48) checked" in proc.stdout, proc.stdout
    with open(DOC, encoding="utf-8") as f:
        assert "```{literalinclude} examples/two_process.py" in f.read()
