"""A pool of workers that checks batches of cases and pins every failure on one case.

A batch is compiled as one merged program. When the merged program fails as a whole (export,
compile or load raised, a run raised, or the worker crashed or hung) the batch is bisected
and each half checked again, down to single cases: a failure only becomes a finding once a
case has shown it on its own. When the failure's traceback points into one member's code (the
worker names that member the suspect), the suspect is checked alone and the rest together:
two compiles instead of a bisection's 2·log2(n).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from fuzzaoti.outcome import Outcome
from fuzzaoti.signature import signature
from fuzzaoti.strategies import Case
from fuzzaoti.worker import Worker, WorkerConfig


@dataclass
class PoolStats:
    """What the pool's time went to: a batch that fails as a whole costs its bisection's
    compiles, so a high failure rate, not compile speed, can bound a campaign's throughput."""

    batches: int = 0
    compiles: int = 0
    bisections: int = 0
    compile_s: float = 0.0  # worker-seconds in compiles (and runs) of whole groups
    bisect_compiles: int = 0  # compiles of halves of a group that failed as a whole
    bisect_s: float = 0.0
    bisect_causes: Counter = field(default_factory=Counter)  # what failed whole batches, by signature

    def describe(self) -> str:
        total = self.compile_s + self.bisect_s
        causes = ", ".join(f"{n}x {cause}" for cause, n in self.bisect_causes.most_common(3))
        return (f"{self.compiles} compiles, {self.bisect_compiles} of them bisecting failed batches "
                f"({100 * self.bisect_s / total if total else 0:.0f}% of worker time)"
                + (f"; batches failed with: {causes}" if causes else ""))


class WorkerPool:
    def __init__(self, config: WorkerConfig, workers: int = 1,
                 worker_env: Callable[[int], dict[str, str]] | None = None):
        extra_env = worker_env or (lambda k: {})
        self.workers = [Worker(replace(config, env=config.env + tuple(extra_env(k).items())))
                        for k in range(max(1, workers))]
        self.stats = PoolStats()
        self._stats_lock = threading.Lock()  # workers' threads add to the stats
        self.checked = [0] * len(self.workers)  # programs each worker has checked

    @property
    def restarts(self) -> int:
        return sum(max(w.restarts, 0) for w in self.workers)

    def start(self) -> None:
        for w in self.workers:
            w.start()

    def close(self) -> None:
        for w in self.workers:
            w.close()

    def check(self, cases: Sequence[Case], backend: str | None = None) -> list[Outcome]:
        """Outcomes for ``cases`` (same order), spreading them over the workers.

        ``backend`` overrides the workers' own for this call (the triage ladder uses it)."""
        self.stats.batches += 1
        n = len(self.workers)
        chunks = [list(range(k, len(cases), n)) for k in range(n)]
        with ThreadPoolExecutor(max_workers=n) as executor:
            parts = list(executor.map(
                lambda k: self._resolve(self.workers[k], [cases[i] for i in chunks[k]], backend) if chunks[k] else [],
                range(n)))
        for k, chunk in enumerate(chunks):
            self.checked[k] += len(chunk)
        return _in_order(len(cases), chunks, parts)

    def describe_workers(self) -> str:
        """Per worker (per GPU on cuda): programs checked and restarts, for progress lines."""
        parts = []
        for k, w in enumerate(self.workers):
            gpu = dict(w.config.env).get("CUDA_VISIBLE_DEVICES")
            label = f"gpu{gpu}" if gpu is not None else f"worker{k}"
            parts.append(f"{label}: {self.checked[k]} programs, {max(w.restarts, 0)} restarts")
        return "; ".join(parts)

    def _resolve(self, worker: Worker, cases: list[Case], backend: str | None = None,
                 bisecting: bool = False) -> list[Outcome]:
        groups: dict[tuple, list[int]] = {}
        for index, case in enumerate(cases):
            groups.setdefault(case.program.configs, []).append(index)
        if len(groups) > 1:  # only programs compiled with the same inductor configs can share a module
            indices = list(groups.values())
            return _in_order(len(cases), indices, [self._resolve(worker, [cases[i] for i in group], backend, bisecting)
                                                   for group in indices])
        job = {
            "backend": backend or worker.config.backend,
            "device": worker.config.device,
            "cases": [{"program": c.program.to_json(), "runs": c.run_dicts()} for c in cases],
        }
        started = time.monotonic()
        result = worker.check(job)
        self._count_compile(time.monotonic() - started, bisecting)
        if result["batch"] is None:
            return [Outcome.from_dict(o) for o in result["cases"]]
        if len(cases) == 1:
            outcome = Outcome.from_dict(result["batch"])
            if outcome.env is None and len(cases[0].runs) == 1:  # a lone run: we know where it failed
                env, seed = cases[0].runs[0]
                outcome = replace(outcome, env=dict(env), seed=seed)
            return [outcome]
        with self._stats_lock:
            self.stats.bisections += 1
            self.stats.bisect_causes[signature(Outcome.from_dict(result["batch"]))[:160]] += 1
        suspect = result.get("suspect")
        if suspect is not None and 0 <= suspect < len(cases):  # the failure named its member
            rest = [i for i in range(len(cases)) if i != suspect]
            return _in_order(len(cases), [[suspect], rest], [
                self._resolve(worker, [cases[suspect]], backend, bisecting=True),
                self._resolve(worker, [cases[i] for i in rest], backend, bisecting=True)])
        half = len(cases) // 2
        return (self._resolve(worker, cases[:half], backend, bisecting=True)
                + self._resolve(worker, cases[half:], backend, bisecting=True))

    def _count_compile(self, seconds: float, bisecting: bool) -> None:
        with self._stats_lock:
            self.stats.compiles += 1
            if bisecting:
                self.stats.bisect_compiles += 1
                self.stats.bisect_s += seconds
            else:
                self.stats.compile_s += seconds


def _in_order(count: int, groups: list[list[int]], outcomes: list[list[Outcome]]) -> list[Outcome]:
    """Put each group's outcomes back at its cases' original positions."""
    results: list[Outcome | None] = [None] * count
    for indices, group_outcomes in zip(groups, outcomes):
        for index, outcome in zip(indices, group_outcomes):
            results[index] = outcome
    return results  # type: ignore[return-value]
