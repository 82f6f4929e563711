#!/usr/bin/env bash
# Install fuzzaoti and what it needs. Where torch is already installed (a GPU node), it is used
# as it is; otherwise the CPU wheel torch==2.13.0 is installed first, so the pyproject's
# "torch>=2.11" pulls nothing more (a bare "torch" would download a multi-GB CUDA build).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# quiet unless something fails: pip's notes (running as root, a newer pip, an index location
# this machine's pip config names but lacks) are not the user's business on every set-up
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
if ! "$PY" -c "import torch" 2>/dev/null; then
    "$PY" -m pip install -qq "torch==2.13.0"
fi
"$PY" -m pip install -qq -e ".[test]"
