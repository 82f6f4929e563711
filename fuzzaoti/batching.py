"""Adaptive batch size: as many programs per AOTI compile as keep a batch near a target time.

One compile of a merged module costs a fixed part (export, C++ build, load: seconds on CPU, up
to a minute for a first CUDA compile) plus a part per program; a bigger batch amortises the
fixed part, but a batch that fails as a whole is bisected (each level another compile), and a
long batch delays progress, shrinking and Ctrl-C. So the size doubles while batches finish in
under half the target time and halves when one takes over one and a half times the target,
or when a batch needed bisection or lost a worker (a crash or a timeout re-checks its cases).
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_BATCH = 4
MAX_BATCH = 64
TARGET_S = 120.0


@dataclass
class AdaptiveBatch:
    size: int = 16
    fixed: bool = False  # a size the user gave: never changed
    low: int = MIN_BATCH
    high: int = MAX_BATCH
    target_s: float = TARGET_S

    def update(self, seconds: float, troubled: bool) -> int:
        """The size for the next batch, after one of ``self.size`` took ``seconds``;
        ``troubled``: it was bisected or a worker had to be replaced."""
        if self.fixed:
            return self.size
        if troubled or seconds > 1.5 * self.target_s:
            self.size = max(self.low, self.size // 2)
        elif seconds < 0.5 * self.target_s:
            self.size = min(self.high, self.size * 2)
        return self.size
