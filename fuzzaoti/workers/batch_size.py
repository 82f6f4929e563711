"""Adaptive batch size: the number of programs per AOTI compile that checks the most per minute.

One compile of a merged module costs a fixed part (export, C++ build, load: seconds on CPU, up
to a minute for a first CUDA compile) plus a part per program that grows with the module (on a
2-core CPU a 64-program module costs more per program than a 16-program one). So the size
climbs the measured throughput (programs per second, per size): it doubles while the last
doubling paid off clearly (an untried bigger size is only worth a batch while the climb is
still going up), steps back to half when the half was clearly faster, and halves
at once when a batch needed a blind bisection (a failure, a crash or a hang pinned on no member:
its compiles grow with the batch) or ran past 1.5x the target time (a long batch delays progress
lines, shrinking and Ctrl-C).

A failure pinned on one member costs the same whatever the batch's size (that member and the
rest compiled apart, or a probe-pinned member alone; a GPU worker retired after a wrong value or
an illegal memory access is replaced by a warm standby), so it does not halve the size. In the
large profile, where AOTI's int32 indexing of unbounded dims makes both common, halving for them
sent an H200 campaign's batches to the floor of 4 (1.4 programs a compile, compiles 79% of the
worker time), and an H100 campaign's from 8 to 4 after its first illegal memory access (2.0
programs a compile in the bench beside it).
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
        took ``seconds``; ``troubled``: it needed a blind bisection (``pool.Submitted.blind``). A batch
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


class BatchSizes:
    """One ``AdaptiveBatch`` per compile config set, made on first use.

    Config sets differ several-fold in what a program costs (H200, worker-seconds per batched
    program: defaults 1.1, triton.native_matmul 3.3-4.6, max_autotune 7-8.6), so one shared size
    learned from a mix of rates: a batch's rate said more about its configs than about its size,
    and a slow native_matmul batch at a new size could send the defaults back down a size they
    gain from. Each set climbs on its own measurements instead."""

    def __init__(self, start: int = 16, fixed: bool = False, high: int = MAX_BATCH):
        self.start, self.fixed, self.high = start, fixed, high
        self.sets: dict[str, AdaptiveBatch] = {}

    def of(self, key: str) -> AdaptiveBatch:
        if key not in self.sets:
            self.sets[key] = AdaptiveBatch(self.start, fixed=self.fixed, high=max(self.high, self.start))
        return self.sets[key]

    def rate(self, key: str) -> float:
        """Programs per second of set ``key`` at its size (or its best size, or, before its first
        batch is done, the slowest rate measured for another set: an estimate that errs long)."""
        own = self.of(key)
        measured = own.rate.get(own.size) or max(own.rate.values(), default=0.0)
        if measured > 0:
            return measured
        others = [r for b in self.sets.values() for r in b.rate.values() if r > 0]
        return min(others, default=0.0)

    def fitting(self, key: str, seconds_left: float) -> int:
        """The size to check now for set ``key``: its size, or fewer when a batch of that size
        would run past the campaign's end at ``rate(key)`` (a 64-program batch can take minutes:
        ``--minutes`` is kept, not overrun by one last batch). Never below ``low``."""
        batch = self.of(key)
        rate = self.rate(key)
        if batch.fixed or rate <= 0:
            return batch.size
        return max(batch.low, min(batch.size, int(rate * max(seconds_left, 0.0))))

    def describe(self) -> str:
        """The next size of each set: ``32`` with one set, ``default 64, max_autotune 16`` with more."""
        if len(self.sets) <= 1:
            return str(next(iter(self.sets.values())).size if self.sets else self.start)
        return ", ".join(f"{key} {b.size}" for key, b in self.sets.items())
