#!/usr/bin/env bash
# Install fuzzaoti and what it needs:  bash scripts/setup.sh [TORCH_VERSION]
#
# Without TORCH_VERSION: where torch is already installed (a GPU node), it is used as it is;
# otherwise the CPU wheel torch==2.13.0 is installed first, so the pyproject's "torch>=2.11"
# pulls nothing more (a bare "torch" would download a multi-GB CUDA build).
# With TORCH_VERSION (e.g. 2.15.0, the newest release, whose Linux wheel is the CUDA build and
# runs on the CPU too): that torch from PyPI, past any cap a machine's pip constraints file puts
# on torch (a cap on the releases kept on a local disk, say): PIP_CONSTRAINT is emptied for
# this script's installs only. PYTHON names the interpreter (a virtualenv's python, say).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH=${1:-}
# quiet unless something fails: pip's notes (running as root, a newer pip, an index location
# this machine's pip config names but lacks) are not the user's business on every set-up
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
if [ -n "$TORCH" ]; then
    export PIP_CONSTRAINT=/dev/null
    "$PY" -m pip install -qq "torch==$TORCH"
elif ! "$PY" -c "import torch" 2>/dev/null; then
    "$PY" -m pip install -qq "torch==2.13.0"
fi
"$PY" -m pip install -qq -e ".[test]"
"$PY" -c "import torch, fuzzaoti; print(f'fuzzaoti ready: torch {torch.__version__}')"
