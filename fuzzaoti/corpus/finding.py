"""A stored finding as a typed, frozen record (``Corpus.finding`` and ``Corpus.findings`` return it).

The findings table keeps JSON text in several columns (the program and runs as found and as
shrunk, the verdict, the triage tables). They are parsed here, once, and nowhere else: every
reader (show, repro, report, families, the quarantine, the shrinker) asks a ``Finding`` for
``.case`` (shrunk when shrinking has run, else as found), ``.found_case``, ``.verdict``,
``.triage`` and ``.workarounds``, and ``.replays`` for what it did on each torch it was
replayed on (``.torch_results()`` says it in one line). The cases are parsed on first use, so listing a corpus
whose programs this fuzzaoti cannot read still works; reading the case then raises
``ProgramError`` with one line.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from fuzzaoti.check.assumption import Assumption
from fuzzaoti.check.verdict import RungResult, results_from_data, results_to_data
from fuzzaoti.model.case import Case
from fuzzaoti.model.program import Program


RESULTS = ("fails", "passes", "invalid")  # a replay's result (``fuzzaoti.findings.replay``)


@dataclass(frozen=True)
class ReplayResult:
    """A finding replayed on one torch and device: a row of the ``replays`` table (migration 009)."""

    torch_version: str
    device: str
    result: str  # one of RESULTS
    signature: str = ""  # the replay's own signature when it failed
    device_name: str | None = None
    replayed_at: str = ""


@dataclass(frozen=True)
class Finding:
    id: int
    signature: str
    device: str
    canary: str  # "" when the finding was not found under a canary fault
    status: str  # one of fuzzaoti.corpus.FINDING_STATUSES
    stage: str
    symptom: str
    message: str = ""
    stderr: str = ""
    ops: str = ""  # the found program's ops, space-separated (for SQL queries)
    hits: int = 0
    first_seen: str = ""
    last_seen: str = ""
    torch_version: str | None = None
    cuda_version: str | None = None
    device_name: str | None = None
    campaign_id: int | None = None
    known_note: str | None = None
    shrink_note: str | None = None
    verdict: dict[str, Any] | None = None  # the oracle's: first and worst wrong elements, counts
    assumptions: tuple[Assumption, ...] = ()  # what Inductor assumed, unchecked, that the failing run broke
    triage: dict[str, RungResult] = field(default_factory=dict)  # ladder: stage -> result
    workarounds: dict[str, RungResult] = field(default_factory=dict)  # hand remedy -> result
    replays: tuple[ReplayResult, ...] = ()  # from the replays table, oldest first
    # the columns as stored; parsed into Cases on first use (see the properties)
    program_json: str = field(default="", repr=False)
    runs_json: str = field(default="[]", repr=False)
    shrunk_program_json: str | None = field(default=None, repr=False)
    shrunk_runs_json: str | None = field(default=None, repr=False)

    @classmethod
    def from_row(cls, row: Mapping[str, Any], replays: tuple[ReplayResult, ...] = ()) -> Finding:
        """A row of the findings table (any schema since 001; columns a migration added later
        may be missing or NULL), with its rows of the replays table."""
        renamed = {"program": "program_json", "runs": "runs_json",
                   "shrunk_program": "shrunk_program_json", "shrunk_runs": "shrunk_runs_json"}
        names = {f.name for f in fields(cls)}
        values = {renamed.get(k, k): v for k, v in row.items() if renamed.get(k, k) in names}
        values["canary"] = values.get("canary") or ""
        values["message"] = values.get("message") or ""
        values["stderr"] = values.get("stderr") or ""
        values["verdict"] = _loads(values.get("verdict"), None)
        values["assumptions"] = tuple(Assumption.from_data(a, f"finding {values.get('id')} assumptions")
                                      for a in _loads(values.get("assumptions"), []))
        for table in ("triage", "workarounds"):
            values[table] = results_from_data(_loads(values.get(table), {}), f"finding {values.get('id')} {table}")
        return cls(**values, replays=replays)

    def torch_results(self) -> str:
        """Where it fails and where it passes, one clause per torch and device: "fails on
        2.11.0+cu130 (cuda, found), passes on 2.13.0+cpu (cpu)". A replay on the torch and device
        it was found on replaces the "found" clause."""
        replayed = {(r.torch_version, r.device): r for r in self.replays}
        clauses = []
        if (self.torch_version, self.device) not in replayed:
            clauses.append(f"fails on {self.torch_version} ({self.device}, found)")
        clauses += [f"{r.result} on {r.torch_version} ({r.device})" for r in self.replays]
        return ", ".join(clauses)

    @functools.cached_property
    def found_case(self) -> Case:
        """The program and runs as the campaign found them."""
        return Case.from_run_dicts(Program.from_json(self.program_json), json.loads(self.runs_json))

    @functools.cached_property
    def shrunk_case(self) -> Case | None:
        if not self.shrunk_program_json:
            return None
        return Case.from_run_dicts(Program.from_json(self.shrunk_program_json),
                                   json.loads(self.shrunk_runs_json or self.runs_json))

    @property
    def case(self) -> Case:
        """The minimal case when the finding was shrunk, else the case as found: what a
        maintainer reads and what replay, repro and the quarantine use."""
        return self.shrunk_case or self.found_case

    def to_dict(self) -> dict[str, Any]:
        """The whole record as plain JSON data (``fuzzaoti show --json``): the stored columns,
        with the programs and runs as objects rather than JSON text."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.endswith("_json")}
        out["replays"] = [asdict(r) for r in self.replays]
        out["triage"], out["workarounds"] = results_to_data(self.triage), results_to_data(self.workarounds)
        out["assumptions"] = [a.to_data() for a in self.assumptions]
        for column in ("program", "runs", "shrunk_program", "shrunk_runs"):
            text = getattr(self, f"{column}_json")
            out[column] = json.loads(text) if text else None
        return out


def _loads(text: str | None, empty: Any) -> Any:
    value = json.loads(text) if text else None
    return empty if value is None else value
