"""A stored finding → its case and its standalone repro script (see ``render.repro_script``)."""

from __future__ import annotations

from fuzzaoti.model.program import Program
from fuzzaoti.compile.render import repro_script
from fuzzaoti.model.case import Case
from fuzzaoti.corpus.finding import Finding


def file_case(data: dict) -> Case:
    """A case from a hand-written JSON file: ``{"program": {...}, "runs": [...]}`` (the form of
    ``corpus/known/*.json``), or a bare program checked at its export-time sizes."""
    program = Program.from_dict(data["program"] if "program" in data else data)
    return Case.from_run_dicts(program, data.get("runs") or [{"env": program.hint_env(), "seed": 0}])


def finding_repro(finding: Finding) -> str:
    case = finding.case
    header = (f"fuzzaoti finding {finding.id}: {finding.signature}\n"
              f"found on torch {finding.torch_version} ({finding.device}"
              f"{', ' + finding.device_name if finding.device_name else ''})"
              + (f"\nunder canary {finding.canary}: run with python -m fuzzaoti.compile.canaries {finding.canary} THIS.py"
                 if finding.canary else ""))
    return repro_script(case.program, finding.device, [(dict(env), seed) for env, seed in case.runs], header)
