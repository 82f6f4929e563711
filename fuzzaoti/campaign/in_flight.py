"""The batches a campaign has handed to the worker pool and not yet recorded, oldest first.

A campaign records its batches in the order it drew them, each once all its groups are in, and
keeps one more queued behind the one being recorded, so the workers go on with it while the
campaign thread records, shrinks and draws. But one group can hold a batch for minutes: on an
H100, an ``amax`` over an int8 row of 2**32-1 elements, compiled for its export hint of 10 (a
reduction split by the hint: not at all), took 27 s a run against 0.01 s in eager, and its
member's eight big runs held worker 0 for about three minutes while the other two, done with the
one batch queued, idled.
So while the oldest batch is not done and a worker has nothing to take, the campaign draws
another for it (``settle``), up to one a worker beyond the oldest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from fuzzaoti.check.outcome import Outcome
from fuzzaoti.model.case import Case
from fuzzaoti.workers.pool import Submitted, WorkerPool

WAIT_S = 0.5  # how often the oldest batch and the pool are looked at while the campaign waits


@dataclass
class InFlight:
    """A batch handed to the pool and not yet recorded."""

    batch: Submitted
    drawn: list[Case]  # the cases checked, in the pool's order
    choices: list[bytes]  # Hypothesis's choices of the draws it holds: saved in the corpus if it failed
    configs: str  # its config set (``configs_label``): each set has its own adaptive size
    size: int  # the adaptive size it was drawn at
    submitted_at: float
    recorded: set[int] = field(default_factory=set)  # positions in ``drawn`` already stored as findings
    # of those, position -> (finding id, the outcome stored): a member pinned by its worker's fault
    # (``workers.faults``) has that outcome replaced by its compile alone's, which confirms it
    stored: dict[int, tuple[int, Outcome]] = field(default_factory=dict)


def settle(in_flight: list[InFlight], pool: WorkerPool, finish: Callable[[InFlight], None],
           waiting: Callable[[InFlight], None], time_up: Callable[[], bool]) -> None:
    """Record (``finish``) the batches of ``in_flight``, oldest first, until the campaign should
    draw the next: when one batch is left queued, or when the oldest is still being checked and
    the pool is ``starving`` (a worker with nothing to take). Meanwhile ``waiting`` is called with
    the oldest twice a second (progress lines; dropping what is queued past the deadline). Once
    ``time_up``, it returns at once: the campaign records the rest as it ends."""
    cap = len(pool.workers) + 1
    while len(in_flight) > 1 and not time_up():
        oldest = in_flight[0]
        if oldest.batch.done or len(in_flight) > cap:
            finish(in_flight.pop(0))
        elif pool.starving:
            return
        else:
            oldest.batch.wait(WAIT_S)
            waiting(oldest)
