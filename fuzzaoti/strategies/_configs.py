"""How often a campaign draws each of the Inductor config sets (``fuzzaoti.model.configs``)."""

from __future__ import annotations

from typing import Any

from fuzzaoti import compat
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model.configs import CONFIG_SETS

#: Compile cost per program of a config that makes a compile dearer, relative to the defaults,
#: per device, in worker-seconds per program as a campaign summary prints them. CUDA (H200
#: campaigns, torch 2.11, 2 workers): defaults 1.1, max_autotune 7.0 and 8.6 (every GEMM's
#: Triton choices compiled and timed, which batching does not share), triton.native_matmul 3.3
#: in two runs; coordinate_descent_tuning 3.1 and combo_kernels 3.2 against the defaults' 2.8 on
#: an H100 (torch 2.11, docs/benchmarks.md): not priced. CPU (a 2-core 40-minute campaign,
#: torch 2.15, 2764 programs): defaults 0.9, simd256 0.8, scalar 0.6, one_thread 1.2, freezing 1.2, runtime constant folding 0.9, and the
#: C++ GEMM template under max_autotune 0.9: every CPU set within 1.4x of the defaults, none
#: priced. (Re-measure when the engine changes.)
CONFIG_COST = {"cuda": {"max_autotune": 7, "triton.native_matmul": 3}, "cpu": {}}


def config_cost(configs: dict[str, Any], device: str = "cuda") -> int:
    """What a program compiled with ``configs`` on ``device`` costs, in default-compile units
    (its dearest key)."""
    costs = CONFIG_COST.get(device, {})
    return max([costs.get(key, 1) for key in configs] or [1])


def named_config_sets(device: str) -> dict[str, dict[str, Any]]:
    """The compile config sets drawn on ``device`` that the installed torch supports, by name."""
    if device not in CONFIG_SETS:
        raise InvalidArgument(f"device={device!r} must be one of {sorted(CONFIG_SETS)}")
    return {name: c for name, c in CONFIG_SETS[device].items() if all(map(compat.config_supported, c))}


def config_sets(device: str) -> list[dict[str, Any]]:
    """The compile config sets drawn on ``device`` that the installed torch supports."""
    return list(named_config_sets(device).values())


def batch_config_sets(device: str, only: str | None = None) -> list[dict[str, Any]]:
    """``config_sets(device)``, each repeated in inverse proportion to its ``CONFIG_COST``: a
    campaign that draws each batch's configs from this list gives every config set about the
    same compile time, rather than the same number of batches (which spent 85% of an H200
    campaign's compile time in the two dear sets). ``only``: just the set of that name (a
    campaign aimed at one Inductor feature, or a benchmark that compares like with like)."""
    if only is not None:
        named = named_config_sets(device)
        if only not in named:
            why = "is not supported by this torch" if only in CONFIG_SETS[device] else f"is not drawn on {device}"
            raise InvalidArgument(f"config set {only!r} {why}: use one of {', '.join(named)}")
        return [named[only]]
    sets = config_sets(device)
    costs = [config_cost(c, device) for c in sets]
    return [c for c, cost in zip(sets, costs) for _ in range(round(max(costs) / cost))]

