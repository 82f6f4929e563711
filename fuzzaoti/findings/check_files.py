"""Hand-written program files checked as one batch (``fuzzaoti check``): for minimizing by hand,
and for the cases in ``corpus/known/``."""

from __future__ import annotations

import json

from fuzzaoti.check.outcome import Outcome
from fuzzaoti.check.signature import signature
from fuzzaoti.errors import InvalidArgument, InvalidProgram
from fuzzaoti.findings.repro import file_case
from fuzzaoti.model.case import Case
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.workers.worker import WorkerConfig


def read_case_file(path: str) -> Case:
    """The case in a program file (a Program's JSON, or ``{"program", "runs"}``); a file that
    is not one is an InvalidArgument naming it."""
    try:
        with open(path) as f:
            return file_case(json.load(f))
    except (ValueError, KeyError, TypeError, InvalidProgram) as exc:
        raise InvalidArgument(f"{path} is not a fuzzaoti program file: {exc}") from None


def check_files(cases: list[Case], device: str, canary: str | None, backend: str) -> list[tuple[Case, Outcome, str]]:
    """Each case, its outcome and a one-line verdict (``FAILS <signature>``, ``passes``,
    ``invalid: ...``), all compiled as one batch in a fresh worker."""
    pool = WorkerPool(WorkerConfig(device=device, backend=backend, canary=canary))
    try:
        outcomes = pool.check(cases)
    finally:
        pool.close()
    return [(case, outcome, _verdict(case, outcome)) for case, outcome in zip(cases, outcomes)]


def _verdict(case: Case, outcome: Outcome) -> str:
    directed = f" ({outcome.runs_directed} of its runs directed at what Inductor assumed)" if outcome.runs_directed else ""
    if outcome.is_finding:
        where = f" at {outcome.env}" if outcome.env else ""
        broke = f", breaking {'; '.join(outcome.assumptions)}" if outcome.assumptions else ""
        return f"FAILS {signature(outcome, case.program)}{where}{broke}"
    return ("passes" + directed) if outcome.passed else f"invalid: {outcome.message.strip()[:200]}"
