"""Standby workers: one spare process per worker environment, started and warmed before it is needed.

A GPU worker is retired after every illegal memory access and every wrong value (its CUDA
context is poisoned, or a kernel may have written where it should not), and in the large
profile that is routine: a 5-minute H100 campaign (seed 1205, 3 workers) replaced workers 5
times. A fresh process pays a cold start in its first compile (Inductor's compile pool,
Triton's and CUDA's set-up, the first C++ build): the restarted workers' compiles ran 40 to 60 s
where a warm process alone compiled 8 large programs as one module in 10.4 s
(``scripts/bench_compile.py``); on the 2-core CPU the check after a crash takes 10.4 s cold and
5.4 s warm (``scripts/bench_restart.py``). A standby imports torch and compiles a tiny
program while the others work, so a retired worker is replaced by a warm process at once,
and the next standby warms in the background.

Spares are shared by the workers of one ``WorkerConfig`` (on a GPU node: one per GPU, as
``CUDA_VISIBLE_DEVICES`` is part of it). The first is started after a worker finishes its
first batch, not with the pool, so it does not slow the campaign's own cold start.
"""

from __future__ import annotations

import threading

from fuzzaoti.model.case import Case
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program
from fuzzaoti.workers.protocol import Job
from fuzzaoti.workers.worker import Worker

#: what a standby compiles to warm itself: one pointwise op over a dynamic dim, which no canary
#: patches (a canary that broke it would only cost the spare: the slot then starts cold)
WARM_UP = Program(
    dims=(DimSpec("d0", 2, 64, 8),),
    inputs=(InputSpec("x0", "float32", ("d0", 4)),),
    nodes=(Node("t0", "affine", ("x0",), (("scale", 2.0), ("shift", 1.0))),),
    outputs=("t0",),
).validate()


def warm_up_job(config) -> Job:
    """The job a standby checks before it is handed out: ``WARM_UP`` at one small size."""
    return Job(config.backend, config.device, (Case(WARM_UP, (((("d0", 5),), 0),)),), config.max_bytes)


#: the longest a restarting worker waits for a spare still warming (a fresh H100 campaign's first
#: batch, its cold starts included, took 106 s: a spare begun earlier is warm well before, unless
#: its warm-up hangs)
TAKE_WAIT_S = 120.0


class _Spare:
    """A worker being started and warmed on its own thread."""

    def __init__(self, worker):
        self.worker = worker
        self.warmed = False
        self.thread = threading.Thread(target=self._warm, name="fuzzaoti-standby", daemon=True)
        self.thread.start()

    def _warm(self) -> None:
        try:  # (a spare closed meanwhile refuses to start again: WorkerDied)
            self.worker.start()
            result = self.worker.check(warm_up_job(self.worker.config))
            self.warmed = result.batch is None
        except Exception:  # noqa: BLE001 - a spare that fails to start is simply not used
            self.warmed = False
        if not self.warmed:
            self.worker.kill()


class Standbys:
    """The spare workers of a pool, one per ``WorkerConfig``."""

    def __init__(self):
        self._lock = threading.Lock()
        self._spares: dict = {}
        self._closed = False
        self.handed_out = 0  # replacements that came warm from a standby

    def refill(self, config) -> None:
        """Start warming a spare for ``config`` unless one is there already."""
        with self._lock:
            if self._closed or config in self._spares:
                return
            self._spares[config] = _Spare(Worker(config))  # a spare keeps no standbys of its own

    def settle(self) -> None:
        """Wait until every spare has started and warmed (or failed to): for benchmarks."""
        with self._lock:
            spares = list(self._spares.values())
        for spare in spares:
            spare.thread.join()

    def take(self, config, wait_s: float = TAKE_WAIT_S):
        """A started, warmed worker for ``config``, or None (none was made, it failed to warm,
        or it is still not warm after ``wait_s``: a warm-up that hangs must not hold a restart
        for the compile timeout). One still warming is waited for: it began before a cold start
        would."""
        with self._lock:
            spare = self._spares.pop(config, None)
        if spare is None:
            return None
        spare.thread.join(wait_s)
        if spare.thread.is_alive() or not (spare.warmed and spare.worker.alive()):
            spare.worker.close()
            return None
        with self._lock:
            self.handed_out += 1
        return spare.worker

    def close(self) -> None:
        with self._lock:
            self._closed = True
            spares, self._spares = list(self._spares.values()), {}
        for spare in spares:
            spare.worker.close()  # ends a warm-up under way: its thread sees the pipe close
            spare.thread.join(timeout=10)
