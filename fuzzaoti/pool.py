"""A pool of workers that checks batches of cases and pins every failure on one case.

A batch is compiled as one merged program. When the merged program fails as a whole (export,
compile or load raised, a run raised, or the worker crashed or hung) the batch is bisected
and each half checked again, down to single cases: a failure only becomes a finding once a
case has shown it on its own. When the failure's traceback points into one member's code (the
worker names that member the suspect), the suspect is checked alone and the rest together:
two compiles instead of a bisection's 2·log2(n). All workers take these compiles from one
queue, so bisecting one worker's failed share does not leave the others idle.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
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
    stage_s: Counter = field(default_factory=Counter)  # worker-seconds per stage (eager, export, compile, ...)
    configs_s: Counter = field(default_factory=Counter)  # worker-seconds per compile config set, bisection included
    configs_programs: Counter = field(default_factory=Counter)  # programs checked per config set

    def add(self, seconds: float, bisecting: bool, stages: dict[str, float], configs: str, programs: int) -> None:
        self.compiles += 1
        if bisecting:
            self.bisect_compiles += 1
            self.bisect_s += seconds
        else:
            self.compile_s += seconds
            self.configs_programs[configs] += programs
        self.configs_s[configs] += seconds
        self.stage_s.update(stages)

    def describe(self) -> str:
        total = self.compile_s + self.bisect_s
        causes = ", ".join(f"{n}x {cause}" for cause, n in self.bisect_causes.most_common(3))
        staged = sum(self.stage_s.values())
        stages = ", ".join(f"{stage} {100 * s / staged:.0f}%" for stage, s in self.stage_s.most_common())
        per_program = ", ".join(f"{configs} {s / max(self.configs_programs[configs], 1):.1f} s"
                                for configs, s in self.configs_s.most_common())
        return (f"{self.compiles} compiles, {self.bisect_compiles} of them bisecting failed batches "
                f"({100 * self.bisect_s / total if total else 0:.0f}% of worker time)"
                + (f"; batches failed with: {causes}" if causes else "")
                + (f"; worker time by stage: {stages}" if stages else "")
                + (f"; worker-seconds per program by configs: {per_program}" if per_program else ""))


def configs_label(configs: tuple) -> str:
    """A short name for a program's compile configs in statistics: ``default`` or the keys."""
    return "+".join(key for key, _ in configs) or "default"


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

    def check(self, cases: Sequence[Case], backend: str | None = None, alone: Sequence[int] = ()) -> list[Outcome]:
        """Outcomes for ``cases`` (same order), spreading them over the workers.

        ``backend`` overrides the workers' own for this call (the triage ladder uses it);
        the cases at indices ``alone`` are each compiled on their own (quarantined programs).

        The work is a queue of groups shared by all workers: a group that fails as a whole is
        split and its parts go back on the queue, so a worker that is done with its share helps
        bisect another's failure instead of idling until the batch ends."""
        self.stats.batches += 1
        results: list[Outcome | None] = [None] * len(cases)
        queue: deque[tuple[list[int], bool]] = deque(
            (group, False) for group in _groups(cases, set(alone), len(self.workers)))
        state = threading.Condition()
        busy, errors = [0], []

        def serve(k: int) -> None:
            while True:
                with state:
                    while not queue and busy[0] and not errors:
                        state.wait()
                    if not queue or errors:
                        return
                    indices, bisecting = queue.popleft()
                    busy[0] += 1
                try:
                    outcomes, parts = self._attempt(self.workers[k], [cases[i] for i in indices], backend, bisecting)
                except BaseException as exc:  # noqa: BLE001 - re-raised by check() once every thread stopped
                    outcomes, parts = None, []
                    errors.append(exc)
                with state:
                    busy[0] -= 1
                    if outcomes is not None:
                        for index, outcome in zip(indices, outcomes):
                            results[index] = outcome
                        self.checked[k] += len(indices)
                    queue.extend(([indices[j] for j in part], True) for part in parts)
                    state.notify_all()

        with ThreadPoolExecutor(max_workers=len(self.workers)) as executor:
            list(executor.map(serve, range(len(self.workers))))
        if errors:
            raise errors[0]
        return results  # type: ignore[return-value]

    def describe_workers(self) -> str:
        """Per worker (its GPU on cuda): programs checked and restarts, for progress lines."""
        parts = []
        for k, w in enumerate(self.workers):
            gpu = dict(w.config.env).get("CUDA_VISIBLE_DEVICES")
            label = f"worker{k}" + (f"@gpu{gpu}" if gpu is not None else "")
            parts.append(f"{label}: {self.checked[k]} programs, {max(w.restarts, 0)} restarts")
        return "; ".join(parts)

    def _attempt(self, worker: Worker, cases: list[Case], backend: str | None,
                 bisecting: bool) -> tuple[list[Outcome] | None, list[list[int]]]:
        """Check one group (shared configs) as one compile: its outcomes, or, when it failed as
        a whole, the parts to check next (the suspect alone and the rest, else two halves)."""
        job = {
            "backend": backend or worker.config.backend,
            "device": worker.config.device,
            "cases": [{"program": c.program.to_json(), "runs": c.run_dicts()} for c in cases],
        }
        started = time.monotonic()
        result = worker.check(job)
        with self._stats_lock:
            self.stats.add(time.monotonic() - started, bisecting, result.get("seconds") or {},
                           configs_label(cases[0].program.configs), len(cases))
        if result["batch"] is None:
            return [Outcome.from_dict(o) for o in result["cases"]], []
        if len(cases) == 1:
            outcome = Outcome.from_dict(result["batch"])
            if outcome.env is None and len(cases[0].runs) == 1:  # a lone run: we know where it failed
                env, seed = cases[0].runs[0]
                outcome = replace(outcome, env=dict(env), seed=seed)
            return [outcome], []
        with self._stats_lock:
            self.stats.bisections += 1
            self.stats.bisect_causes[signature(Outcome.from_dict(result["batch"]))[:160]] += 1
        suspect = result.get("suspect")
        if suspect is not None and 0 <= suspect < len(cases):  # the failure named its member
            return None, [[suspect], [i for i in range(len(cases)) if i != suspect]]
        half = len(cases) // 2
        return None, [list(range(half)), list(range(half, len(cases)))]


def _groups(cases: Sequence[Case], alone: set[int], workers: int) -> list[list[int]]:
    """The first compiles of a batch: cases that share compile configs (only those can share a
    module), each case in ``alone`` on its own, cut into parts of at most an even share per worker."""
    by_key: dict[tuple, list[int]] = {}
    for index, case in enumerate(cases):
        by_key.setdefault((case.program.configs, index if index in alone else -1), []).append(index)
    share = max(1, -(-len(cases) // max(workers, 1)))
    return [group[i:i + share] for group in by_key.values() for i in range(0, len(group), share)]
