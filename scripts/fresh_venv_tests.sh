#!/usr/bin/env bash
# The whole test suite in a fresh virtualenv, as a new user gets it:
#     bash scripts/fresh_venv_tests.sh [TORCH_VERSION [PYTEST ARGS...]]
#
# A new virtualenv (VENV, default /tmp/fuzzaoti-fresh-venv, made again each time) gets torch
# TORCH_VERSION from PyPI (default 2.15.0, the newest release: its Linux wheel is the CUDA build,
# which runs on the CPU too) and fuzzaoti with its test extras, which bring the newest
# Hypothesis, pytest and click PyPI has; then README's test command runs in it. Its last line is
# pytest's summary. Tests that pass here and under the machine's own Python hold on both
# Hypothesis releases, not on what one release happens to draw.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH=${1:-2.15.0}
[ $# -gt 0 ] && shift
VENV=${VENV:-/tmp/fuzzaoti-fresh-venv}
rm -rf "$VENV"
python3 -m venv "$VENV"
PYTHON="$VENV/bin/python" bash scripts/setup.sh "$TORCH"
"$VENV/bin/python" -c "import hypothesis, pytest, torch; print(f'torch {torch.__version__}, hypothesis {hypothesis.__version__}, pytest {pytest.__version__}')"
"$VENV/bin/python" -m pytest -q -n 2 -p no:benchmark -p no:cacheprovider "$@" 2>&1 | tail -n 40
