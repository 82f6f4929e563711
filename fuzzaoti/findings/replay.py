"""Re-run stored findings on the torch installed now: one (``replay``), every open one
(``recheck``, which marks those that pass as fixed), and the worker pool a finding is
shrunk or triaged in (``finding_pool``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fuzzaoti import compat
from fuzzaoti.corpus import Corpus
from fuzzaoti.check.outcome import Outcome
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.workers.worker import WorkerConfig
from fuzzaoti.corpus.finding import Finding


@dataclass(frozen=True)
class Replay:
    finding: Finding
    outcome: Outcome
    versions: dict

    @property
    def still_fails(self) -> bool:
        return self.outcome.is_finding

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


def replay(corpus: Corpus, finding_id: int, canary: str | None = None, backend: str = "aoti",
           device: str | None = None) -> Replay:
    """Check finding ``finding_id`` again (its shrunk case if it has one), in a fresh worker."""
    finding = corpus.finding(finding_id)
    pool = WorkerPool(WorkerConfig(device=device or finding.device, backend=backend, canary=canary))
    try:
        (outcome,) = pool.check([finding.case])
    finally:
        pool.close()
    return Replay(finding, outcome, compat.torch_versions())


def recheck(corpus: Corpus, backend: str = "aoti", echo: Callable[[str], None] = print,
            before_each: Callable[[Finding], None] = lambda finding: None) -> tuple[int, int]:
    """Replay every open finding (not canary ones: without their fault they cannot fail) and
    mark those that now pass as fixed. ``before_each`` may refuse a finding (a CUDA one on a
    machine without a GPU). Returns (open findings replayed, now fixed)."""
    open_ids = [f.id for f in corpus.findings() if f.status != "fixed" and not f.canary]
    fixed = 0
    for fid in open_ids:
        before_each(corpus.finding(fid))
        result = replay(corpus, fid, backend=backend)
        echo(result.describe())
        if result.outcome.passed:
            corpus.set_status(fid, "fixed")
            fixed += 1
    return len(open_ids), fixed


def finding_pool(finding: Finding, canary: str | None, backend: str = "aoti",
                 echo: Callable[[str], None] = print) -> WorkerPool:
    """A worker pool on the finding's device, with ``canary`` if given, else the canary the
    finding was found under: without its fault a canary finding cannot fail, so shrinking or
    triaging it would only report that it no longer reproduces."""
    if canary is None and finding.canary:
        canary = finding.canary
        echo(f"finding {finding.id} was found under canary {canary}: installing it (--inject to choose)")
    return WorkerPool(WorkerConfig(device=finding.device, backend=backend, canary=canary))
