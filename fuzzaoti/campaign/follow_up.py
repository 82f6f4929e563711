"""What a campaign does with a new finding (shrink it, then triage it), and when.

A finding that fails its whole compiled batch (a crash, an error at compile, load or run:
``fails_whole_batch``) is followed up at once when its program has several ops. Its shrunk
program's trigger then quarantines the programs that would trip it again, and each of those
would otherwise cost a bisection of its batch. A one-op program's trigger is quarantined as it
is, and its follow-up waits like a wrong result's.

A wrong result waits until the campaign's deadline has passed. Hitting it again costs nothing,
because its program alone is marked wrong. Shrinking it inside the deadline only takes minutes
away from generation: on the H200 one large wrong-result finding took 232 s to shrink, then
its triage, inside a 10-minute campaign. Deferred findings get a budget of their own after the
deadline (``--follow-up-minutes``), so ``--minutes`` stays the time spent generating.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from fuzzaoti.check.outcome import fails_whole_batch
from fuzzaoti.findings.triage import triage_finding
from fuzzaoti.findings.shrink import shrink_finding


def deferred(stage: str, symptom: str, ops: int) -> bool:
    """Whether a new finding's shrink and triage wait until after the deadline: it is a wrong
    result (or another failure judged per program), so it costs the campaign nothing more when
    hit again; or its program has one op, so its own trigger, quarantined at once, is already
    the op a shrink would leave (the H200 spent 119 s shrinking one such crash, 1 -> 1 ops,
    and its triage more, inside a 10-minute campaign)."""
    return not fails_whole_batch(stage, symptom) or ops <= 1


@dataclass
class FollowUps:
    """Shrinks and triages a campaign's new findings through its worker pool's ``check``.

    ``step_s`` is the cost of one step (a compile: the mean one so far; a large batch's ran past
    82 s on the H200, a CPU one 8-30 s), read when it is needed. A step that the time left
    cannot hold is not begun, and the finding is named for ``fuzzaoti shrink`` or ``fuzzaoti
    triage`` later.
    """

    corpus: object
    check: Callable
    step_s: Callable[[], float]
    shrink_s: float  # each finding's shrink budget; 0: no shrinking
    triage: bool  # triage after shrinking (AOTI campaigns only)
    echo: Callable[[str], None] = print
    waiting: list[int] = field(default_factory=list)  # deferred finding ids, in the order found

    def one(self, finding_id: int, left_s: Callable[[], float]) -> bool:
        """Shrink, then triage, one finding within ``left_s()`` seconds. Returns True if triage
        found it one more member of a known family's root cause."""
        step = self.step_s()
        if self.shrink_s > 0 and left_s() > step:
            shrink_finding(self.corpus, finding_id, self.check, min(self.shrink_s, left_s()), self.echo)
        elif self.shrink_s > 0:
            self.echo(f"  (no time left to shrink: run 'fuzzaoti shrink {finding_id}')")
        if self.triage and left_s() > step:
            return bool(triage_finding(self.corpus, finding_id, self.check, self.echo)["member"])
        if self.triage:
            self.echo(f"  (no time left to triage: run 'fuzzaoti triage {finding_id}')")
        return False

    def after_deadline(self, budget_s: float) -> list[int]:
        """Follow up the deferred findings, oldest first, within ``budget_s`` in all. Returns
        the ids that triage found members of a known family."""
        if not self.waiting or (self.shrink_s <= 0 and not self.triage):
            return []
        end = time.monotonic() + budget_s
        doing = " and ".join(what for what, on in (("shrinking", self.shrink_s > 0), ("triaging", self.triage)) if on)
        self.echo(f"follow-up: {doing} {len(self.waiting)} new finding(s) left for after the deadline, up to "
                  f"{budget_s / 60:g} min in all")
        members = []
        while self.waiting:
            finding_id = self.waiting[0]  # still listed as waiting while it is being followed up
            self.echo(f"  finding {finding_id}:")
            if self.one(finding_id, lambda: end - time.monotonic()):
                members.append(finding_id)
            self.waiting.pop(0)
        return members
