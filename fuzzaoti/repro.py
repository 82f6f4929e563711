"""A stored finding → its standalone repro script (see ``render.repro_script``)."""

from __future__ import annotations

import json

from fuzzaoti.program import Program
from fuzzaoti.render import repro_script


def finding_repro(finding: dict) -> str:
    program = Program.from_json(finding["program"])
    runs = [(r["env"], r["seed"]) for r in json.loads(finding["runs"])]
    header = (f"fuzzaoti finding {finding['id']}: {finding['signature']}\n"
              f"found on torch {finding['torch_version']} ({finding['device']}"
              f"{', ' + finding['device_name'] if finding['device_name'] else ''})"
              + (f"\nunder canary {finding['canary']}: run with python -m fuzzaoti.canaries {finding['canary']} THIS.py"
                 if finding["canary"] else ""))
    return repro_script(program, finding["device"], runs, header)
