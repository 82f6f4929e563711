"""A campaign's slowest compiled run, kept with its case so that someone can look at it.

Each worker times the compiled run of every big run and its eager run (``workers.execute``).
The campaign keeps the slowest, stores it as a ``fuzzaoti check`` file in its row
(``fuzzaoti stats --slowest ID`` prints it) and names it in its summary. This is not a finding:
a slow kernel is not a wrong result. But a big run that takes 30 s in AOTI's code and a fraction
of a second in eager costs the campaign minutes, and it may be a performance bug worth filing.
An H100 bench spent three of its seven minutes on one program's eight big runs.
"""

from __future__ import annotations

import json
from typing import Any

from fuzzaoti.check.outcome import Outcome
from fuzzaoti.corpus.campaign_record import CampaignRecord
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model.case import Case, Run


class SlowestRun:
    """The slowest compiled big run seen so far, as ``{"program", "runs", "compiled_s", "eager_s"}``."""

    def __init__(self, stored: dict[str, Any] | None = None):
        self.case: dict[str, Any] | None = stored  # (a resumed campaign's)
        self.changed = False

    def add(self, case: Case, outcome: Outcome) -> None:
        timed = outcome.slowest_run
        if timed is None or (self.case is not None and timed["compiled_s"] <= self.case["compiled_s"]):
            return
        self.case = {"program": case.program.to_dict(), "runs": [Run.of(timed["env"], timed["seed"]).to_dict()],
                     "compiled_s": timed["compiled_s"], "eager_s": timed["eager_s"]}
        self.changed = True

    def stored(self) -> dict[str, str]:
        """The campaign row's ``slowest`` column, when it changed since last stored."""
        if not self.changed:
            return {}
        self.changed = False
        return {"slowest": json.dumps(self.case, sort_keys=True)}

    def describe(self, campaign_id: int | None) -> str:
        """``; slowest compiled run: ...`` for a campaign's summary, or '' when it had no big run."""
        return describe(self.case, campaign_id) if self.case is not None else ""


def describe(case: dict[str, Any], campaign_id: int | None) -> str:
    """``; slowest compiled run: ...`` of a stored case (``SlowestRun.case``): the summary's and ``stats``'s."""
    env = case["runs"][0]["env"]
    ops = "+".join(dict.fromkeys(node["op"] for node in case["program"]["nodes"]))
    compiled, eager = case["compiled_s"], case["eager_s"]
    ratio = compiled / eager if eager > 0 else None
    ratio_note = "" if ratio is None else f", {ratio:.0f}x" if ratio >= 10 else f", {ratio:.1f}x"
    return (f"; slowest compiled run: {_seconds(compiled)} against {_seconds(eager)} in eager{ratio_note} ({ops} at "
            f"{', '.join(f'{k}={v}' for k, v in env.items())}; its case: 'fuzzaoti stats --slowest {campaign_id}')")


def _seconds(seconds: float) -> str:
    """``27.0 s``; ``0.0042 s`` (an H100 campaign's slowest run had printed as 0.0 s, "1x" its eager's 0.03 s)."""
    return f"{seconds:.1f} s" if seconds >= 1 else f"{seconds:.2g} s"


def stored_case(campaigns: list[CampaignRecord], campaign_id: int) -> str:
    """Campaign ``campaign_id``'s slowest run as a ``fuzzaoti check`` file (``stats --slowest``)."""
    campaign = next((c for c in campaigns if c.id == campaign_id), None)
    if campaign is None:
        raise InvalidArgument(f"no campaign {campaign_id} in this corpus")
    if campaign.slowest is None:
        raise InvalidArgument(f"campaign {campaign_id} timed no big run (a large profile's run past a crossing)")
    return json.dumps(campaign.slowest, indent=1)
