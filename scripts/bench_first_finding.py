#!/usr/bin/env python3
"""Time to the first finding: fuzzaoti's campaign against a naive Hypothesis loop, per canary.

For each canary and seed, both loops run side by side from a cold start (a fresh process each,
torch imported, nothing cached but what the machine's Inductor cache holds), each on a core of
its own (``taskset``; on a GPU node both share the GPU), with the canary injected:

* naive: a plain ``@given`` test that exports, AOTI-compiles, loads, runs and checks one
  generated program per example (the strategies fuzzaoti draws from), stopping at its first
  failure, or dying of it (a segfault ends a hand-written test's process as it shows the bug);
* fuzzaoti: ``fuzzaoti fuzz --inject CANARY --workers 1`` (no shrinking, no triage), stopped
  at its first ``NEW finding`` line.

A failure counts where its signature is on no known-bug list (``corpus/known``): a campaign
under a canary stores every failure as new, and a known bug of the installed torch found first
says nothing of how soon the canary's fault is. Each time is seconds from the process's start;
a loop with no finding by ``--minutes`` counts as that limit (printed with ``>``). Prints each
pair, then per canary both medians, their ranges and whether fuzzaoti's median is at most the
naive loop's.

    python3 scripts/bench_first_finding.py --seeds 1 2 3 --minutes 5
    python3 scripts/bench_first_finding.py --canaries index-shift --seeds 1 2 3 4 5
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable

_LINE = "first-finding "  # the naive child's answer on its stdout


def _unknown(signature: str) -> bool:
    from fuzzaoti.corpus.known_bugs import KnownList, builtin_bugs

    return KnownList(builtin_bugs()).match(signature) is None


def _pinned(core: int | None) -> list[str]:
    return ["taskset", "-c", str(core)] if core is not None else []


def naive(canary: str, seed: int, minutes: float, device: str, core: int | None) -> float | None:
    """Seconds to the naive loop's first unknown failure, or None by the limit."""
    spec = json.dumps({"canary": canary, "seed": seed, "device": device})
    return _first(_pinned(core) + [sys.executable, os.path.abspath(__file__), "--naive-process", spec],
                  minutes * 60, lambda line: line.startswith(_LINE), f"naive    seed {seed}", death_counts=True)


def fuzzaoti(canary: str, seed: int, minutes: float, device: str, core: int | None) -> float | None:
    """Seconds to the campaign's first unknown ``NEW finding`` line, or None by the limit."""
    corpus = os.path.join(tempfile.mkdtemp(prefix="fuzzaoti-first-"), "c.db")
    command = [sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--device", device, "--inject", canary, "--workers", "1",
               "--seed", str(seed), "--minutes", str(minutes), "--shrink-minutes", "0", "--no-triage",
               "--corpus", corpus]
    return _first(_pinned(core) + command, minutes * 60,
                  lambda line: "NEW finding" in line and _unknown(line.split(": ", 1)[-1].strip()),
                  f"fuzzaoti seed {seed}")


def _first(command: list[str], limit_s: float, found: Callable[[str], bool], label: str,
           death_counts: bool = False) -> float | None:
    """Seconds from starting ``command`` to its first stdout line that is ``found`` (then the
    process and its children are killed), or None when none came within ``limit_s``. With
    ``death_counts``, the process dying on its own (a segfault in a compiled program: what a
    hand-written test's user sees of it) is found too."""
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             start_new_session=True)
    timer = threading.Timer(limit_s, lambda: os.killpg(child.pid, signal.SIGKILL))
    timer.start()
    seconds = None
    try:
        for line in child.stdout:
            if found(line):
                seconds = time.monotonic() - started
                print(f"    {label}: {seconds:6.0f} s  {line.strip()[:150]}", flush=True)
                os.killpg(child.pid, signal.SIGKILL)
                break
    finally:
        timer.cancel()
        code = child.wait()
    if seconds is None and death_counts and code != 0 and time.monotonic() - started < limit_s:
        seconds = time.monotonic() - started
        print(f"    {label}: {seconds:6.0f} s  died with exit code {code}", flush=True)
    return seconds


def _serve_naive_process(spec: dict) -> None:
    """The naive child: the canary installed, one program per example, until the first failure
    whose signature no known-bug list holds (printed as one line)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from fuzzaoti import compat
    from fuzzaoti.check.signature import signature
    from fuzzaoti.compile import canaries
    from fuzzaoti.strategies import cases, programs
    from fuzzaoti.workers.execute import check_batch
    from fuzzaoti.workers.protocol import Job

    compat.set_default_cxx()  # the same compiler as fuzzaoti's workers
    canaries.install(spec["canary"])
    device = spec["device"]

    @settings(max_examples=10**6, deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(spec["seed"])
    @given(cases(programs(device=device)))
    def one(case):
        outcome = check_batch(Job("aoti", device, (case,)), lambda stage: None).outcomes()[0]
        if outcome.is_finding:
            sig = signature(outcome, case.program)
            if _unknown(sig):
                print(_LINE + sig, flush=True)
                os._exit(0)

    one()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--canaries", nargs="+", default=None, help="default: every canary")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--minutes", type=float, default=5.0, help="each loop's limit per seed")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--naive-process", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.naive_process is not None:
        _serve_naive_process(json.loads(args.naive_process))
        return
    from fuzzaoti.compile.canaries import CANARIES

    cores = sorted(os.sched_getaffinity(0)) if args.device == "cpu" else []
    naive_core, fuzz_core = (cores[0], cores[1]) if len(cores) >= 2 else (None, None)
    print(f"{args.device}, torch {_torch_version()}, each loop {'on a core of its own' if naive_core is not None else 'unpinned'}, "
          f"limit {args.minutes:g} min a seed", flush=True)
    verdicts = []
    for canary in args.canaries or list(CANARIES):
        print(f"{canary}:", flush=True)
        times: dict[str, list[float | None]] = {"naive": [], "fuzzaoti": []}
        for seed in args.seeds:
            pair: dict[str, float | None] = {}
            threads = [threading.Thread(target=lambda: pair.__setitem__(
                           "naive", naive(canary, seed, args.minutes, args.device, naive_core))),
                       threading.Thread(target=lambda: pair.__setitem__(
                           "fuzzaoti", fuzzaoti(canary, seed, args.minutes, args.device, fuzz_core)))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for arm in times:
                times[arm].append(pair.get(arm))
        limit = args.minutes * 60
        medians = {arm: statistics.median(t if t is not None else limit for t in ts) for arm, ts in times.items()}
        for arm, ts in times.items():
            shown = [f"{t:.0f}" if t is not None else f">{limit:.0f}" for t in ts]
            print(f"  {arm:<8} first finding at {', '.join(shown)} s: median {medians[arm]:.0f} s, "
                  f"range {_range(ts, limit)}", flush=True)
        ok = medians["fuzzaoti"] <= medians["naive"]
        verdicts.append(ok)
        print(f"  fuzzaoti's median {'is at most' if ok else 'is past'} the naive loop's "
              f"({medians['fuzzaoti']:.0f} s against {medians['naive']:.0f} s)", flush=True)
    print(f"fuzzaoti first on {sum(verdicts)} of {len(verdicts)} canaries (by median)")


def _range(times: list[float | None], limit: float) -> str:
    values = [t if t is not None else limit for t in times]
    high = max(values)
    return f"{min(values):.0f}-{high:.0f} s" + (" (limit)" if None in times else "")


def _torch_version() -> str:
    import torch

    return torch.__version__


if __name__ == "__main__":
    main()
