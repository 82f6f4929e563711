"""The torch-version seam (fuzzaoti/compat.py): behaviour that must hold on every supported torch."""

import os
import subprocess
import sys


def test_fuzzaoti_cxx_reaches_an_inductor_config_imported_before_it():
    # Inductor reads CXX when its config is imported; the bench's naive loop imported it (to
    # check --configs) before asking for FUZZAOTI_CXX, built with g++ 13 on the H200 and
    # segfaulted on load. A fresh interpreter: this one's Inductor config is set already.
    code = ("import torch._inductor.config as config; from fuzzaoti import compat; "
            "compat.set_default_cxx(); print(config.cpp.cxx[-1])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "FUZZAOTI_CXX": "g++-from-fuzzaoti", "CXX": "g++"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "g++-from-fuzzaoti"
