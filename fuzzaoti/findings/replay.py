"""Re-run a stored finding on the torch installed now."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzaoti import compat
from fuzzaoti.corpus import Corpus
from fuzzaoti.check.outcome import Outcome
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.findings.repro import finding_case
from fuzzaoti.workers.worker import WorkerConfig


@dataclass(frozen=True)
class Replay:
    finding: dict
    outcome: Outcome
    versions: dict

    @property
    def still_fails(self) -> bool:
        return self.outcome.is_finding

    def describe(self) -> str:
        f, o = self.finding, self.outcome
        verdict = "STILL FAILS" if self.still_fails else ("INVALID here" if o.symptom == "invalid" else "passes")
        lines = [
            f"finding {f['id']}: found on torch {f['torch_version']} ({f['device']}"
            f"{', ' + f['device_name'] if f['device_name'] else ''}), replayed on torch {self.versions['torch']}"
            f"{' (' + self.versions['device_name'] + ')' if self.versions.get('device_name') else ''}",
            f"  {verdict}: {o.stage}/{o.symptom} {o.message[:300]}",
        ]
        return "\n".join(lines)


def replay(corpus: Corpus, finding_id: int, canary: str | None = None, backend: str = "aoti",
           device: str | None = None) -> Replay:
    """Check finding ``finding_id`` again (its shrunk case if it has one), in a fresh worker."""
    finding = corpus.finding(finding_id)
    pool = WorkerPool(WorkerConfig(device=device or finding["device"], backend=backend, canary=canary))
    try:
        (outcome,) = pool.check([finding_case(finding)])
    finally:
        pool.close()
    return Replay(finding, outcome, compat.torch_versions())
