"""A pool of workers that checks batches of cases and pins every failure on one case.

A batch is compiled as one merged program. When the merged program fails as a whole (export,
compile or load raised, a run raised, or the worker crashed or hung) the batch is bisected
and each half checked again, down to single cases: a failure only becomes a finding once a
case has shown it on its own.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

from fuzzaoti.outcome import Outcome
from fuzzaoti.strategies import Case
from fuzzaoti.worker import Worker, WorkerConfig


@dataclass
class PoolStats:
    batches: int = 0
    compiles: int = 0
    bisections: int = 0


class WorkerPool:
    def __init__(self, config: WorkerConfig, workers: int = 1,
                 worker_env: Callable[[int], dict[str, str]] | None = None):
        self.workers = [
            Worker(WorkerConfig(**{**config.__dict__, "env": config.env + tuple((worker_env or (lambda k: {}))(k).items())}))
            for k in range(max(1, workers))
        ]
        self.stats = PoolStats()

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
        results: list[Outcome | None] = [None] * len(cases)

        def work(k: int) -> None:
            if chunks[k]:
                chunk = [cases[i] for i in chunks[k]]
                for index, outcome in zip(chunks[k], self._resolve(self.workers[k], chunk, backend)):
                    results[index] = outcome

        with ThreadPoolExecutor(max_workers=n) as executor:
            list(executor.map(work, range(n)))
        return results  # type: ignore[return-value]

    def _resolve(self, worker: Worker, cases: list[Case], backend: str | None = None) -> list[Outcome]:
        groups: dict[tuple, list[int]] = {}
        for index, case in enumerate(cases):
            groups.setdefault(case.program.configs, []).append(index)
        if len(groups) > 1:  # only programs compiled with the same inductor configs can share a module
            results: list[Outcome | None] = [None] * len(cases)
            for indices in groups.values():
                for index, outcome in zip(indices, self._resolve(worker, [cases[i] for i in indices], backend)):
                    results[index] = outcome
            return results  # type: ignore[return-value]
        self.stats.compiles += 1
        job = {
            "backend": backend or worker.config.backend,
            "device": worker.config.device,
            "cases": [{"program": c.program.to_json(), "runs": c.run_dicts()} for c in cases],
        }
        result = worker.check(job)
        if result["batch"] is None:
            return [Outcome.from_dict(o) for o in result["cases"]]
        if len(cases) == 1:
            outcome = Outcome.from_dict(result["batch"])
            if outcome.env is None and len(cases[0].runs) == 1:  # a lone run: we know where it failed
                env, seed = cases[0].runs[0]
                outcome = Outcome(**{**outcome.__dict__, "env": dict(env), "seed": seed})
            return [outcome]
        self.stats.bisections += 1
        half = len(cases) // 2
        return self._resolve(worker, cases[:half], backend) + self._resolve(worker, cases[half:], backend)
