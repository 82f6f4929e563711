"""Re-run stored findings on the torch installed now: one (``replay``), many (``recheck``, which
records each result and moves the statuses: a finding that passes is fixed, a fixed one that
fails again is new), and the worker pool a finding is shrunk or triaged in (``finding_pool``).

What a replay found is kept per torch version and device (the corpus's ``replays`` table), so
``show`` and the report say "fails on 2.11.0+cu130 (cuda, found), passes on 2.13.0+cpu (cpu)".
A replay under a canary is never recorded: its result is the injected fault's, not torch's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from fuzzaoti import compat
from fuzzaoti.check.outcome import Outcome
from fuzzaoti.check.signature import signature
from fuzzaoti.corpus import Corpus
from fuzzaoti.corpus.finding import Finding, ReplayResult
from fuzzaoti.corpus.migrations import now
from fuzzaoti.model.case import Case
from fuzzaoti.model.scale import refuse_unfit
from fuzzaoti.workers.placement import device_budget
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.workers.worker import WorkerConfig


@dataclass(frozen=True)
class Replay:
    finding: Finding
    outcome: Outcome
    versions: dict
    device: str = ""  # where it ran (the finding's own device unless asked otherwise)
    canary: str | None = None

    @property
    def still_fails(self) -> bool:
        return self.outcome.is_finding

    @property
    def result(self) -> str:
        """``fails``, ``passes`` or ``invalid`` (the program is not valid on this torch)."""
        return "fails" if self.still_fails else ("passes" if self.outcome.passed else "invalid")

    def as_result(self) -> ReplayResult:
        """This replay as a row of the corpus's replays table."""
        sig = signature(self.outcome, self.finding.case.program) if self.still_fails else ""
        return ReplayResult(self.versions["torch"], self.device or self.finding.device, self.result, sig,
                            self.versions.get("device_name"), now())

    def describe(self) -> str:
        f, o = self.finding, self.outcome
        verdict = "STILL FAILS" if self.still_fails else ("INVALID here" if o.symptom == "invalid" else "passes")
        lines = [
            f"finding {f.id}: found on torch {f.torch_version} ({f.device}"
            f"{', ' + f.device_name if f.device_name else ''}), replayed on torch {self.versions['torch']}"
            f"{' (' + self.versions['device_name'] + ')' if self.versions.get('device_name') else ''}",
            f"  {verdict}: {o.stage}/{o.symptom} {o.message[:300]}",
        ]
        return "\n".join(lines)


@dataclass(frozen=True)
class StatusChange:
    """A finding whose status a replay moved: ``new``/``known`` to ``fixed``, or back to ``new``."""

    finding_id: int
    before: str
    after: str
    torch_version: str

    def describe(self) -> str:
        why = "passes" if self.after == "fixed" else "fails again (a regression)"
        return f"finding {self.finding_id}: {self.before} -> {self.after}: {why} on torch {self.torch_version}"


def weighed_pool(named: list[tuple[str, Case]], device: str, backend: str, canary: str | None,
                 max_bytes: int | None) -> WorkerPool:
    """A worker pool for cases handed in from outside (a program file, a stored finding), each
    ``(what, case)``: a run over ``max_bytes`` (None: the device's budget) is refused first, before
    anything is allocated, an OverBudget naming its ``what``; the workers keep to that budget."""
    max_bytes = max_bytes or device_budget(device)
    for what, case in named:
        refuse_unfit(case.program, [dict(env) for env, _ in case.runs], max_bytes, what)
    return WorkerPool(WorkerConfig(device=device, backend=backend, canary=canary, max_bytes=max_bytes))


class SharedPools:
    """Worker pools kept for many cases checked one at a time (the pytest plugin's items), one
    pool of one worker per device, backend, canary and byte budget. Each case is still compiled
    and run alone, in a worker process apart from the caller, and a worker that a case crashed,
    hung or left unfit for more work (``fatal_for_process``: a poisoned CUDA context, on a GPU
    any wrong value) is replaced before the next case, as in a campaign. What it saves is a
    fresh worker's start per case: importing torch and Inductor and a first compile's warm-up,
    about 5 s of a 12 s CPU check (on the 2-core CPU a fresh worker imports torch in 2 s, and
    its first compile of a program takes 9 s where the next program's takes 6 s)."""

    def __init__(self) -> None:
        self.pools: dict[tuple, tuple[WorkerPool, int]] = {}  # with the byte budget its worker keeps to

    def check(self, what: str, case: Case, device: str, backend: str, canary: str | None,
              max_bytes: int | None) -> Outcome:
        key = (device, backend, canary, max_bytes)  # (None: the device's budget when the pool was made)
        if key in self.pools:
            pool, budget = self.pools[key]
            refuse_unfit(case.program, [dict(env) for env, _ in case.runs], budget, what)
        else:  # (refused before a pool, its worker or its package directory exists)
            budget = max_bytes or device_budget(device)
            pool = weighed_pool([(what, case)], device, backend, canary, budget)
            self.pools[key] = (pool, budget)
        (outcome,) = pool.check([case])
        return outcome

    def close(self) -> None:
        for pool, _ in self.pools.values():
            pool.close()
        self.pools.clear()


def check_alone(case: Case, device: str, backend: str = "aoti", canary: str | None = None,
                max_bytes: int | None = None, what: str = "the case",
                pools: SharedPools | None = None) -> Outcome:
    """``case`` checked in a worker apart from the caller: a crash, a hang or a device-side
    assert (which poisons the CUDA context of its process) ends that worker, not the caller. A
    run over the budget is refused first (``weighed_pool``). The worker is a fresh one of its
    own, or one of ``pools`` that checked cases before."""
    own = SharedPools() if pools is None else None
    try:
        return (pools or own).check(what, case, device, backend, canary, max_bytes)
    finally:
        if own is not None:
            own.close()


def replay_finding(finding: Finding, canary: str | None = None, backend: str = "aoti",
                   device: str | None = None, max_bytes: int | None = None,
                   pools: SharedPools | None = None) -> Replay:
    """Check ``finding`` again (its shrunk case if it has one), in a worker apart (``check_alone``)."""
    device = device or finding.device
    outcome = check_alone(finding.case, device, backend, canary, max_bytes, f"finding {finding.id}", pools)
    return Replay(finding, outcome, compat.torch_versions(), device, canary)


def replay(corpus: Corpus, finding_id: int, canary: str | None = None, backend: str = "aoti",
           device: str | None = None, max_bytes: int | None = None) -> Replay:
    """Check finding ``finding_id`` again, in a fresh worker."""
    return replay_finding(corpus.finding(finding_id), canary, backend, device, max_bytes)


def settle(corpus: Corpus, done: Replay) -> StatusChange | None:
    """Record ``done`` on its finding (not a canary replay, nor one on another device than the
    finding's: that tells nothing of this finding's fix) and move its status: an open finding
    that passes is ``fixed``; a fixed one that fails again is ``new``, a regression."""
    f = done.finding
    if done.canary or done.device != f.device:
        return None
    corpus.record_replay(f.id, done.as_result())
    if done.result == "passes" and f.status != "fixed":
        after = "fixed"
    elif done.result == "fails" and f.status == "fixed":
        after = "new"
    else:
        return None
    corpus.set_status(f.id, after)
    return StatusChange(f.id, f.status, after, done.versions["torch"])


@dataclass
class Rechecked:
    """What ``recheck`` did: findings replayed, and the status changes it made."""

    replayed: int = 0
    changes: list[StatusChange] = field(default_factory=list)

    def describe(self) -> str:
        fixed = sum(c.after == "fixed" for c in self.changes)
        return (f"rechecked {self.replayed} findings: {fixed} now pass and are marked fixed, "
                f"{len(self.changes) - fixed} fail again and are marked new")


def recheck(corpus: Corpus, backend: str = "aoti", echo: Callable[[str], None] = print,
            before_each: Callable[[Finding], None] = lambda finding: None,
            ids: Iterable[int] = ()) -> Rechecked:
    """Replay findings ``ids``, or else every one not found under a canary (open and fixed:
    without their fault canary findings cannot fail), record each result and move the statuses
    (``settle``). ``before_each`` may refuse a finding (a CUDA one on a machine without a GPU)."""
    chosen = [corpus.finding(fid) for fid in ids] or [f for f in corpus.findings() if not f.canary]
    done, pools = Rechecked(), SharedPools()
    try:
        for finding in chosen:
            before_each(finding)
            result = replay_finding(finding, backend=backend, pools=pools)
            echo(result.describe())
            done.replayed += 1
            change = settle(corpus, result)
            if change is not None:
                echo("  " + change.describe())
                done.changes.append(change)
    finally:
        pools.close()
    return done


def finding_pool(finding: Finding, canary: str | None, backend: str = "aoti",
                 echo: Callable[[str], None] = print) -> WorkerPool:
    """A worker pool on the finding's device, with ``canary`` if given, else the canary the
    finding was found under: without its fault a canary finding cannot fail, so shrinking or
    triaging it would only report that it no longer reproduces."""
    if canary is None and finding.canary:
        canary = finding.canary
        echo(f"finding {finding.id} was found under canary {canary}: installing it (--inject to choose)")
    return WorkerPool(WorkerConfig(device=finding.device, backend=backend, canary=canary))
