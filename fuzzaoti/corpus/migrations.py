"""Ordered, named schema migrations; each runs in one transaction with the record that it ran.

Never edit a released migration: add a new one at the end. A corpus that records a migration
this code does not know was written by a newer fuzzaoti and is refused, not guessed at.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Callable

import sqlite_utils

Migration = Callable[[sqlite_utils.Database], None]


def _m001_initial(db: sqlite_utils.Database) -> None:
    db["meta"].create({"key": str, "value": str}, pk="key")
    db["meta"].insert({"key": "format", "value": "fuzzaoti-corpus"})
    db["campaigns"].create(
        {
            "id": int, "started_at": str, "finished_at": str, "updated_at": str, "status": str,
            "device": str, "backend": str, "canary": str, "seed": int, "settings": str,
            "versions": str, "host": str, "pid": int,
            "batches": int, "programs": int, "runs_checked": int, "runs_skipped": int,
            "invalid": int, "failures": int, "new_findings": int, "worker_restarts": int,
        },
        pk="id",
    )
    db["findings"].create(
        {
            "id": int, "signature": str, "device": str, "canary": str, "status": str,
            "stage": str, "symptom": str, "message": str, "stderr": str,
            "program": str, "runs": str, "verdict": str, "ops": str,
            "torch_version": str, "cuda_version": str, "device_name": str,
            "first_seen": str, "last_seen": str, "hits": int, "campaign_id": int,
        },
        pk="id",
        foreign_keys=[("campaign_id", "campaigns", "id")],
    )
    db["findings"].create_index(["signature", "device", "canary"], unique=True)


MIGRATIONS: list[tuple[str, Migration]] = [
    ("001_initial", _m001_initial),
]


def applied(db: sqlite_utils.Database) -> list[str]:
    if "_migrations" not in db.table_names():
        return []
    return [row["name"] for row in db["_migrations"].rows_where(order_by="name")]


def pending(db: sqlite_utils.Database) -> list[tuple[str, Migration]]:
    done = set(applied(db))
    return [(name, fn) for name, fn in MIGRATIONS if name not in done]


def unknown(db: sqlite_utils.Database) -> list[str]:
    """Migrations recorded in ``db`` that this code does not have (a newer fuzzaoti wrote it)."""
    known = {name for name, _ in MIGRATIONS}
    return [name for name in applied(db) if name not in known]


def migrate(db: sqlite_utils.Database) -> list[str]:
    """Apply every pending migration, each atomically; return the names applied."""
    done = []
    for name, fn in pending(db):
        with db.atomic():  # one transaction: the schema change and its record land together
            if "_migrations" not in db.table_names():
                db["_migrations"].create({"name": str, "applied_at": str}, pk="name")
            fn(db)
            db["_migrations"].insert({"name": name, "applied_at": now()})
        done.append(name)
    return done


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _m002_shrunk(db: sqlite_utils.Database) -> None:
    """Where a finding's minimal repro lives once shrinking has run."""
    db["findings"].add_column("shrunk_program", str)
    db["findings"].add_column("shrunk_runs", str)
    db["findings"].add_column("shrink_note", str)


MIGRATIONS.append(("002_shrunk", _m002_shrunk))


def _m003_triage(db: sqlite_utils.Database) -> None:
    """The triage ladder and workaround probes of a finding, as JSON."""
    db["findings"].add_column("triage", str)
    db["findings"].add_column("workarounds", str)


MIGRATIONS.append(("003_triage", _m003_triage))


def _m004_known(db: sqlite_utils.Database) -> None:
    """Why a finding is ``known``: the upstream reference of the known-bug entry it matched."""
    db["findings"].add_column("known_note", str)


MIGRATIONS.append(("004_known", _m004_known))


def _m005_hypothesis(db: sqlite_utils.Database) -> None:
    """Hypothesis's example database: choice sequences of batches that failed (see hypothesis_db)."""
    db["hypothesis_examples"].create({"key": bytes, "value": bytes, "saved_at": str}, pk=("key", "value"))


MIGRATIONS.append(("005_hypothesis", _m005_hypothesis))


def _m006_quarantined(db: sqlite_utils.Database) -> None:
    """Programs a campaign drew but set aside: they would trip a bug it already has (fuzzaoti.corpus.quarantine)."""
    db["campaigns"].add_column("quarantined", int)


MIGRATIONS.append(("006_quarantined", _m006_quarantined))


def _m007_large_runs(db: sqlite_utils.Database) -> None:
    """Campaign counts of runs past a crossing (and of their programs), and of runs not run (over
    budget, out of memory)."""
    for column in ("programs_large", "runs_large", "runs_over_budget", "runs_oom"):
        db["campaigns"].add_column(column, int)


MIGRATIONS.append(("007_large_runs", _m007_large_runs))


def _m008_merge(db: sqlite_utils.Database) -> None:
    """What merging shard corpora needs (fuzzaoti.corpus.merge): a ``uid`` for every campaign and
    finding, the same in every corpus it is merged into, so a shard merged twice changes nothing;
    a campaign's ``origin`` (the shard it came from); and ``merged_hits``, each source finding's
    hits as last merged, so a shard merged again adds only what it gained since."""
    for table in ("campaigns", "findings"):
        db[table].add_column("uid", str)
        for row in list(db[table].rows_where(select="id")):
            db[table].update(row["id"], {"uid": uuid.uuid4().hex})
        db[table].create_index(["uid"], unique=True)
    db["campaigns"].add_column("origin", str)
    db["merged_hits"].create({"source_uid": str, "finding_id": int, "hits": int}, pk="source_uid")


MIGRATIONS.append(("008_merge", _m008_merge))


def _m009_replays(db: sqlite_utils.Database) -> None:
    """What each finding did when replayed on a torch other than the one it was found on
    (``fuzzaoti recheck``, the pytest plugin's ``--fuzzaoti-record``): one row per finding,
    torch version and device, the newest replay's result."""
    db["replays"].create(
        {"finding_id": int, "torch_version": str, "device": str, "device_name": str,
         "result": str, "signature": str, "replayed_at": str},
        pk=("finding_id", "torch_version", "device"),
        foreign_keys=[("finding_id", "findings", "id")],
    )


MIGRATIONS.append(("009_replays", _m009_replays))


def _m010_slowest(db: sqlite_utils.Database) -> None:
    """A campaign's slowest compiled big run, as a ``fuzzaoti check`` file (fuzzaoti.campaign.slowest)."""
    db["campaigns"].add_column("slowest", str)


MIGRATIONS.append(("010_slowest", _m010_slowest))


def _m011_assumptions(db: sqlite_utils.Database) -> None:
    """What Inductor assumed of the sizes, unchecked by AOTI, that a finding's failing run broke
    (fuzzaoti.compile.assumptions, as JSON); a campaign's count of runs directed at breaking them."""
    db["findings"].add_column("assumptions", str)
    db["campaigns"].add_column("runs_directed", int)


MIGRATIONS.append(("011_assumptions", _m011_assumptions))


def _m012_compiler_lines(db: sqlite_utils.Database) -> None:
    """The lines of ``torch/_inductor`` a campaign's compiles ran (``fuzz --coverage``), each
    once, with the campaign second it was first reached (fuzzaoti.coverage)."""
    db["compiler_lines"].create(
        {"campaign_id": int, "file": str, "line": int, "seconds": float},
        pk=("campaign_id", "file", "line"),
        foreign_keys=[("campaign_id", "campaigns", "id")],
    )


MIGRATIONS.append(("012_compiler_lines", _m012_compiler_lines))


def _m013_rung_results(db: sqlite_utils.Database) -> None:
    """Triage tables as records (``check.verdict.RungResult.to_data``) where they held the text
    a user reads ("FAILS differently: SIG"): each rung's verdict and detail are fields now."""
    import json

    from fuzzaoti.check.verdict import results_from_data, results_to_data

    for row in list(db.query("select id, triage, workarounds from findings")):
        changed = {}
        for column in ("triage", "workarounds"):
            if row[column]:
                table = results_from_data(json.loads(row[column]), f"finding {row['id']} {column}")
                changed[column] = json.dumps(results_to_data(table))
        if changed:
            db["findings"].update(row["id"], changed)


MIGRATIONS.append(("013_rung_results", _m013_rung_results))


def _m014_assumption_records(db: sqlite_utils.Database) -> None:
    """A finding's broken assumptions as records (``check.assumption.Assumption.to_data``: guard,
    site, function) where they held the text a user reads ("d0 <= 4096 (cpp.py:2273 in f)")."""
    import json

    from fuzzaoti.check.assumption import Assumption

    for row in list(db.query("select id, assumptions from findings where assumptions is not null")):
        stored = json.loads(row["assumptions"]) or []
        records = [Assumption.from_data(a, f"finding {row['id']} assumptions").to_data() for a in stored]
        db["findings"].update(row["id"], {"assumptions": json.dumps(records)})


MIGRATIONS.append(("014_assumption_records", _m014_assumption_records))


def _m015_compiler_decisions(db: sqlite_utils.Database) -> None:
    """The decision combinations a campaign's compiles took (``fuzz --coverage``;
    fuzzaoti.coverage.decisions), each with the campaign second it was first taken and how many
    kernels took it."""
    db["compiler_decisions"].create(
        {"campaign_id": int, "decision": str, "seconds": float, "kernels": int},
        pk=("campaign_id", "decision"),
        foreign_keys=[("campaign_id", "campaigns", "id")],
    )


MIGRATIONS.append(("015_compiler_decisions", _m015_compiler_decisions))


def new_uid() -> str:
    return uuid.uuid4().hex
