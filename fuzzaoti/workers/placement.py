"""Where a campaign's workers run: how many, on which GPUs, and with what byte budget each.

Kept apart from the campaign loop: a batch scheduler (Slurm, a container's cpuset) decides
cores and GPUs, and each rule here says what it was measured on.
"""

from __future__ import annotations

import os

from fuzzaoti.strategies import get_profile


def gpu_ids(gpus: str | None) -> list[str]:
    """The GPU ids workers are pinned to: ``--gpus``, else the visible ones (at least one slot)."""
    if gpus:
        return [g.strip() for g in gpus.split(",") if g.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return (visible.split(",") if visible else [str(i) for i in range(_gpu_count())]) or ["0"]


def default_workers(device: str, gpus: str | None) -> int:
    """One worker on cpu; on cuda, per GPU one worker for every 5 of its CPU cores, 1 to 3.

    A worker's GPU idles while it compiles, and most of a compile is one core of Python
    (export, Inductor's lowering and its sympy reasoning), so more workers per GPU compile side
    by side; each also needs cores for Triton's parallel kernel compiles and g++. Measured on
    the H200 (16 cores), one bench run, 7 minutes an arm: 2 workers 51.1 programs/min, 3 workers
    66.8. Four lost in an earlier run with an older engine (5.8x the naive loop): each
    max_autotune program cost 14.3 worker-seconds against 7.0 with 2, as their autotune
    benchmarks shared the GPU. Hence the cap."""
    if device != "cuda":
        return 1
    n_gpus = len(gpu_ids(gpus))
    cores_per_gpu = usable_cores() // n_gpus
    return n_gpus * min(3, max(1, cores_per_gpu // 5))


def wants_standby(device: str) -> bool:
    """Whether a campaign keeps a warm spare worker per GPU (``workers.standby``): on cuda,
    where a worker is retired after every illegal memory access and wrong value (5 times in a
    5-minute H100 large campaign, each new process's compiles then running 40 to 60 s); not on
    the CPU, where a worker is lost only to a crash, its cold start costs about 5 s
    (``scripts/bench_restart.py``: 10.4 s against 5.4 s), and a spare warming would take one of
    its two cores from the worker."""
    return device == "cuda"


def default_max_bytes(device: str, profile: str, gpus: str | None, workers: int) -> int:
    """The byte budget of one checked run: the profile's, except for the large profile on cuda:
    the GPU's (``gpu_budget``), shared by the workers on each GPU."""
    if device != "cuda" or profile != "large":
        return get_profile(profile).max_bytes
    return gpu_budget(share=max(1, -(-workers // len(gpu_ids(gpus)))))


def gpu_budget(share: int = 1) -> int:
    """The byte budget of one checked run on a GPU: half of the least free memory of the visible
    GPUs (the other half is headroom for the CUDA context, Inductor's autotuning and the caching
    allocator), split between ``share`` workers. A job that names no budget (a worker replaying
    one finding, say) gets the whole half; on the CPU it has no limit."""
    import torch

    return min(torch.cuda.mem_get_info(k)[0] for k in range(max(1, torch.cuda.device_count()))) // 2 // share


def cpu_budget() -> int:
    """The byte budget of one checked run on the CPU: half the memory available now (the rest is
    the worker's own, the compiler's and everyone else's), as ``gpu_budget`` halves a GPU's."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return available // 2


def device_budget(device: str) -> int:
    """The byte budget of one checked run that names none (a check, a replay): the device's."""
    return gpu_budget() if device == "cuda" else cpu_budget()


def usable_cores() -> int:
    """The CPU cores this process may run on: a batch scheduler (Slurm, a container's cpuset)
    often grants a job a few cores of a large node, and ``os.cpu_count()`` counts the node's."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def pin_gpu(k: int, gpus: str | None) -> dict[str, str]:
    """Worker k runs on GPU k modulo the chosen GPUs."""
    ids = gpu_ids(gpus)
    return {"CUDA_VISIBLE_DEVICES": ids[k % len(ids)]}


def _gpu_count() -> int:
    import torch

    return torch.cuda.device_count()


def release_memory(device: str) -> None:
    """Hand a big run's memory back to the GPU: the workers sharing it each keep to a budget."""
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()
