"""A test case: a program and the runs it is checked at. Plain data, shared by every phase
after generation (the pool, the shrinker, triage, replay), so none of them imports Hypothesis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, NamedTuple

from fuzzaoti.model.program import Program


class Run(NamedTuple):
    """One run of a compiled program: a runtime size for every root dim, and the seed its
    inputs are drawn from (``fuzzaoti.model.inputs``). ``env`` is sorted pairs: hashable."""

    env: tuple[tuple[str, int], ...]
    seed: int

    @classmethod
    def of(cls, env: Mapping[str, int], seed: int) -> Run:
        return cls(tuple(sorted(env.items())), int(seed))

    def to_dict(self) -> dict:
        return {"env": dict(self.env), "seed": self.seed}


@dataclass(frozen=True)
class Case:
    """A program and the runs it is checked at."""

    program: Program
    runs: tuple[Run, ...]

    def __post_init__(self) -> None:  # plain (env, seed) pairs are accepted and made Runs
        object.__setattr__(self, "runs", tuple(Run(tuple(env), seed) for env, seed in self.runs))

    def run_dicts(self) -> list[dict]:
        return [run.to_dict() for run in self.runs]

    @classmethod
    def from_run_dicts(cls, program: Program, runs: list[dict]) -> Case:
        """The inverse of ``run_dicts``: runs as stored in a corpus or a program file."""
        return cls(program, tuple(Run.of(r["env"], r["seed"]) for r in runs))


def run_seed(first: int, k: int) -> int:
    """The input seed of a case's run ``k``: distinct for each run, ``first`` for the first (a
    drawn case's, ``strategies._shapes``, and a run a worker adds, ``workers.directed``)."""
    return (first + k * 0x9E3779B1) % 2**31
