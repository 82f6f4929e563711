"""Shard corpora merged into one: what a campaign spread over many tasks (Slurm, or processes on
one machine) leaves behind, one node-local SQLite file per task (SQLite over NFS is unsafe).

A finding is one finding wherever it was hit: findings are matched by their key (signature,
device, canary), their hits added, first and last seen widened, the smaller shrunk program
kept with its triage, and a status other than ``new`` kept over ``new``. Campaigns are carried
over with the shard they came from (``origin``). Everything is matched by ``uid`` (migration
008), and each source finding's hits are remembered as merged (``merged_hits``), so merging a
shard again adds only what it gained since: merging is idempotent, and a live shard can be
merged as often as one likes. A campaign's compiler coverage (``fuzz --coverage``) comes along,
under its id in the target.

Every source is opened (and so checked and migrated) before the target is touched: a shard
that is not a corpus, or one of a newer schema, is an error and nothing is written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from fuzzaoti.errors import CorpusError
from fuzzaoti.corpus.store import Corpus, check_corpus

_CAMPAIGN_SKIP = ("id", "origin")
_FINDING_SKIP = ("id", "campaign_id")


@dataclass
class MergeCounts:
    """What one merge did: campaigns and findings added, findings combined, hits added."""

    campaigns_added: int = 0
    campaigns_updated: int = 0
    findings_added: int = 0
    findings_combined: int = 0
    hits_added: int = 0
    shards: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return (f"merged {len(self.shards)} shard(s): {self.campaigns_added} campaigns added, "
                f"{self.campaigns_updated} updated; {self.findings_added} findings added, "
                f"{self.findings_combined} combined, {self.hits_added} hits added")


def merge_corpora(sources: list[str], target: str, echo: Callable[[str], None] = print) -> MergeCounts:
    """Merge the corpora at ``sources`` into ``target`` (created when missing)."""
    if not sources:
        raise CorpusError("nothing to merge: name at least one shard corpus")
    same = [s for s in sources if os.path.exists(target) and os.path.samefile(s, target)]
    if same:
        raise CorpusError(f"cannot merge {same[0]} into itself")
    for path in sources + ([target] if os.path.exists(target) else []):
        check_corpus(path)  # every file looked at before any is written (migrated or merged into)
    shards = [Corpus.open(path) for path in sources]
    counts = MergeCounts()
    try:
        with Corpus.open(target, create=True) as into:
            for shard in shards:
                _merge_one(shard, into, counts)
                counts.shards.append(shard.path)
                echo(f"  {shard.path}: {len(shard.campaigns())} campaigns, {len(shard.findings())} findings")
    finally:
        for shard in shards:
            shard.close()
    return counts


def _merge_one(shard: Corpus, into: Corpus, counts: MergeCounts) -> None:
    with into.writing():
        campaign_ids = {row["id"]: _merge_campaign(row, shard.path, into, counts)
                        for row in shard.db["campaigns"].rows_where(order_by="id")}  # (raw rows: copied as they are)
        for row in shard.db["findings"].rows_where(order_by="id"):
            target_id = _merge_finding(row, campaign_ids.get(row["campaign_id"]), into, counts)
            _merge_replays(shard, row["id"], target_id, into)
        for row in shard.db["hypothesis_examples"].rows:
            into.db["hypothesis_examples"].insert(row, ignore=True)
        into.db["compiler_lines"].insert_all(  # (a line merged before keeps its first second)
            ({**row, "campaign_id": campaign_ids[row["campaign_id"]]} for row in shard.db["compiler_lines"].rows),
            ignore=True)
        into.db["compiler_decisions"].insert_all(  # (the shard's whole count: merged again, not doubled)
            ({**row, "campaign_id": campaign_ids[row["campaign_id"]]} for row in shard.db["compiler_decisions"].rows),
            replace=True)


def _merge_campaign(row: dict[str, Any], origin: str, into: Corpus, counts: MergeCounts) -> int:
    """The target's id of shard campaign ``row``: updated to the shard's counts where it was
    merged before (a campaign's counts only grow), else inserted with its origin."""
    values = {k: v for k, v in row.items() if k not in _CAMPAIGN_SKIP}
    found = list(into.db["campaigns"].rows_where("uid = ?", [row["uid"]], select="id"))
    if found:
        into.db["campaigns"].update(found[0]["id"], values)
        counts.campaigns_updated += 1
        return found[0]["id"]
    counts.campaigns_added += 1
    return into.db["campaigns"].insert({**values, "origin": row.get("origin") or origin}).last_pk


def _merge_finding(row: dict[str, Any], campaign_id: int | None, into: Corpus, counts: MergeCounts) -> int:
    """Add or combine shard finding ``row``; returns its id in the target."""
    table = into.db["findings"]
    key = (row["signature"], row["device"], row["canary"] or "")
    found = list(table.rows_where("signature = ? and device = ? and canary = ?", key))
    if not found:
        new_id = table.insert({**{k: v for k, v in row.items() if k not in _FINDING_SKIP},
                               "campaign_id": campaign_id}).last_pk
        into.db["merged_hits"].upsert({"source_uid": row["uid"], "finding_id": new_id, "hits": row["hits"]},
                                      pk="source_uid")
        counts.findings_added += 1
        counts.hits_added += row["hits"]
        return new_id
    mine = found[0]
    if mine["uid"] == row["uid"]:  # this very finding, merged back: nothing new in it but its hits
        added = max(row["hits"] - mine["hits"], 0)
    else:
        before = list(into.db["merged_hits"].rows_where("source_uid = ?", [row["uid"]]))
        added = row["hits"] - (before[0]["hits"] if before else 0)
        into.db["merged_hits"].upsert({"source_uid": row["uid"], "finding_id": mine["id"], "hits": row["hits"]},
                                      pk="source_uid")
    changes = _combined(mine, row)
    changes["hits"] = mine["hits"] + max(added, 0)
    table.update(mine["id"], changes)
    counts.findings_combined += 1
    counts.hits_added += max(added, 0)
    return mine["id"]


def _merge_replays(shard: Corpus, source_id: int, target_id: int, into: Corpus) -> None:
    """The shard finding's replays on each torch and device, the newer replay winning."""
    for row in shard.db["replays"].rows_where("finding_id = ?", [source_id]):
        key = [target_id, row["torch_version"], row["device"]]
        mine = list(into.db["replays"].rows_where("finding_id = ? and torch_version = ? and device = ?", key))
        if not mine or mine[0]["replayed_at"] < row["replayed_at"]:
            into.db["replays"].upsert({**row, "finding_id": target_id}, pk=("finding_id", "torch_version", "device"))


def _combined(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """The columns of a finding seen in two corpora: the wider time span, the smaller shrunk
    program (with its runs, note and triage), and a decided status over ``new``."""
    changes: dict[str, Any] = {"first_seen": min(mine["first_seen"], theirs["first_seen"]),
                               "last_seen": max(mine["last_seen"], theirs["last_seen"])}
    if _shrunk_size(theirs) < _shrunk_size(mine):
        changes.update({k: theirs[k] for k in ("shrunk_program", "shrunk_runs", "shrink_note")})
        if theirs.get("triage"):
            changes.update({k: theirs[k] for k in ("triage", "workarounds")})
    if not mine.get("triage") and theirs.get("triage"):
        changes.update({k: theirs[k] for k in ("triage", "workarounds")})
    if mine["status"] == "new" and theirs["status"] != "new":
        changes.update({"status": theirs["status"], "known_note": theirs.get("known_note")})
    return changes


def _shrunk_size(row: dict[str, Any]) -> tuple[int, int]:
    """How big a finding's shrunk program is (ops, then JSON length); unshrunk is the biggest."""
    if not row.get("shrunk_program"):
        return (1 << 30, 1 << 30)
    return (len(json.loads(row["shrunk_program"]).get("nodes", [])), len(row["shrunk_program"]))
