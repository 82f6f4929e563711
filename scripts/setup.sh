#!/usr/bin/env bash
# Install fuzzaoti and what it needs. Where torch is already installed (a GPU node), it is used
# as it is; otherwise the CPU wheel torch==2.13.0 is installed first, so the pyproject's
# "torch>=2.11" pulls nothing more (a bare "torch" would download a multi-GB CUDA build).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c "import torch" 2>/dev/null; then
    "$PY" -m pip install -q "torch==2.13.0"
fi
"$PY" -m pip install -q -e ".[test]"
