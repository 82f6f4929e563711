"""Families: findings that probably share one root cause, shown to a maintainer once.

Different signatures often come from one wrong decision (the same index-width mistake breaks
an add, a cat and a reduction alike). Two findings are one family when, after shrinking, they
fail at the same stage with the same symptom, through the same core (matmul/indexing) ops, on
the same device, and the same hand remedies make them pass.
"""

from __future__ import annotations

import json
from typing import Iterable

from fuzzaoti.model.ops import OPS
from fuzzaoti.findings.repro import finding_case


def family_key(finding: dict) -> str:
    program = finding_case(finding).program
    core = sorted({op for op in program.ops if OPS[op].family in ("matmul", "indexing")}) or ["pointwise"]
    remedies = json.loads(finding.get("workarounds") or "{}")
    cured = ", ".join(sorted(name for name, verdict in remedies.items() if verdict == "passes")) or "none"
    canary = f" canary={finding['canary']}" if finding.get("canary") else ""
    return (f"{finding['device']}{canary} {finding['stage']}/{finding['symptom']} via {'+'.join(core)}"
            f"; passes with: {cured if remedies else 'not triaged'}")


def families(findings: Iterable[dict]) -> dict[str, list[dict]]:
    """``{family key: findings}``, families in order of their first finding."""
    out: dict[str, list[dict]] = {}
    for f in findings:
        out.setdefault(family_key(f), []).append(f)
    return out


def relatives(finding: dict, findings: Iterable[dict]) -> list[int]:
    """Ids of the other findings of ``finding``'s family (a report names them)."""
    key = family_key(finding)
    return [f["id"] for f in findings if f["id"] != finding["id"] and family_key(f) == key]
