"""The Inductor config sets programs are compiled with, and the allowlist a program's configs obey.

A program's ``configs`` go straight to ``aoti_compile_and_package(inductor_configs=...)``, and
Inductor has options that name programs and paths (``cpp.cxx`` is the C++ compiler it runs, others
name kernels, cache and output directories, or hold callables). A program from a corpus, a merged
shard or a program file is someone else's data, so it may hold only the (key, value) pairs that
fuzzaoti itself draws, each of the type it is drawn with: ``check_configs`` refuses anything else
when a Program is validated, wherever it came from (``fuzzaoti.model.program``).
"""

from __future__ import annotations

from typing import Any, Iterable

from fuzzaoti.errors import InvalidProgram, short_repr as _short

#: The Inductor config sets programs are compiled with, per device, by the name ``fuzz
#: --configs`` takes (a campaign draws every one the installed torch supports unless told one).
CONFIG_SETS: dict[str, dict[str, dict[str, Any]]] = {
    "cpu": {
        "default": {},
        # the C++ loops at another vector width (AVX2's 256 bits where AVX-512 is the default),
        # and not vectorized at all (no ISA has width 0): other tails, other reduction code
        "simd256": {"cpp.simdlen": 256},
        "scalar": {"cpp.simdlen": 0},
        # one thread: no parallel split of loops and reductions across threads
        "one_thread": {"cpp.threads": 1},
        # the C++ GEMM template for mm and bmm, chosen against ATen by timing
        "max_autotune_cpp": {"max_autotune": True, "max_autotune_gemm_backends": "CPP,ATEN"},
        # the module's parameters and buffers folded into the graph as constants at compile
        # time (weights prepacked for oneDNN on the CPU), or folded when the package loads
        "freezing": {"freezing": True},
        "constant_folding": {"aot_inductor.use_runtime_constant_folding": True},
    },
    "cuda": {
        "default": {},
        "max_autotune": {"max_autotune": True, "max_autotune_gemm_backends": "TRITON"},
        "native_matmul": {"triton.native_matmul": True},
        # each Triton kernel's block sizes tuned by coordinate descent from its heuristic
        # config (other tiles, other masks at the tails), and independent kernels fused into one
        "coordinate_descent": {"coordinate_descent_tuning": True},
        "combo_kernels": {"combo_kernels": True},
        "freezing": {"freezing": True},
        "constant_folding": {"aot_inductor.use_runtime_constant_folding": True},
    },
}


def _allowed() -> dict[str, list[Any]]:
    """Every config key a drawn set uses, with the values it is drawn with."""
    allowed: dict[str, list[Any]] = {}
    for sets in CONFIG_SETS.values():
        for configs in sets.values():
            for key, value in configs.items():
                if not any(_same(value, v) for v in allowed.setdefault(key, [])):
                    allowed[key].append(value)
    return allowed


def _same(a: Any, b: Any) -> bool:
    """Equal and of one type: ``1`` is not ``True``, and ``"1"`` is not ``1``."""
    return type(a) is type(b) and a == b


#: ``{key: [values]}``: the only configs a program may hold (derived from ``CONFIG_SETS``).
ALLOWED_CONFIGS: dict[str, list[Any]] = _allowed()


def check_configs(configs: Iterable[tuple[Any, Any]]) -> None:
    """Raise InvalidProgram, naming the key, for the first (key, value) pair fuzzaoti never draws."""
    for key, value in configs:
        if not isinstance(key, str) or key not in ALLOWED_CONFIGS:
            raise InvalidProgram(f"config key {_short(key)} is not one fuzzaoti draws "
                                 f"(allowed: {', '.join(sorted(ALLOWED_CONFIGS))})")
        if not any(_same(value, v) for v in ALLOWED_CONFIGS[key]):
            raise InvalidProgram(f"config {key}={_short(value)} is not a value fuzzaoti draws for it "
                                 f"(allowed: {', '.join(map(repr, ALLOWED_CONFIGS[key]))})")
