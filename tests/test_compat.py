"""The torch-version seam (fuzzaoti/compat.py): behaviour that must hold on every supported torch."""

import os
import subprocess
import sys

from fuzzaoti import compat


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


def test_a_vector_isa_library_that_loaded_once_on_this_host_is_not_probed_again(tmp_path, monkeypatch):
    # Inductor starts a Python child per ISA library in every new process to see that it loads
    # (13 children, 1.3 s of a CPU worker's cold start): one that loaded is remembered by path
    from torch._inductor.cpu_vec_isa import VecISA

    probed = []

    def probe(self, path):
        probed.append(path)
        return path.endswith("good.so")

    monkeypatch.setattr(VecISA, "_probe_load", probe)
    compat.remember_vec_isa_probes()
    compat.remember_vec_isa_probes()  # (wrapped once, not twice)
    good, bad = str(tmp_path / "good.so"), str(tmp_path / "bad.so")
    answers = [VecISA._probe_load(None, p) for p in (good, good, bad, bad)]
    assert answers == [True, True, False, False] and probed == [good, bad, bad]
