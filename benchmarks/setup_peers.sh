#!/usr/bin/env bash
# Create the benchmark peers' venv (TVM 0.27, numba) outside the project's own environment:
#   bash benchmarks/setup_peers.sh [DIR]        (DIR defaults to ./.peers)
# then run a benchmark with it, e.g. DIR/bin/python benchmarks/suite.py --rounds 10.
# The project itself is not installed there: the benchmarks put the repository root on
# sys.path.
set -euo pipefail
dir="${1:-.peers}"
python="${PYTHON:-python3.11}"
if ! command -v "$python" >/dev/null; then
    echo "setup_peers.sh: $python not found (TVM 0.27 wheels need CPython 3.11; set PYTHON=...)" >&2
    exit 1
fi
"$python" -m venv "$dir"
"$dir/bin/pip" install -q --upgrade pip
"$dir/bin/pip" install -q apache-tvm==0.27.0.post1 numba numpy llvmlite typing_extensions
"$dir/bin/python" -c "import tvm, numba; print('peers ready:', 'tvm', tvm.__version__, 'numba', numba.__version__)"
