"""The corpus as a regression suite: what each stored finding and each ``corpus/known/`` entry
must do on the installed torch, and whether a replay did it.

The pytest plugin (``fuzzaoti.pytest_plugin``) turns each ``Subject`` here into a test item; this
module knows nothing of pytest, so a script can ask the same questions. The rules:

* an open finding (``new`` or ``known``) must still fail: a pass is a fix, shown as an
  unexpected pass (strict xfail);
* a finding marked ``fixed`` must pass: a failure is a regression;
* a known entry must fail *with its signature* inside its torch range (``fails_from`` up to
  ``fixed_in``, ``corpus.known_bugs.expected_result``) and pass from ``fixed_in`` on; before
  ``fails_from`` nothing is known, and it is skipped.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from fuzzaoti.check.outcome import Outcome
from fuzzaoti.check.signature import signature
from fuzzaoti.corpus.finding import Finding
from fuzzaoti.corpus.known_bugs import builtin_entries, expected_result
from fuzzaoti.model.case import Case
from fuzzaoti.model.program import Program

#: what a check did against what its subject expects
AS_EXPECTED, FIXED, REGRESSED, FAILS_DIFFERENTLY, INVALID = (
    "as expected", "fixed", "regressed", "fails differently", "invalid")


@dataclass(frozen=True)
class Subject:
    """One item of the suite: a stored finding (``finding`` set) or a known entry."""

    name: str  # the test item's name: id and title
    device: str
    case: Case
    expect: str  # "fail", "pass" or "unknown" (skipped)
    reason: str  # why it is expected to: shown with the xfail, the skip or the failure
    status: str  # the finding's status, or "known-entry"
    stage: str
    signature: str = ""  # a known entry's: its failure must have this signature, or match
    patterns: tuple[str, ...] = ()  # one of these globs (a crash's text varies with its threads)
    finding: Finding | None = None
    canary: str = ""  # the canary a finding was found under ("" for none)


@dataclass(frozen=True)
class Judged:
    """A check's outcome against its subject's expectation: ``kind`` is one of the module's
    constants; ``text`` says it for a maintainer."""

    kind: str
    text: str


def finding_subject(f: Finding) -> Subject:
    """A stored finding as a suite item: expected to fail while open, to pass once fixed."""
    title = f"{f.stage} {f.symptom} {' '.join(dict.fromkeys(n.op for n in f.case.program.nodes))} {f.device}"
    canary = f" under canary {f.canary}" if f.canary else ""
    if f.status == "fixed":
        expect, reason = "pass", f"finding {f.id} is marked fixed: it must pass"
    else:
        expect, reason = "fail", f"finding {f.id} [{f.status}]{canary} still open: {f.signature[:160]}"
    return Subject(f"finding-{f.id}[{_slug(title)}]", f.device, f.case, expect, reason, f.status, f.stage,
                   finding=f, canary=f.canary)


def known_subjects(torch_version: str) -> list[Subject]:
    """Every ``corpus/known/`` entry as a suite item, expected to do what its entry says for
    ``torch_version``."""
    subjects = []
    for entry in builtin_entries():
        expect = expected_result(entry, torch_version)
        if expect == "pass":
            reason = f"fixed in torch {entry.fixed_in}: it must pass"
        elif expect == "fail":
            upstream = f" ({entry.upstream})" if entry.upstream else ""
            reason = f"{entry.title}{upstream}: fails from torch {entry.fails_from} " + (
                f"until {entry.fixed_in}" if entry.fixed_in else "(no fix known)")
        else:
            reason = f"not known to fail before torch {entry.fails_from}"
        case = Case.from_run_dicts(Program.from_dict(entry.program), list(entry.runs))
        subjects.append(Subject(entry.name, entry.device, case, expect, reason,
                                "known-entry", entry.stage, signature=entry.signature, patterns=entry.patterns))
    return subjects


def judge(subject: Subject, outcome: Outcome) -> Judged:
    """What ``outcome`` (a check of ``subject.case``) means against what ``subject`` expects."""
    got = signature(outcome, subject.case.program) if outcome.is_finding else outcome.symptom
    if outcome.symptom == "invalid":
        return Judged(INVALID, f"the program is not valid on this torch: {outcome.message[:300]}")
    if subject.expect == "fail":
        if not outcome.is_finding:
            return Judged(FIXED, f"passes: {subject.reason}")
        if subject.signature and got != subject.signature and not any(
                fnmatch.fnmatchcase(got, p) for p in subject.patterns):
            return Judged(FAILS_DIFFERENTLY, f"fails, but as {got} (expected {subject.signature})")
        return Judged(AS_EXPECTED, f"still fails: {got}")
    if outcome.is_finding:
        return Judged(REGRESSED, f"fails again: {got}\n{outcome.message[:2000]}")
    return Judged(AS_EXPECTED, "passes")


def _slug(text: str, limit: int = 60) -> str:
    """An item-name-safe form of ``text`` (``-k`` matches words of it)."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", text).strip("-")[:limit]
