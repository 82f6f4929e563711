"""Families: findings that probably share one root cause, shown to a maintainer once.

Different signatures often come from one wrong decision (the same index-width mistake breaks
an add, a cat and a reduction alike). Two findings are one family when, after shrinking, they
fail at the same stage with the same symptom, through the same core (matmul/indexing) ops, on
the same device, the same hand remedies make them pass, and their failing runs broke guards
Inductor added at the same code sites (``compile.assumptions``; the function that added a guard
is where a fix goes, and two sites are two fixes).
"""

from __future__ import annotations

from typing import Iterable

from fuzzaoti.model.ops import OPS
from fuzzaoti.corpus.finding import Finding


def family_key(finding: Finding) -> str:
    program = finding.case.program
    core = sorted({op for op in program.ops if OPS[op].family in ("matmul", "indexing")}) or ["pointwise"]
    remedies = finding.workarounds
    cured = ", ".join(sorted(name for name, verdict in remedies.items() if verdict.passed)) or "none"
    canary = f" canary={finding.canary}" if finding.canary else ""
    sites = sorted({a.function or a.site for a in finding.assumptions})
    broke = f"; breaks Inductor's guards of {', '.join(sites)}" if sites else ""
    return (f"{finding.device}{canary} {finding.stage}/{finding.symptom} via {'+'.join(core)}"
            f"; passes with: {cured if remedies else 'not triaged'}{broke}")


def families(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """``{family key: findings}``, families in order of their first finding."""
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(family_key(f), []).append(f)
    return out


def relatives(finding: Finding, findings: Iterable[Finding]) -> list[int]:
    """Ids of the other findings of ``finding``'s family (a report names them)."""
    key = family_key(finding)
    return [f.id for f in findings if f.id != finding.id and family_key(f) == key]
