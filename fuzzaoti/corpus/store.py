"""The corpus: campaigns and findings in one SQLite file, through sqlite-utils.

Programs are stored as JSON text and nothing is ever unpickled, so opening a corpus from
anywhere never runs code. The file is in WAL mode with a long busy timeout: several campaigns
may write one corpus at once, and a campaign killed mid-write leaves the last committed state.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
from dataclasses import asdict
from typing import Any, Iterator

import sqlite_utils

from fuzzaoti.check.verdict import RungResult, results_to_data
from fuzzaoti.errors import CorpusError, FuzzaotiError, UnknownFinding
from fuzzaoti.corpus import FINDING_STATUSES, migrations
from fuzzaoti.corpus.campaign_record import CampaignRecord
from fuzzaoti.corpus.finding import RESULTS, Finding, ReplayResult
from fuzzaoti.corpus.migrations import new_uid, now


class Corpus:
    """A fuzzaoti corpus file. ``Corpus.open(path)`` refuses anything that is not one."""

    def __init__(self, db: sqlite_utils.Database, path: str):
        self.db = db
        self.path = path

    # ---- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str, create: bool = False) -> Corpus:
        """Open (and migrate) the corpus at ``path``; create it only when ``create`` is true.

        Raises CorpusError for a missing file (unless creating), a file that is not SQLite, a
        SQLite file without fuzzaoti's tables, and a corpus written by a newer fuzzaoti. In
        every such case the file is left byte-for-byte as it was.
        """
        exists = os.path.exists(path)
        if not exists and not create:
            raise CorpusError(f"no corpus at {path} (run 'fuzzaoti fuzz --corpus {path}' to create one)")
        if not exists:
            _create_atomically(path)
            exists = True
        if exists and os.path.isdir(path):
            raise CorpusError(f"{path} is a directory, not a corpus file")
        if exists:
            _check_is_corpus(path)
        try:
            conn = sqlite3.connect(path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 60000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            raise CorpusError(f"cannot open corpus {path}: {exc}") from None
        db = sqlite_utils.Database(conn)
        newer = migrations.unknown(db)
        if newer:
            conn.close()
            raise CorpusError(f"{path} was written by a newer fuzzaoti (schema {newer[-1]}); upgrade fuzzaoti")
        migrations.migrate(db)
        return cls(db, path)

    def close(self) -> None:
        self.db.close()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One write transaction that takes SQLite's write lock at its start (BEGIN IMMEDIATE).

        A deferred transaction that reads first cannot upgrade to a writer once another campaign
        has written meanwhile: SQLite fails it at once with 'database is locked' instead of
        waiting. Taken up front, the lock waits (busy_timeout) like any other."""
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def __enter__(self) -> Corpus:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- campaigns -------------------------------------------------------------------------
    def start_campaign(self, device: str, backend: str, canary: str | None, seed: int,
                       settings: dict[str, Any], versions: dict[str, Any]) -> int:
        stamp = now()
        row = {
            "started_at": stamp, "updated_at": stamp, "status": "running", "device": device,
            "backend": backend, "canary": canary or "", "seed": seed,
            "settings": json.dumps(settings, sort_keys=True), "versions": json.dumps(versions),
            "host": socket.gethostname(), "pid": os.getpid(),
            "batches": 0, "programs": 0, "runs_checked": 0, "runs_skipped": 0, "invalid": 0,
            "failures": 0, "new_findings": 0, "worker_restarts": 0, "quarantined": 0, "uid": new_uid(),
        }
        with self.writing():
            return self.db["campaigns"].insert(row).last_pk

    def update_campaign(self, campaign_id: int, counts: dict[str, int], status: str | None = None) -> None:
        changes: dict[str, Any] = dict(counts, updated_at=now())
        if status is not None:
            changes["status"] = status
            if status != "running":
                changes["finished_at"] = changes["updated_at"]
        with self.writing():
            self.db["campaigns"].update(campaign_id, changes)

    def claim_campaign(self, campaign_id: int) -> None:
        """Mark a stored campaign as running again, in this process (for ``--resume``)."""
        with self.writing():
            self.db["campaigns"].update(campaign_id, {"status": "running", "host": socket.gethostname(),
                                                      "pid": os.getpid(), "updated_at": now()})

    def campaign(self, campaign_id: int) -> CampaignRecord:
        try:
            return CampaignRecord.from_row(self.db["campaigns"].get(campaign_id))
        except sqlite_utils.db.NotFoundError:
            raise CorpusError(f"no campaign with id {campaign_id} in {self.path}") from None

    def campaigns(self) -> list[CampaignRecord]:
        return [CampaignRecord.from_row(row) for row in self.db["campaigns"].rows_where(order_by="id")]

    def add_lines(self, campaign_id: int, lines: list[tuple[str, int]], seconds: float) -> None:
        """Store Inductor lines ``campaign_id``'s compiles reached ``seconds`` into it (a line it
        had reached before keeps its first second)."""
        if lines:
            with self.writing():
                self.db["compiler_lines"].insert_all(
                    ({"campaign_id": campaign_id, "file": f, "line": n, "seconds": round(seconds, 1)} for f, n in lines),
                    ignore=True)

    def compiler_lines(self, campaign_id: int) -> list[tuple[str, int, float]]:
        """``(file, line, seconds first reached)`` of every Inductor line the campaign ran."""
        rows = self.db.execute("select file, line, seconds from compiler_lines where campaign_id = ?", [campaign_id])
        return [(f, n, s) for f, n, s in rows.fetchall()]

    def add_decisions(self, campaign_id: int, decided: dict[str, int], seconds: float) -> None:
        """Count the decision combinations ``campaign_id``'s compiles took (``decided``: each with
        its kernels since the last call), ``seconds`` into it (a combination taken before keeps
        its first second)."""
        if decided:
            with self.writing():
                self.db.conn.executemany(
                    "insert into compiler_decisions (campaign_id, decision, seconds, kernels) values (?, ?, ?, ?) "
                    "on conflict (campaign_id, decision) do update set kernels = kernels + excluded.kernels",
                    [(campaign_id, d, round(seconds, 1), n) for d, n in decided.items()])

    def compiler_decisions(self, campaign_id: int) -> list[tuple[str, float, int]]:
        """``(combination, seconds first taken, kernels)`` of every decision combination the
        campaign's compiles took."""
        rows = self.db.execute("select decision, seconds, kernels from compiler_decisions where campaign_id = ? "
                               "order by seconds, decision", [campaign_id]).fetchall()
        for d, s, n in rows:  # (a corpus from elsewhere: its rows are data, checked as read)
            if not (isinstance(d, str) and isinstance(s, (int, float)) and isinstance(n, int)):
                raise CorpusError(f"{self.path}: compiler_decisions of campaign {campaign_id} holds a malformed row "
                                  f"({d!r:.60}, {s!r:.20}, {n!r:.20})")
        return rows

    def campaigns_with_lines(self) -> list[int]:
        """The campaigns that recorded compiler coverage (``fuzz --coverage``), oldest first."""
        return [r[0] for r in self.db.execute("select distinct campaign_id from compiler_lines order by campaign_id")]

    # ---- findings --------------------------------------------------------------------------
    def record_failure(self, campaign_id: int | None, device: str, canary: str | None,
                       signature: str, outcome: dict[str, Any], program_json: str,
                       runs: list[dict[str, Any]], versions: dict[str, Any],
                       known_note: str | None = None) -> tuple[int, bool]:
        """Store a failure: a new finding, or one more hit of the finding with its signature.

        A failure whose signature is on the known-bug list (``known_note`` says where it is
        reported) is stored with status ``known``.

        Returns ``(finding id, is_new)``. The lookup and the write are one transaction, so two
        campaigns hitting the same new bug at once still leave one finding with two hits.
        """
        stamp = now()
        key = (signature, device, canary or "")
        with self.writing():
            rows = list(self.db["findings"].rows_where(
                "signature = ? and device = ? and canary = ?", key, select="id, hits"))
            if rows:
                fid = rows[0]["id"]
                self.db["findings"].update(fid, {"hits": rows[0]["hits"] + 1, "last_seen": stamp})
                return fid, False
            program = json.loads(program_json)
            row = {
                "signature": signature, "device": device, "canary": canary or "",
                "status": "known" if known_note else "new", "known_note": known_note,
                "stage": outcome["stage"], "symptom": outcome["symptom"],
                "message": outcome.get("message", ""), "stderr": outcome.get("stderr", ""),
                "program": program_json, "runs": json.dumps(runs),
                "verdict": json.dumps(outcome.get("verdict")),
                "assumptions": json.dumps(list(outcome.get("assumptions") or [])),
                "ops": " ".join(n["op"] for n in program["nodes"]),
                "torch_version": versions.get("torch"), "cuda_version": versions.get("cuda"),
                "device_name": versions.get("device_name"),
                "first_seen": stamp, "last_seen": stamp, "hits": 1, "campaign_id": campaign_id, "uid": new_uid(),
            }
            return self.db["findings"].insert(row).last_pk, True

    def finding(self, finding_id: int) -> Finding:
        try:
            row = self.db["findings"].get(finding_id)
        except sqlite_utils.db.NotFoundError:
            raise UnknownFinding(f"no finding with id {finding_id} in {self.path}") from None
        return Finding.from_row(row, self._replays(finding_id).get(finding_id, ()))

    def findings(self, status: str | None = None) -> list[Finding]:
        where, args = ("status = ?", [status]) if status else (None, [])
        replays = self._replays()
        return [Finding.from_row(row, replays.get(row["id"], ()))
                for row in self.db["findings"].rows_where(where, args, order_by="id")]

    def _replays(self, finding_id: int | None = None) -> dict[int, tuple[ReplayResult, ...]]:
        """The replays table by finding (of one finding, or of all), oldest replay first."""
        where, args = ("finding_id = ?", [finding_id]) if finding_id is not None else (None, [])
        grouped: dict[int, list[ReplayResult]] = {}
        for row in self.db["replays"].rows_where(where, args, order_by="replayed_at, torch_version"):
            fid = row.pop("finding_id")
            grouped.setdefault(fid, []).append(ReplayResult(**row))
        return {fid: tuple(rows) for fid, rows in grouped.items()}

    def record_replay(self, finding_id: int, replayed: ReplayResult) -> None:
        """Keep what finding ``finding_id`` did on ``replayed``'s torch and device (the newest
        replay there replaces an older one)."""
        if replayed.result not in RESULTS:
            raise CorpusError(f"unknown replay result {replayed.result!r}; use one of {RESULTS}")
        with self.writing():
            self.db["replays"].upsert({"finding_id": finding_id, **asdict(replayed)},
                                      pk=("finding_id", "torch_version", "device"))

    def set_shrunk(self, finding_id: int, program_json: str, runs: list[dict[str, Any]], note: str) -> None:
        """Store the minimal program and runs that still show finding ``finding_id``'s signature."""
        self.finding(finding_id)
        with self.writing():
            self.db["findings"].update(finding_id, {
                "shrunk_program": program_json, "shrunk_runs": json.dumps(runs), "shrink_note": note})

    def set_triage(self, finding_id: int, ladder: dict[str, RungResult], workarounds: dict[str, RungResult]) -> None:
        self.finding(finding_id)
        with self.writing():
            self.db["findings"].update(finding_id, {"triage": json.dumps(results_to_data(ladder)),
                                                    "workarounds": json.dumps(results_to_data(workarounds))})

    def set_status(self, finding_id: int, status: str, known_note: str | None = None) -> None:
        if status not in FINDING_STATUSES:
            raise CorpusError(f"unknown finding status {status!r}; use one of {FINDING_STATUSES}")
        self.finding(finding_id)
        changes = {"status": status, "last_seen": now()}
        if known_note is not None:
            changes["known_note"] = known_note
        with self.writing():
            self.db["findings"].update(finding_id, changes)


def _create_atomically(path: str) -> None:
    """Build a new corpus beside ``path`` and link it into place, so a campaign starting at the
    same moment never sees a half-made file (it finds either nothing or a whole corpus)."""
    tmp = f"{path}.new-{os.getpid()}"
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")  # persistent: openers need not switch it (a lock)
            migrations.migrate(sqlite_utils.Database(conn))
        finally:
            conn.close()
        try:
            os.link(tmp, path)  # fails if another process made the corpus first: then use theirs
        except FileExistsError:
            pass
    except OSError as exc:
        raise CorpusError(f"cannot create corpus {path}: {exc.strerror}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def check_corpus(path: str) -> None:
    """Raise CorpusError unless ``path`` is a corpus this fuzzaoti can open and every finding in
    it holds a valid program and runs (``Program.validate``: whitelisted ops, allowed configs),
    looking only (no migration, no write): what a merge asks of every shard and the pytest plugin
    of every corpus before anything is written or run. A corpus is often someone else's file."""
    if not os.path.exists(path):
        raise CorpusError(f"no corpus at {path}")
    if os.path.isdir(path):
        raise CorpusError(f"{path} is a directory, not a corpus file")
    _check_is_corpus(path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        db = sqlite_utils.Database(conn)
        newer = migrations.unknown(db)
        if not newer and "findings" in db.table_names():
            for row in db["findings"].rows_where(order_by="id"):
                _check_finding_row(path, row)
    finally:
        conn.close()
    if newer:
        raise CorpusError(f"{path} was written by a newer fuzzaoti (schema {newer[-1]}); upgrade fuzzaoti")


def _check_finding_row(path: str, row: dict) -> None:
    """Raise CorpusError unless the finding in ``row`` parses: its cases (as found and shrunk)
    and its JSON columns."""
    try:
        finding = Finding.from_row(row)
        finding.found_case, finding.shrunk_case  # noqa: B018 (parsed and validated on first use)
    except (FuzzaotiError, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise CorpusError(f"{path}: finding {row.get('id')}: {exc}") from None


def _check_is_corpus(path: str) -> None:
    """Raise CorpusError unless ``path`` is a SQLite file with fuzzaoti's marker (read-only look)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
            if not tables:
                if os.path.getsize(path) == 0:
                    return  # an empty file: a corpus not yet initialised
                raise CorpusError(f"{path} is an empty SQLite database, not a fuzzaoti corpus")
            marker = None
            if "meta" in tables:
                marker = conn.execute("select value from meta where key='format'").fetchone()
            if marker != ("fuzzaoti-corpus",):
                raise CorpusError(f"{path} is a SQLite database but not a fuzzaoti corpus")
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise CorpusError(f"{path} is not a fuzzaoti corpus ({exc})") from None


def refuse_if_alive(campaign: CampaignRecord) -> None:
    """A campaign still running in a live process on this host must not be resumed twice."""
    if campaign.status != "running" or campaign.host != socket.gethostname() or campaign.pid in (None, os.getpid()):
        return
    try:
        os.kill(campaign.pid, 0)
    except (ProcessLookupError, PermissionError):
        return
    raise CorpusError(f"campaign {campaign.id} is still running (pid {campaign.pid}); stop it before resuming")
