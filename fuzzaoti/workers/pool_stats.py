"""What a worker pool's time went to, and the config-set labels its statistics are kept by."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

from fuzzaoti.model.configs import CONFIG_SETS


@dataclass
class PoolStats:
    """What the pool's time went to: a batch that fails as a whole costs its bisection's
    compiles, so a high failure rate, not compile speed, can bound a campaign's throughput."""

    batches: int = 0
    compiles: int = 0
    bisections: int = 0
    compile_s: float = 0.0  # worker-seconds in compiles (and runs) of whole groups
    bisect_compiles: int = 0  # compiles of halves of a group that failed as a whole
    bisect_s: float = 0.0
    bisect_causes: Counter = field(default_factory=Counter)  # what failed whole batches, by signature
    rechecks: int = 0  # members pinned by a run probe (execute._Runner.probe) and checked alone: no bisection
    reloads: int = 0  # the rest of a group whose suspect killed a run, checked from its package: no compile
    reload_s: float = 0.0  # worker-seconds of those (counted in compile_s or bisect_s as well)
    alone: int = 0  # compiles of a quarantined program on its own (the quarantine's rate of them)
    alone_s: float = 0.0  # worker-seconds of those (counted in compile_s as well)
    stage_s: Counter = field(default_factory=Counter)  # worker-seconds per stage (eager, export, compile, ...)
    configs_s: Counter = field(default_factory=Counter)  # worker-seconds per compile config set, bisection included
    configs_programs: Counter = field(default_factory=Counter)  # programs checked per config set

    def add(self, seconds: float, bisecting: bool, stages: dict[str, float], configs: str, programs: int,
            reloaded: bool = False, alone: bool = False) -> None:
        if alone:  # a quarantined program compiled on its own
            self.alone += 1
            self.alone_s += seconds
        if reloaded:
            self.reloads += 1
            self.reload_s += seconds
        else:
            self.compiles += 1
        if bisecting:
            self.bisect_compiles += 1
            self.bisect_s += seconds
        else:
            self.compile_s += seconds
            self.configs_programs[configs] += programs
        self.configs_s[configs] += seconds
        self.stage_s.update(stages)

    @property
    def mean_compile_s(self) -> float:
        """Worker-seconds one compile (and its runs) has taken so far, bisections included; a
        reload's seconds are no compile's (it costs a load), so they count in neither part."""
        return (self.compile_s + self.bisect_s - self.reload_s) / self.compiles if self.compiles else 0.0

    def describe(self) -> str:
        total = self.compile_s + self.bisect_s
        causes = ", ".join(f"{n}x {cause}" for cause, n in self.bisect_causes.most_common(3))
        staged = sum(self.stage_s.values())
        stages = ", ".join(f"{stage} {100 * s / staged:.0f}%" for stage, s in self.stage_s.most_common())
        per_program = ", ".join(f"{configs} {s / max(self.configs_programs[configs], 1):.1f} s "
                                f"({self.configs_programs[configs]} checked)"
                                for configs, s in self.configs_s.most_common())
        return (f"{self.compiles} compiles, {self.bisect_compiles} of them bisecting failed batches "
                f"({100 * self.bisect_s / total if total else 0:.0f}% of worker time)"
                + (f", {self.rechecks} of those rechecking members a run probe pinned" if self.rechecks else "")
                + (f"; {self.reloads} checks of a failed group's rest from its package (no compile)"
                   if self.reloads else "")
                + (f"; {self.alone} compiles of a quarantined program alone "
                   f"({100 * self.alone_s / total if total else 0:.0f}% of worker time)" if self.alone else "")
                + (f"; batches failed with: {causes}" if causes else "")
                + (f"; worker time by stage: {stages}" if stages else "")
                + (f"; worker-seconds per program by configs: {per_program}" if per_program else ""))


def configs_label(configs: tuple | Mapping[str, object]) -> str:
    """A short name for compile configs in statistics: the name of the config set they are
    (``model.configs.CONFIG_SETS``: ``default``, ``simd256``...), else their sorted keys; of a
    program's frozen ``configs`` pairs or of a config set as strategies draw it (a dict). Two
    sets of the same keys (``cpp.simdlen`` 256 and 0) are two labels, each its own batch size."""
    given = dict(configs.items() if isinstance(configs, Mapping) else configs)
    named = next((name for sets in CONFIG_SETS.values() for name, c in sets.items() if c == given), None)
    return named or "+".join(sorted(given)) or "default"
