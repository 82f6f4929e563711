"""What a worker's death costs the next batch: a cold replacement against a warm standby.

A GPU worker is retired after every illegal memory access and every wrong value, and the
process that replaces it pays a cold start in its first compile (``fuzzaoti.workers.standby``).
This measures that cost with real AOTI compiles, in two arms run one after the other, each a
pool of one worker under the ``index-wild`` canary (an index load gigabytes off: a crash
on CPU, an illegal memory access on a GPU): a first batch warms the worker, then ``--crashes``
times a crashing program kills it and the next, clean, program's check is timed (its compile
included). The standby arm waits for its spare to warm before each crash, as a campaign's
spare has the time to while the other workers compile; the cold arm starts a new process.
Each timed program is new to Inductor's caches (its own constants), as in a campaign.

    python3 scripts/bench_restart.py --device cpu --crashes 3
    python3 scripts/bench_restart.py --device cuda --crashes 3

(On the 2-core CPU, torch 2.13: see docs/benchmarks.md.)
"""

from __future__ import annotations

import argparse
import itertools
import time

from fuzzaoti.model.case import Case
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.workers.worker import WorkerConfig

_fresh = itertools.count(1)


def clean_case() -> Case:
    """A pointwise program with constants no earlier program had (no compile cache hit)."""
    k = next(_fresh)
    program = Program(
        dims=(DimSpec("n", 2, 64, 8),),
        inputs=(InputSpec("x0", "float32", ("n", 8)), InputSpec("x1", "float32", ("n", 8))),
        nodes=(Node("t0", "mul", ("x0", "x1")),
               Node("t1", "affine", ("t0",), (("scale", 1.0 + k / 64), ("shift", float(k)))),
               Node("t2", "sum", ("t1",), (("dim", 1),))),
        outputs=("t2",),
    ).validate()
    return Case(program, (((("n", 9),), k),))


def crashing_case(device: str) -> Case:
    """An index_select: under ``index-wild`` its load reads far past the index (``canaries``).

    On CUDA it is compiled without compile-time autotuning: AOTI's default runs each Triton kernel
    on example tensors at compile time, where the wild load fails the compile (in a subprocess)
    instead of killing the worker at run time, which is what this bench times the cost of.
    """
    configs = (("triton.autotune_at_compile_time", False),) if device == "cuda" else ()
    program = Program(
        dims=(DimSpec("n", 2, 64, 8),),
        inputs=(InputSpec("x0", "float32", ("n", 4)), InputSpec("i0", "int64", (6,), Values("int", 0, "n"))),
        nodes=(Node("t0", "index_select", ("x0", "i0"), (("dim", 0),)),),
        outputs=("t0",),
        configs=configs,
    ).validate()
    return Case(program, (((("n", 9),), 0),))


def arm(device: str, crashes: int, standby: bool) -> tuple[list[float], int]:
    """Seconds of each clean check right after a crash, and how many replacements came warm."""
    pool = WorkerPool(WorkerConfig(device=device, backend="aoti", canary="index-wild"), standby=standby)
    seconds = []
    try:
        pool.start()
        (first,) = pool.check([clean_case()])
        assert first.passed, first.message
        for _ in range(crashes):
            if standby:  # a campaign's spare warms while the other workers compile
                pool.standbys.settle()
            (crashed,) = pool.check([crashing_case(device)])
            if crashed.symptom not in ("crash", "illegal_memory_access"):
                raise SystemExit(f"the crashing program did not crash: {crashed.symptom} {crashed.message[-2000:]}")
            started = time.monotonic()
            (after,) = pool.check([clean_case()])
            seconds.append(time.monotonic() - started)
            assert after.passed, after.message
            print(f"  {'standby' if standby else 'cold'}: {seconds[-1]:.1f} s after a crash", flush=True)
        warm = pool.standbys.handed_out if standby else 0
    finally:
        pool.close()
    return seconds, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--crashes", type=int, default=3, help="crashes (and timed checks after them) per arm")
    args = parser.parse_args()
    if args.crashes < 1:
        parser.error(f"Cannot have crashes={args.crashes} < 1")
    cold, _ = arm(args.device, args.crashes, standby=False)
    warm, served = arm(args.device, args.crashes, standby=True)
    mean_cold, mean_warm = sum(cold) / len(cold), sum(warm) / len(warm)
    print(f"the check after a crash ({args.device}, {args.crashes} each): cold replacement {mean_cold:.1f} s, "
          f"warm standby {mean_warm:.1f} s ({served} of {len(warm)} replacements warm): "
          f"{mean_cold / max(mean_warm, 1e-9):.1f}x", flush=True)


if __name__ == "__main__":
    main()
