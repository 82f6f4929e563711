"""A pool of workers that checks batches of cases and pins every failure on one case.

A batch is compiled as one merged program. When the merged program fails as a whole (export,
compile or load raised, a run raised, or the worker crashed or hung) the batch is bisected
and each half checked again, down to single cases (a group of at most four whose worker died,
each member alone at once): a failure only becomes a finding once a case has shown it on its own. When the failure's traceback points into one member's code (the
worker names that member the suspect), the suspect is checked alone and the rest together:
two compiles instead of a bisection's 2·log2(n); and when that failure came in a run, after the
group compiled and loaded, the rest is checked from the group's package, loaded by a fresh
worker: one compile, the suspect's alone. When a run raised and left the process sound,
the worker feeds each member alone to find the ones that raise (milliseconds a probe), and
the batch goes on without them: one compile each, alone, and none for the rest. All workers take these compiles from one
queue, so bisecting one worker's failed share does not leave the others idle, and a campaign
queues its next batch before the current one is done, so no worker waits at batch boundaries.
"""

from __future__ import annotations

import heapq
import itertools
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple, Sequence

from fuzzaoti.check.outcome import Outcome
from fuzzaoti.check.signature import signature
from fuzzaoti.coverage.record import Reached
from fuzzaoti.model.case import Case
from fuzzaoti.model.ops import INDIRECT
from fuzzaoti.workers.pool_stats import PoolStats, configs_label
from fuzzaoti.workers.leftovers import sweep_leftovers_of_dead_pools
from fuzzaoti.workers.protocol import Job
from fuzzaoti.workers.standby import Standbys
from fuzzaoti.workers.worker import Worker, WorkerConfig


class Submitted:
    """A batch handed to the pool: its outcomes fill in as its groups finish, in any order.

    ``worker_s`` is the worker time the batch took (its bisection included): with batches
    queued back to back, the time from submit to done also holds the wait behind the batch
    before it, so the adaptive batch size learns from this instead."""

    def __init__(self, cases: Sequence[Case], backend: str | None, priority: int, stop_at: float | None = None):
        self.cases, self.backend, self.priority, self.stop_at = list(cases), backend, priority, stop_at
        self.results: list[Outcome | None] = [None] * len(self.cases)
        self.open_groups = 0
        self.worker_s = 0.0
        self.troubled = False  # a group was split: bisected, or its suspect or pinned members checked apart
        self.blind = False  # a group's failure was pinned on no member: split in halves (``_attempt``)
        self.cancelled = False  # its groups still queued are dropped (a campaign at its deadline)
        self.error: BaseException | None = None
        self._done = threading.Event()

    def outcomes(self, waiting: Callable[[], None] = lambda: None,
                 until: float | None = None) -> list[Outcome | None]:
        """Wait for every outcome (same order as the cases); re-raises a pool error.
        ``waiting`` is called twice a second meanwhile (a campaign's progress line); past the
        monotonic time ``until`` the outcomes not in yet are given as None (never checked)."""
        while not self.wait(0.5):  # a short wait, so a Ctrl-C is seen at once
            waiting()
            if until is not None and time.monotonic() >= until:
                break
        if self.error is not None:
            raise self.error
        return list(self.results)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for every outcome; whether they are all in."""
        return self._done.wait(seconds)

    def cancel(self) -> None:
        """Check no more of this batch: its groups still queued (a bisection's parts, say) are
        dropped, and the outcomes they would have given stay None. Groups being checked finish."""
        self.cancelled = True


@dataclass(order=True)
class _Group:
    """One compile on the shared queue: urgent batches first, then a batch's bisection parts
    before fresh groups (a failed batch is pinned before more work piles up); fresh groups FIFO,
    bisection parts newest first (depth-first: the parts of a part that failed again come before
    its sibling, so the first failure is pinned after log2(n) compiles, not after the whole
    level above it), the parts of one split in the order ``_split`` gives them.

    ``package`` is the directory its merged program is compiled into. A group with members
    to ``exclude`` (positions in ``indices``) is the rest of a failed group, loaded from that
    group's package: those members are compiled in it but not checked."""

    rank: tuple[int, int, int]
    batch: Submitted = field(compare=False)
    indices: list[int] = field(compare=False)
    bisecting: bool = field(compare=False)
    package: str = field(default="", compare=False)
    exclude: tuple[int, ...] = field(default=(), compare=False)
    alone: bool = field(default=False, compare=False)  # a quarantined program, compiled on its own


class _Part(NamedTuple):
    """What of a failed group is checked next: ``positions`` of its cases, compiled afresh; or,
    with members to ``exclude``, all of them again from the group's package (``reload``), the
    excluded ones not checked."""

    positions: list[int]
    exclude: tuple[int, ...] = ()

    @property
    def reload(self) -> bool:
        return bool(self.exclude)


URGENT, QUEUED = 0, 1


class WorkerPool:
    """Workers fed from one queue of compile groups by one thread each.

    ``submit`` returns at once, so a campaign hands over its next batch while the last groups
    of the current one still compile: no worker idles at a batch boundary waiting for the
    slowest group (measured on the H200 before this: the batch barrier left workers idle).
    ``check`` (shrinking, triage, replay) jumps the queue and waits."""

    def __init__(self, config: WorkerConfig, workers: int = 1,
                 worker_env: Callable[[int], dict[str, str]] | None = None, standby: bool = False):
        extra_env = worker_env or (lambda k: {})
        # standby: a warm spare process per worker environment replaces a retired worker
        self.standbys = Standbys() if standby else None
        self.workers = [Worker(replace(config, env=config.env + tuple(extra_env(k).items())), self.standbys)
                        for k in range(max(1, workers))]
        self.stats = PoolStats()
        self._stats_lock = threading.Lock()  # workers' threads add to the stats
        self._internal_errors: set[str] = set()  # harness failures already printed (``_report_internal_error``)
        self.reached = Reached()  # Inductor lines the compiles ran (workers started with coverage)
        self.checked = [0] * len(self.workers)  # programs each worker has checked
        self._queue: list[_Group] = []  # a heap
        self._seq = itertools.count()
        sweep_leftovers_of_dead_pools()
        self._packages = tempfile.mkdtemp(prefix=f"fuzzaoti-packages-{os.getpid()}-")  # one directory per group...
        self._package_users: Counter = Counter()  # ...removed once no queued group needs it
        self._state = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._busy = 0  # workers checking a group
        self._closing = False

    @property
    def restarts(self) -> int:
        return sum(max(w.restarts, 0) for w in self.workers)

    def launch(self) -> None:
        """Spawn the worker processes not yet spawned, without waiting for them (each imports
        torch: seconds apiece), so the caller can set itself up meanwhile; ``start`` waits."""
        for w in self.workers:
            if w.process is None:
                w.launch()

    def start(self) -> None:
        """Start every worker process at once (``launch``) and wait until each is ready."""
        self.launch()
        for w in self.workers:
            w.wait_ready()

    def close(self) -> None:
        with self._state:
            self._closing = True
            self._state.notify_all()
        for w in self.workers:
            w.close()
        if self.standbys is not None:
            self.standbys.close()
        for t in self._threads:
            t.join(timeout=10)
        shutil.rmtree(self._packages, ignore_errors=True)

    def check(self, cases: Sequence[Case], backend: str | None = None, alone: Sequence[int] = ()) -> list[Outcome]:
        """Outcomes for ``cases`` (same order), ahead of any queued batch; see ``submit``."""
        return self.submit(cases, backend, alone, priority=URGENT).outcomes()

    def submit(self, cases: Sequence[Case], backend: str | None = None, alone: Sequence[int] = (),
               priority: int = QUEUED, stop_at: float | None = None) -> Submitted:
        """Queue ``cases`` for the workers and return at once.

        ``backend`` overrides the workers' own for this batch (the triage ladder uses it);
        the cases at indices ``alone`` are each compiled on their own (quarantined programs).
        A group that fails as a whole is split and its parts go back on the queue, so a
        worker that is done with its share helps bisect another's failure. Past ``stop_at``
        (wall-clock, ``Job.stop_at``) a worker answers with what its group has checked;
        a bisection's part goes on (a failure being pinned is saved whole if it is cut)."""
        batch = Submitted(cases, backend, priority, stop_at)
        groups = _groups(cases, set(alone), len(self.workers))
        with self._stats_lock:
            self.stats.batches += 1
        with self._state:
            if self._closing:
                raise RuntimeError("the worker pool is closed")
            batch.open_groups = len(groups)
            for indices in groups:
                self._push(batch, indices, bisecting=False, alone=len(indices) == 1 and indices[0] in alone)
            if not groups:
                batch._done.set()
            self._state.notify_all()
            if not self._threads:
                self._threads = [threading.Thread(target=self._serve, args=(k,), name=f"fuzzaoti-worker{k}",
                                                  daemon=True) for k in range(len(self.workers))]
                for t in self._threads:
                    t.start()
        return batch

    def _push(self, batch: Submitted, indices: list[int], bisecting: bool, package: str | None = None,
              exclude: tuple[int, ...] = (), alone: bool = False) -> None:
        """Queue a group (under ``_state``): a new package directory unless it reloads one."""
        seq = next(self._seq)
        package = package or os.path.join(self._packages, str(seq))
        self._package_users[package] += 1
        heapq.heappush(self._queue, _Group((batch.priority, 0, -seq) if bisecting else (batch.priority, 1, seq),
                                           batch, indices, bisecting, package, exclude, alone))

    def _requeue(self, batch: Submitted, group: _Group, parts: list[_Part]) -> None:
        """Queue the parts of a failed ``group`` (under ``_state``), the last first: bisection
        parts are taken newest first, so the first part ``_split`` gives is taken first."""
        for part in reversed(parts):
            self._push(batch, [group.indices[j] for j in part.positions], bisecting=True,
                       package=group.package if part.reload else None, exclude=part.exclude)

    def _done_with(self, group: _Group) -> None:
        """The group is filed (under ``_state``): its package goes once no queued group reloads it."""
        self._package_users[group.package] -= 1
        if self._package_users[group.package] <= 0:
            del self._package_users[group.package]
            shutil.rmtree(group.package, ignore_errors=True)

    @property
    def starving(self) -> bool:
        """Whether a worker has nothing to take: the queue is empty and not every worker is busy
        (a campaign then queues another batch rather than wait for its oldest to be done)."""
        with self._state:
            return not self._queue and self._busy < len(self.workers)

    def _serve(self, k: int) -> None:
        """Worker k's thread: take the first group on the queue, check it, file the outcome."""
        while True:
            with self._state:
                while not self._queue and not self._closing:
                    self._state.wait()
                if self._closing:
                    return
                group = heapq.heappop(self._queue)
                self._busy += 1
            try:
                self._serve_group(k, group)
            finally:
                with self._state:
                    self._busy -= 1

    def _serve_group(self, k: int, group: _Group) -> None:
        batch, indices = group.batch, group.indices
        if batch.error is not None:  # another group of this batch already failed the pool
            with self._state:
                self._done_with(group)
            return
        if batch.cancelled:
            with self._state:
                self._done_with(group)
                batch.open_groups -= 1
                if batch.open_groups == 0:
                    batch._done.set()
            return
        try:
            outcomes, parts, seconds, blind = self._attempt(self.workers[k], [batch.cases[i] for i in indices],
                                                            batch.backend, group.bisecting, group.package,
                                                            group.exclude, None if group.bisecting else batch.stop_at,
                                                            group.alone)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the batch
            with self._state:
                self._done_with(group)
                batch.error = exc
                batch._done.set()
            return
        with self._state:
            batch.worker_s += seconds
            batch.troubled |= bool(parts)
            batch.blind |= blind
            if outcomes is not None:  # (a member pinned by its fault has an outcome now and a part)
                for index, outcome in zip(indices, outcomes):
                    if outcome is not None:
                        batch.results[index] = outcome
                requeued = {indices[j] for part in parts for j in part.positions if j not in part.exclude}
                self.checked[k] += sum(o is not None and i not in requeued for i, o in zip(indices, outcomes))
            if batch.cancelled:
                parts = []
            self._requeue(batch, group, parts)
            self._done_with(group)
            batch.open_groups += len(parts) - 1
            if batch.open_groups == 0:
                batch._done.set()
            self._state.notify_all()

    def describe(self) -> str:
        """What the pool's time went to (``PoolStats``), after its worker restarts and how many
        of them a warm standby served."""
        warm = f", {self.standbys.handed_out} of them by a warm standby" if self.standbys is not None else ""
        return f"{self.restarts} worker restarts{warm}; {self.stats.describe()}"

    def describe_workers(self) -> str:
        """Per worker (its GPU on cuda): programs checked and restarts, for progress lines."""
        parts = []
        for k, w in enumerate(self.workers):
            gpu = dict(w.config.env).get("CUDA_VISIBLE_DEVICES")
            label = f"worker{k}" + (f"@gpu{gpu}" if gpu is not None else "")
            doing = f", {w.stage.spoken()} for {time.monotonic() - w.stage_since:.0f} s" if w.stage else ""
            parts.append(f"{label}: {self.checked[k]} programs, {max(w.restarts, 0)} restarts{doing}")
        return "; ".join(parts)

    def _report_internal_error(self, outcome: Outcome) -> None:
        """Print a fuzzaoti bug's traceback on stderr, once per signature: a failure of the
        harness itself, which a batch's bisection may never pin on one member (it needs the
        others beside it) and so never becomes a finding."""
        key = signature(outcome)
        with self._stats_lock:
            if key in self._internal_errors:
                return
            self._internal_errors.add(key)
        sys.stderr.write(f"fuzzaoti internal error (a fuzzaoti bug: please report it with this trace):\n"
                         f"{outcome.stderr.rstrip()}\n")

    def _attempt(self, worker: Worker, cases: list[Case], backend: str | None, bisecting: bool,
                 package: str | None = None, exclude: tuple[int, ...] = (), stop_at: float | None = None,
                 alone: bool = False) -> tuple[list[Outcome | None] | None, list[_Part], float, bool]:
        """Check one group (shared configs) as one compile: its outcomes, or, when it failed as
        a whole, the parts to check next (``_split``), with the outcome of a member its worker's
        fault pinned (``BatchResult.pinned``: found at once, its part confirms it compiled
        alone); the seconds it took; and whether it was
        split blind, in halves (a bisection, whose compiles grow with the group, where a named
        suspect costs two whatever its size). Members the worker pinned without failing the
        group have no outcome yet (None) and a part of their own each; so do the ``exclude``d
        members of a group reloaded from ``package`` (their own parts settle them). An ``alone``
        group (a quarantined program) is counted apart in the stats."""
        job = Job(backend or worker.config.backend, worker.config.device, tuple(cases), worker.config.max_bytes,
                  package, exclude, stop_at)
        started = time.monotonic()
        result = worker.check(job)
        seconds = time.monotonic() - started
        self.reached.add(result.coverage, result.decisions, result.program_decisions)
        if worker.closed:  # the pool closed it mid-check (the campaign's end): its death is no
            # crash of these cases, and their outcome is no one's (a summary had counted the
            # SIGKILL of the close as a batch failed by "out of memory?")
            return [None] * len(cases), [], seconds, False
        judged = [k for k in range(len(cases)) if k not in exclude]
        checked = len(judged) if result.cases is None else sum(result.cases[k] is not None for k in judged)
        with self._stats_lock:  # (a member the deadline came before is not checked)
            self.stats.add(seconds, bisecting, result.seconds, configs_label(cases[0].program.configs), checked,
                           reloaded=bool(exclude), alone=alone)
        if result.batch is None:  # pinned members (a run raised in them alone) are checked alone
            recheck = [k for k in result.recheck if k in judged] if len(judged) > 1 else []
            outcomes = [None if k in recheck or k in exclude else o for k, o in enumerate(result.cases)]
            if recheck:
                with self._stats_lock:
                    self.stats.rechecks += len(recheck)
            return outcomes, [_Part([k]) for k in recheck], seconds, False
        if len(judged) == 1 and not exclude:  # compiled alone: the failure is this case's
            outcome = result.batch
            if outcome.env is None and len(cases[0].runs) == 1:  # a lone run: we know where it failed
                env, seed = cases[0].runs[0]
                outcome = replace(outcome, env=dict(env), seed=seed)
            return [outcome], [], seconds, False
        if result.batch.stage == "harness":
            self._report_internal_error(result.batch)
        if len(judged) > 1:
            with self._stats_lock:
                self.stats.bisections += 1
                self.stats.bisect_causes[signature(result.batch)[:160]] += 1
        parts, blind = _split(result, judged, cases, exclude)
        if result.pinned and result.suspect in judged:  # known to fail: a finding now, confirmed alone
            return [result.batch if k == result.suspect else None for k in range(len(cases))], parts, seconds, blind
        return None, parts, seconds, blind


def _split(result, judged: list[int], cases: Sequence[Case], exclude: tuple[int, ...]) -> tuple[list[_Part], bool]:
    """The parts of a group (its ``cases``, the ``judged`` ones checked) that failed as a whole,
    and whether they are a blind split. A failure in one checked member is confirmed with that
    member compiled alone: the suspect the failure named, or the one member a reloaded group
    checked. When the suspect failed in a run, the group had compiled and loaded and the other
    members' runs had gone through its package: the rest is checked from that package again
    (``_Part.reload``), the suspect fed its examples there, as in every run but its own big
    ones. But where the worker died of a fault in the suspect's kernel code (``faulted``), that
    code runs in every call, examples or not: the rest is compiled afresh without it, as it is
    when a reloaded group dies in the code of a member it set aside. A failure pinned on no
    member is halved, each half compiled afresh; a small group whose worker died, member by
    member (``ALONE_AFTER_DEATH``); a death's parts hold the likeliest culprits first
    (``death_order``), so with the queue's depth-first order a finding is stored as soon as one
    member dies alone."""
    size = len(cases)
    if result.faulted and result.suspect in exclude:
        return [_Part(list(judged))], False
    suspect = result.suspect if result.suspect in judged else None
    if suspect is None and len(judged) == 1:
        suspect = judged[0]
    if suspect is not None:
        rest = [k for k in judged if k != suspect]
        if not rest:
            return [_Part([suspect])], False
        if result.batch.stage in ("run", "compare") and not result.faulted:
            return [_Part([suspect]), _Part(list(range(size)), tuple(sorted({*exclude, suspect})))], False
        return [_Part([suspect]), _Part(rest)], False
    if result.batch.symptom in _DEATHS:  # the likeliest culprits first, in the first half
        judged = death_order(cases, judged)
        if len(judged) <= ALONE_AFTER_DEATH:
            return [_Part([k]) for k in judged], True
    half = len(judged) // 2
    return [_Part(judged[:half]), _Part(judged[half:])], True


#: a worker that died (or hung) in a group of at most this many members pinned on none has each
#: member compiled alone, not halved: a compile's cost is mostly fixed (on the CPU one program 5.5
#: s, 16 11.5 s), so a half costs about as much as a member alone, and each half that dies costs a
#: worker restart more before the member is pinned (a first batch of 4 that segfaulted was pinned
#: after three compiles and two restarts)
ALONE_AFTER_DEATH = 4
_DEATHS = ("crash", "illegal_memory_access", "timeout")


def death_order(cases: Sequence[Case], judged: list[int]) -> list[int]:
    """The ``judged`` members of a group whose worker died, in the order they are compiled alone:
    most nodes that address memory through data first (``ops.INDIRECT``: a death in generated code
    is a wild access, and theirs are the accesses a missing bounds check lets run wild), the
    group's order among equals. Each member tried alone that does not die costs a compile and
    each that does a cold restart (on the CPU about 5 s each, ``scripts/bench_restart.py``), so
    the likeliest goes first; in a group too big to try member by member, the half holding them
    is the one split again first."""
    def indirect(k: int) -> int:
        return sum(node.op in INDIRECT for node in cases[k].program.nodes)
    return sorted(judged, key=lambda k: -indirect(k))


def _groups(cases: Sequence[Case], alone: set[int], workers: int) -> list[list[int]]:
    """The first compiles of a batch: cases that share compile configs (only those can share a
    module), each case in ``alone`` on its own, cut into parts of at most an even share per worker."""
    by_key: dict[tuple, list[int]] = {}
    for index, case in enumerate(cases):
        by_key.setdefault((case.program.configs, index if index in alone else -1), []).append(index)
    share = max(1, -(-len(cases) // max(workers, 1)))
    return [group[i:i + share] for group in by_key.values() for i in range(0, len(group), share)]
