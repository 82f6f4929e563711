"""The guided campaign (``fuzz --guided``): a share of its draws are mutants of programs that
took a compiler decision combination no program of the campaign had taken before.

The fuzzers that find the most keep the inputs that reach new behaviour and spend their time
near them. Here the behaviour is Inductor's decisions per C++ loop nest
(``coverage.decisions``), and the inputs are programs: after each batch the workers say which
of its programs took which combinations (``decisions.by_member``: a merged compile's loop nests
are told apart by the member whose nodes they compute, so no program is compiled again to
learn it), and a program that took a new one becomes a *seed*. Each batch Hypothesis draws then
has ``share`` of its programs replaced by mutants of seeds (``strategies.mutants``), made by a
generator seeded from the campaign's seed and the batch's number, so a campaign's ``--seed``
still decides everything while its seeds are the same.

The share follows what pays: the rate at which mutants took new combinations against the rate
of fresh draws (each with one success in two trials as a prior, so neither arm is starved by
its first few batches; each batch's tallies weigh ``DECAY`` times the next one's, so the rates
are those of the last few batches, as a campaign's easy combinations run out), kept within
``SHARE_RANGE`` so both arms go on being measured. A GPU
compile's Triton kernels and the extern kernels are not told apart by program: they count in
the campaign's coverage, not in its seeds.
"""

from __future__ import annotations

import random
from typing import Callable

from fuzzaoti.model.case import Case
from fuzzaoti.model.program import Program
from fuzzaoti.strategies.mutants import mutant_case
from fuzzaoti.strategies.profiles import Profile

#: the share of drawn programs that are mutants stays in here: the arm that pays less is still
#: drawn often enough to show when it starts paying again
SHARE_RANGE = (0.2, 0.8)
#: the newest seeds kept: an old seed's neighbourhood has had its chances
MAX_SEEDS = 64
#: how much a batch's tallies weigh against the next one's (halved in two batches)
DECAY = 0.7


class Guide:
    """The seeds, the share of mutants, and what each arm has yielded so far."""

    def __init__(self, profile: Profile, runs: int, share: float = 0.5) -> None:
        self.profile, self.runs = profile, runs
        self.seeds: list[Program] = []
        self._share = share
        self._mutants: set[str] = set()  # the ids of programs drawn as mutants
        self.tried = {"mutant": 0.0, "fresh": 0.0}  # programs told apart, by arm, decayed
        self.paid = {"mutant": 0.0, "fresh": 0.0}  # ... of which took a new combination
        self.total = {"mutant": [0, 0], "fresh": [0, 0]}  # (told apart, took a new one), for the summary

    def share(self) -> float:
        return self._share

    def substitute(self, drawn: list[Case], key: str, wanted: Callable[[str], bool] = lambda program_id: True) -> list[Case]:
        """``drawn`` (one batch, one config set) with ``share`` of its cases replaced by
        mutants of seeds, picked by a generator seeded with ``key``; only by a mutant the
        campaign ``wanted`` (one of its shard's programs, not checked before)."""
        if not self.seeds or not drawn:
            return drawn
        rng = random.Random(key)
        configs = dict(drawn[0].program.configs)
        taken = {case.program.id for case in drawn}
        out = []
        for case in drawn:
            if rng.random() < self._share:
                mutant = mutant_case(rng.choice(self.seeds), configs, rng, self.profile, self.runs)
                if mutant is not None and mutant.program.id not in taken and wanted(mutant.program.id):
                    taken.add(mutant.program.id)
                    self._mutants.add(mutant.program.id)
                    out.append(mutant)
                    continue
            out.append(case)
        return out

    def learn(self, drawn: list[Case], novel: dict[str, int]) -> None:
        """Take in a batch's programs and, for those told apart (``novel``: program id -> new
        combinations it took), keep those with any as seeds and move the share."""
        for arm in self.tried:
            self.tried[arm] *= DECAY
            self.paid[arm] *= DECAY
        for case in drawn:
            new = novel.get(case.program.id)
            if new is None:
                continue
            arm = "mutant" if case.program.id in self._mutants else "fresh"
            self.tried[arm] += 1
            self.total[arm][0] += 1
            if new:
                self.paid[arm] += 1
                self.total[arm][1] += 1
                self.seeds = [s for s in self.seeds if s.id != case.program.id][-(MAX_SEEDS - 1):] + [case.program]
        rate = {arm: (self.paid[arm] + 1) / (self.tried[arm] + 2) for arm in self.tried}
        low, high = SHARE_RANGE
        self._share = min(high, max(low, rate["mutant"] / (rate["mutant"] + rate["fresh"])))

    def describe(self) -> str:
        """The summary's words for it."""
        arms = ", ".join(f"{self.total[arm][1]} of {self.total[arm][0]} {arm} programs took a new combination"
                         for arm in ("mutant", "fresh"))
        return f"guided: {len(self.seeds)} seeds, mutants {self._share:.0%} of draws; {arms}"
