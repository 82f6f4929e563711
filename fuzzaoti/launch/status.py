"""What a launch directory holds: each task's campaign (state, programs per minute, findings,
worker restarts) and the merged corpus's totals: ``fuzzaoti launch --status DIR``."""

from __future__ import annotations

import os

from fuzzaoti.corpus.campaign_record import CampaignRecord
from fuzzaoti.launch.tasks import LaunchPlan


def _line(label: str, campaigns: list[CampaignRecord], findings: int) -> str:
    programs = sum(c.counts["programs"] for c in campaigns)
    minutes = sum(c.minutes for c in campaigns)
    states = ",".join(sorted({c.status for c in campaigns})) or "no campaign yet"
    restarts = sum(c.counts["worker_restarts"] for c in campaigns)
    return (f"{label}: {states}; {programs} programs in {minutes:.1f} min ({programs / minutes:.1f}/min), "
            f"{findings} findings, {restarts} worker restarts")


def status_lines(corpus_dir: str) -> list[str]:
    """One line per task, then the merged corpus's."""
    from fuzzaoti.corpus import Corpus

    plan = LaunchPlan.load(corpus_dir)
    lines = [f"{corpus_dir}: {plan.tasks} task(s), {plan.executor}, {plan.minutes:g} min each, seed {plan.seed}"]
    for k in range(plan.tasks):
        path = plan.shard_path(k)
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            lines.append(f"  task {k}: not started")
            continue
        with Corpus.open(path) as shard:
            lines.append("  " + _line(f"task {k}", shard.campaigns(), len(shard.findings())))
    if os.path.exists(plan.merged_path):
        with Corpus.open(plan.merged_path) as merged:
            lines.append("  " + _line("merged", merged.campaigns(), len(merged.findings())))
    return lines
