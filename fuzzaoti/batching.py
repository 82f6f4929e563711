"""Adaptive batch size: the number of programs per AOTI compile that checks the most per minute.

One compile of a merged module costs a fixed part (export, C++ build, load: seconds on CPU, up
to a minute for a first CUDA compile) plus a part per program that grows with the module (on a
2-core CPU a 64-program module costs more per program than a 16-program one). So the size
climbs the measured throughput (programs per second, per size): it doubles while the last
doubling paid off clearly (an untried bigger size is only worth a batch while the climb is
still going up), steps back to half when the half was clearly faster, and halves
at once when a batch needed bisection, lost a worker, or ran past 1.5x the target time (a long
batch delays progress lines, shrinking and Ctrl-C).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MIN_BATCH = 4
MAX_BATCH = 64
TARGET_S = 120.0
CLEARLY = 1.1  # a size must be this much faster to be preferred: timing noise is no reason to move


@dataclass
class AdaptiveBatch:
    size: int = 16
    fixed: bool = False  # a size the user gave: never changed
    low: int = MIN_BATCH
    high: int = MAX_BATCH
    target_s: float = TARGET_S
    rate: dict[int, float] = field(default_factory=dict)  # size -> programs per second (smoothed)

    def update(self, seconds: float, troubled: bool, checked: int | None = None, size: int | None = None) -> int:
        """The size for the next batch, after one drawn at ``size`` (default: the current size)
        took ``seconds``; ``troubled``: it was bisected or a worker had to be replaced. A batch
        that checked another number (``checked``: cut to fit the time left, or short of clean
        programs) teaches nothing; one drawn before the size last changed (batches are queued
        one ahead) only adds its rate."""
        size = self.size if size is None else size
        if self.fixed or (checked is not None and checked != size):
            return self.size
        if troubled or seconds > 1.5 * self.target_s:
            self.size = max(self.low, min(self.size, size // 2))
            return self.size
        measured = size / max(seconds, 1e-6)
        old = self.rate.get(size)
        self.rate[size] = measured if old is None else (old + measured) / 2
        if size != self.size:
            return self.size
        mine, up, down = self.rate[self.size], self.size * 2, self.size // 2
        if down >= self.low and self.rate.get(down, 0.0) > CLEARLY * mine:
            self.size = down
        elif (up <= self.high and seconds * 2 <= 1.5 * self.target_s and self.rate.get(up, float("inf")) > mine
              and (down not in self.rate or mine > CLEARLY * self.rate[down])):
            self.size = up  # still climbing: the last doubling paid off (or this is the first step)
        return self.size

    def fitting(self, seconds_left: float) -> int:
        """The size to check now: ``size``, or fewer when a batch of ``size`` would run past the
        campaign's end at the measured programs per second (a 64-program batch can take minutes:
        ``--minutes`` is kept, not overrun by one last batch). Never below ``low``."""
        rate = self.rate.get(self.size) or max(self.rate.values(), default=0.0)
        if self.fixed or rate <= 0:
            return self.size
        return max(self.low, min(self.size, int(rate * max(seconds_left, 0.0))))
