"""A test case: a program and the runs it is checked at. Plain data, shared by every phase
after generation (the pool, the shrinker, triage, replay), so none of them imports Hypothesis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, NamedTuple

from fuzzaoti.errors import InvalidProgram
from fuzzaoti.model.ops import is_int
from fuzzaoti.model.program import Program
from fuzzaoti.model.scale import FEED_MAX


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
        """The inverse of ``run_dicts``: runs as stored in a corpus or a program file, each
        checked (``check_run``): they are someone else's data as much as the program is."""
        if not isinstance(runs, list):
            raise InvalidProgram(f"runs must be a JSON list, not {type(runs).__name__}")
        return cls(program, tuple(check_run(program, r, k) for k, r in enumerate(runs)))


#: the largest input seed a run may name (``torch.Generator.manual_seed`` takes 64 bits)
MAX_SEED = 2**63 - 1


def check_run(program: Program, run: object, k: int = 0) -> Run:
    """Run ``k`` of ``program`` as stored (``{"env": {dim: size}, "seed": int}``), or an
    InvalidProgram naming what is wrong: every root dim given an int size in its range (a dim of
    no max up to ``FEED_MAX``, the most fuzzaoti feeds), no other names, a seed in 0..2**63-1."""
    if not isinstance(run, Mapping) or set(run) != {"env", "seed"} or not isinstance(run["env"], Mapping):
        raise InvalidProgram(f"run {k} must be an object {{\"env\": {{dim: size}}, \"seed\": int}}")
    env, seed = run["env"], run["seed"]
    if set(env) != set(program.dim):
        raise InvalidProgram(f"run {k} sizes dims {sorted(map(str, env))}, the program has {sorted(program.dim)}")
    for name, size in env.items():
        d = program.dim[name]
        top = d.max if d.max is not None else FEED_MAX
        if not is_int(size) or not d.min <= size <= top:
            raise InvalidProgram(f"run {k} gives dim {name!r} size {size!r}, outside its range [{d.min}, {top}]")
    if not is_int(seed) or not 0 <= seed <= MAX_SEED:
        raise InvalidProgram(f"run {k} has seed {seed!r}, not an int in [0, 2**63)")
    return Run.of(env, seed)


def run_seed(first: int, k: int) -> int:
    """The input seed of a case's run ``k``: distinct for each run, ``first`` for the first (a
    drawn case's, ``strategies._shapes``, and a run a worker adds, ``workers.directed``)."""
    return (first + k * 0x9E3779B1) % 2**31
