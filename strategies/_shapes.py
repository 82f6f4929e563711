"""Runtime shapes: where one compiled program is checked, always inside its declared ranges."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from fuzzaoti.concrete import input_bytes
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.program import Program
from fuzzaoti.strategies._profiles import get_profile


@dataclass(frozen=True)
class Case:
    """A program and the runs it is checked at: ``(dim assignment, input seed)`` pairs."""

    program: Program
    runs: tuple[tuple[tuple[tuple[str, int], ...], int], ...]

    def run_dicts(self) -> list[dict]:
        return [{"env": dict(env), "seed": seed} for env, seed in self.runs]

    @classmethod
    def from_run_dicts(cls, program: Program, runs: list[dict]) -> Case:
        """The inverse of ``run_dicts``: runs as stored in a corpus or a program file."""
        return cls(program, tuple((tuple(sorted(r["env"].items())), r["seed"]) for r in runs))


def _boundaries(lo: int, hi: int) -> list[int]:
    """min, max, and the sizes around powers of two in between (where element counts cross them)."""
    out = [lo, hi]
    power = 1
    while power <= hi + 1:
        out += [power - 1, power, power + 1]
        power *= 2
    return sorted({v for v in out if lo <= v <= hi}, key=lambda v: (v != lo, v != hi, v))


def _fit(program: Program, env: dict[str, int], max_bytes: int) -> dict[str, int]:
    """Halve the largest dims (never below their min) until the inputs fit ``max_bytes``."""
    env = dict(env)
    mins = {d.name: d.min for d in program.dims}
    while input_bytes(program, env) > max_bytes:
        name = max((n for n in env if env[n] > mins[n]), key=lambda n: env[n], default=None)
        if name is None:
            break
        env[name] = max(mins[name], env[name] // 2)
    return env


def runtime_shapes(program: Program, cap: int = 96, max_bytes: int = 8 << 20) -> st.SearchStrategy[dict[str, int]]:
    """One assignment of every root dim of ``program``, inside its declared range.

    Unbounded dims are capped at ``cap``; inputs are kept under ``max_bytes``. Sizes are biased
    towards the boundaries (min, max, powers of two ± 1); shrinks towards each dim's min.
    """
    if cap < 1:
        raise InvalidArgument(f"Cannot have cap={cap} < 1")
    per_dim = {}
    for d in program.dims:
        hi = d.max if d.max is not None else max(cap, d.min)
        per_dim[d.name] = st.one_of(st.sampled_from(_boundaries(d.min, hi)), st.integers(d.min, hi))
    return st.fixed_dictionaries(per_dim).map(lambda env: _fit(program, env, max_bytes))


@st.composite
def _cases(draw, programs_strategy, runs: int, cap: int, max_bytes: int) -> Case:
    program = draw(programs_strategy)
    envs = draw(st.lists(runtime_shapes(program, cap, max_bytes), min_size=1, max_size=runs))
    seeds = draw(st.lists(st.integers(0, 2**31 - 1), min_size=len(envs), max_size=len(envs)))
    return Case(program, tuple((tuple(sorted(e.items())), s) for e, s in zip(envs, seeds)))


def cases(programs_strategy, runs: int = 4, profile: str = "small",
          max_bytes: int | None = None) -> st.SearchStrategy[Case]:
    """A program from ``programs_strategy`` with 1 to ``runs`` runtime shapes and input seeds;
    each shape keeps the inputs within the profile's byte budget (or ``max_bytes``)."""
    if runs < 1:
        raise InvalidArgument(f"Cannot have runs={runs} < 1")
    prof = get_profile(profile, max_bytes)
    return _cases(programs_strategy, runs, prof.cap, prof.max_bytes)
