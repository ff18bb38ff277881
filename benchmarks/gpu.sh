#!/usr/bin/env bash
# contiguous() on a GPU: the cases of bench_contiguous.py timed on the first GPU JAX sees,
# each column reported as a fraction of the device's copy bandwidth (benchmarks/bench_gpu.py).
#
#   bash benchmarks/gpu.sh                      # every case; writes benchmarks/results/bench_gpu.json
#   bash benchmarks/gpu.sh --cases transpose    # some cases
#   bash benchmarks/gpu.sh --dry-run --small    # no GPU: check the script on the CPU
#
# Exits 3 with a message when JAX sees no GPU (and --dry-run is not given), 2 when a column's
# values differ from NumPy's, 0 otherwise. Run the CPU suite as well (bench_contiguous.py):
# docs/benchmarks.md keeps the CPU results whatever the GPU shows.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
exec "${PYTHON:-python}" "$here/bench_gpu.py" "$@"
