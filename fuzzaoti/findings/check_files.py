"""Hand-written program files checked as one batch (``fuzzaoti check``): for minimizing by hand,
and for the cases in ``corpus/known/``."""

from __future__ import annotations

import json
import os

from fuzzaoti.check.outcome import Outcome
from fuzzaoti.check.signature import signature
from fuzzaoti.errors import InvalidArgument, InvalidProgram
from fuzzaoti.findings.repro import file_case
from fuzzaoti.findings.replay import weighed_pool
from fuzzaoti.model.case import Case


#: a program file is a few KiB; one past this is not one (and is not read into memory)
MAX_FILE_BYTES = 16 << 20


def read_case_file(path: str) -> Case:
    """The case in a program file (a Program's JSON, or ``{"program", "runs"}``); a file that
    is not one is an InvalidArgument naming it."""
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise InvalidProgram(f"larger than {MAX_FILE_BYTES} bytes")
        with open(path) as f:
            data = json.load(f)
        if not isinstance(data, dict):
            raise InvalidProgram("not a JSON object")
        return file_case(data)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, InvalidProgram) as exc:
        raise InvalidArgument(f"{path} is not a fuzzaoti program file: {exc}") from None


def check_files(cases: list[Case], device: str, canary: str | None, backend: str, max_bytes: int | None = None,
                names: list[str] | None = None) -> list[tuple[Case, Outcome, str]]:
    """Each case, its outcome and a one-line verdict (``FAILS <signature>``, ``passes``,
    ``invalid: ...``), all compiled as one batch in a fresh worker. A run over ``max_bytes``
    (None: the device's budget) is refused first, an OverBudget naming its file (``names``)."""
    named = [(names[k] if names else f"case {k}", case) for k, case in enumerate(cases)]
    pool = weighed_pool(named, device, backend, canary, max_bytes)
    try:
        outcomes = pool.check(cases)
    finally:
        pool.close()
    return [(case, outcome, _verdict(case, outcome)) for case, outcome in zip(cases, outcomes)]


def _verdict(case: Case, outcome: Outcome) -> str:
    directed = f" ({outcome.runs_directed} of its runs directed at what Inductor assumed)" if outcome.runs_directed else ""
    if outcome.is_finding:
        where = f" at {outcome.env}" if outcome.env else ""
        broke = f", breaking {'; '.join(a.text() for a in outcome.assumptions)}" if outcome.assumptions else ""
        return f"FAILS {signature(outcome, case.program)}{where}{broke}"
    if not outcome.passed:
        return f"invalid: {outcome.message.strip()[:200]}"
    skipped = f" ({outcome.runs_skipped} run(s) skipped: outside the sizes export decided)" if outcome.runs_skipped else ""
    return ("passes" + directed + skipped) if outcome.runs_checked else "not checked" + skipped
