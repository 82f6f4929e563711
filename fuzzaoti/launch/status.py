"""What a launch directory holds: each task's campaign (state, programs per minute, findings,
worker restarts) and the merged corpus's totals: ``fuzzaoti launch --status DIR``."""

from __future__ import annotations

import datetime
import os

from fuzzaoti.launch.tasks import LaunchPlan


def _minutes(c: dict) -> float:
    start = datetime.datetime.fromisoformat(c["started_at"])
    end = datetime.datetime.fromisoformat(c.get("finished_at") or c["updated_at"])
    return max((end - start).total_seconds() / 60, 1e-9)


def _line(label: str, campaigns: list[dict], findings: int) -> str:
    programs = sum(c["programs"] or 0 for c in campaigns)
    minutes = sum(_minutes(c) for c in campaigns)
    states = ",".join(sorted({c["status"] for c in campaigns})) or "no campaign yet"
    restarts = sum(c["worker_restarts"] or 0 for c in campaigns)
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
