"""Directed runs: a compiled program checked at sizes that break what Inductor assumed of them.

The drawn runs of a case come before its compile and know only the sizes the generator solves
for (crossings of 2**31 elements, a 65535 batch). The compile then tells more: each guard
Inductor added while compiling (``compile.assumptions``) is a size at which the package's code
was chosen differently, and which AOTI never checks. So after the compile each member gets
runs of its own: for each dim an assumption reads, grown (or shrunk) alone from the export-time
sizes, the last size at which it holds, the first at which it breaks, and the largest in range
and in budget that breaks it (a precision bug, such as a float sum built without cascade
summation, shows only far past its threshold). They run like any big run, made at their turn.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from fuzzaoti.compile import merge
from fuzzaoti.check.assumption import Assumption
from fuzzaoti.compile.assumptions import of_member
from fuzzaoti.model import sizes
from fuzzaoti.model.case import run_seed
from fuzzaoti.model.program import Program
from fuzzaoti.model.scale import FEED_MAX, fits

MAX_RUNS = 6  # directed runs per member at most (a compile's worth of runs is some dozens)
NO_BUDGET_BYTES = 256 << 20  # a run's budget where the job names none (a check or replay on the CPU)


def add_runs(members: list, assumed: Iterable[Assumption], max_bytes: int | None, later: str) -> None:
    """Give each unjudged-yet member of a compiled batch its assumptions (``member.assumed``)
    and its directed runs, appended to its runs with ``later`` (``execute.LATER``: made at
    their turn) as their expectation; ``member.directed`` counts them. A member already failed,
    or never run in eager (a job's ``exclude``), gets none. A directed run's input seed is the
    one a drawn run at its place would have had (``run_seed``)."""
    assumed = tuple(assumed)
    for k, m in enumerate(members):
        m.assumed = of_member(assumed, merge.prefix(k) if len(members) > 1 else "")
        if m.outcome is not None or not m.runs or len(m.expected) != len(m.runs) or not m.assumed:
            continue
        seen = {_key(env) for env, _ in m.runs}
        for env in breaking_envs(m.program, m.assumed, max_bytes):
            if m.directed >= MAX_RUNS:
                break
            if _key(env) in seen:
                continue
            seen.add(_key(env))
            m.runs.append((env, run_seed(m.runs[0][1], len(m.runs))))
            m.expected.append(later)
            m.directed += 1


def breaking_envs(program: Program, assumed: Iterable[Assumption], max_bytes: int | None) -> list[dict[str, int]]:
    """For each assumption and each dim it reads, grown or shrunk alone from the export-time
    sizes: the last size at which it holds and the first at which it breaks, then the largest
    in range and within ``max_bytes`` that breaks it; each run within the budget."""
    budget = max_bytes if max_bytes is not None else NO_BUDGET_BYTES
    base = program.hint_env()
    envs: list[dict[str, int]] = []
    for a in assumed:
        if a.holds(base) is not True:
            continue  # (it cannot be evaluated, or the hint breaks it: nothing to steer)
        for name in a.dims:
            for v in _breaking_sizes(program, a, base, name, budget):
                env = {**base, name: v}
                if env not in envs and fits(program, env, budget):
                    envs.append(env)
    return envs


def _breaking_sizes(program: Program, a: Assumption, base: Mapping[str, int], name: str, budget: int) -> list[int]:
    spec = program.dim[name]
    top = _largest_fitting(program, base, name, spec.max if spec.max is not None else FEED_MAX, budget)

    def breaks(v: int) -> bool:
        return a.holds({**base, name: v}) is False

    hint = base[name]
    up = [v for v in _ladder(hint, top) if breaks(v)]
    down = [v for v in _ladder_down(hint, spec.min) if breaks(v)]
    found = []
    if up:  # (a guard not monotone in the dim, a divisibility, may flip back: its flip is checked)
        flip = sizes.least(breaks, hint + 1, up[0])
        found += [flip - 1, flip] if breaks(flip) else [up[0]]
        found.append(max(up))
    if down:
        flip = sizes.least(lambda v: not breaks(v), down[0], hint - 1) - 1
        found += [flip + 1, flip] if down[0] <= flip and breaks(flip) else [down[0]]
    return [v for v in dict.fromkeys(found) if spec.min <= v <= top]


def _ladder(lo: int, hi: int) -> list[int]:
    """Sizes from ``lo`` (excluded) up to ``hi``: its next three (an alignment or divisibility
    guard breaks there), each doubling, and ``hi``."""
    steps, v = [lo + 1, lo + 2, lo + 3], lo
    while v * 2 <= hi:
        v *= 2
        steps.append(v)
    return sorted({x for x in steps + [hi] if lo < x <= hi})


def _ladder_down(hi: int, lo: int) -> list[int]:
    """Sizes from ``hi`` (excluded) down to ``lo``, nearest first: its three below, each
    halving, and ``lo``."""
    steps, v = [hi - 1, hi - 2, hi - 3], hi
    while v // 2 >= lo and v > 1:
        v //= 2
        steps.append(v)
    return sorted({x for x in steps + [lo] if lo <= x < hi}, reverse=True)


def _largest_fitting(program: Program, base: Mapping[str, int], name: str, top: int, budget: int) -> int:
    """The largest size of dim ``name`` in [its hint, ``top``] whose run fits ``budget``."""
    return sizes.least(lambda v: not fits(program, {**base, name: v}, budget), base[name], top) - 1


def _key(env: Mapping[str, int]) -> tuple:
    return tuple(sorted(env.items()))
