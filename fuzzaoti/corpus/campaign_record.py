"""A stored campaign as a typed, frozen record (``Corpus.campaign`` and ``Corpus.campaigns`` return it).

The campaigns table keeps its settings, the versions it ran on and its slowest big run as JSON
text; they are parsed here, once, so ``stats``, ``launch --status``, ``coverage`` and a resumed
campaign read fields, not dict keys of a row. Counts that an older corpus's row lacks (a column
a later migration added, NULL there) read as 0.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

#: the count columns, each stored by ``Corpus.update_campaign`` from the campaign's counts
COUNT_COLUMNS = ("batches", "programs", "runs_checked", "runs_skipped", "programs_large", "runs_large",
                 "runs_over_budget", "runs_oom", "runs_directed", "invalid", "failures", "new_findings",
                 "worker_restarts", "quarantined")


@dataclass(frozen=True)
class CampaignRecord:
    id: int
    status: str  # running, finished or interrupted
    device: str
    backend: str
    canary: str  # "" when no canary fault was injected
    seed: int
    started_at: str
    updated_at: str
    finished_at: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # CampaignSettings as stored
    versions: dict[str, Any] = field(default_factory=dict)  # torch, cuda, device name...
    host: str = ""
    pid: int | None = None
    uid: str = ""
    origin: str | None = None  # the shard it was merged from (``fuzzaoti merge``)
    slowest: dict[str, Any] | None = None  # its slowest big run (``campaign.slowest``)
    counts: dict[str, int] = field(default_factory=dict)  # COUNT_COLUMNS

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> CampaignRecord:
        names = {f.name for f in fields(cls)} - {"settings", "versions", "slowest", "counts"}
        return cls(**{k: row[k] for k in names if k in row},
                   settings=json.loads(row.get("settings") or "{}"),
                   versions=json.loads(row.get("versions") or "{}"),
                   slowest=json.loads(row["slowest"]) if row.get("slowest") else None,
                   counts={k: row.get(k) or 0 for k in COUNT_COLUMNS})

    @property
    def minutes(self) -> float:
        """From its start to its end (or its last update, while it runs or after it was killed)."""
        start = datetime.datetime.fromisoformat(self.started_at)
        end = datetime.datetime.fromisoformat(self.finished_at or self.updated_at)
        return max((end - start).total_seconds() / 60, 1e-9)
