"""Where a worker's time goes: the seconds of each stage of a batch (``StageClock``).

It decides how to make a campaign faster, and it differs between CPU and GPU. The time of one
program's big runs is kept apart, with its case (``execute._Member.timed``, ``fuzzaoti.campaign.slowest``).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Callable

from fuzzaoti.check.outcome import Stage
from fuzzaoti.workers.protocol import Announcement

Progress = Callable[[Announcement], None]


class StageClock:
    """Wraps the progress callback to add up the seconds spent in each stage (``run 3`` and
    ``compare 3`` count as ``run`` and ``compare``): where a worker's time goes is what decides
    how to make a campaign faster, and it differs between CPU and GPU. A big run (one member at
    a time, its expectation made at its turn) counts apart, as ``big-eager``, ``big-run`` and
    ``big-compare``: the large profile's time per run past a crossing is its own question."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self.seconds: Counter = Counter()
        self.current: Announcement | None = None
        self.since = time.monotonic()

    def __call__(self, announced: Announcement | str) -> None:
        """Announce a step (a bare word is a step of no run: ``clock("eager")``)."""
        self._close()
        self.current = Announcement(announced) if isinstance(announced, str) else announced
        self.progress(self.current)

    def _close(self) -> None:
        now = time.monotonic()
        if self.current is not None:
            self.seconds[self.current.step] += now - self.since
        self.since = now

    @property
    def outcome_stage(self) -> Stage:
        """The current stage as an ``Outcome`` names it (a big run's ``big-run`` is ``run``)."""
        return self.current.stage if self.current is not None else Stage.RUN

    def totals(self) -> dict[str, float]:
        self._close()
        self.current = None
        return {stage: round(s, 3) for stage, s in self.seconds.items()}
