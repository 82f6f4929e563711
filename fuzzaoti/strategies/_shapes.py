"""Runtime shapes: where one compiled program is checked, always inside its declared ranges."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model.case import Case, Run
from fuzzaoti.model.program import Program
from fuzzaoti.model.scale import CROSSINGS, fits, reach
from fuzzaoti.strategies._big_dims import FEED_MAX, is_big
from fuzzaoti.strategies._profiles import get_profile

#: a compile of a big program is checked at least this often: a run costs milliseconds, a compile seconds
MIN_LARGE_RUNS = 8


def _boundaries(lo: int, hi: int) -> list[int]:
    """min, max, and the sizes around powers of two in between (where element counts cross them)."""
    out = [lo, hi]
    power = 1
    while power <= hi + 1:
        out += [power - 1, power, power + 1]
        power *= 2
    return sorted({v for v in out if lo <= v <= hi}, key=lambda v: (v != lo, v != hi, v))


def _fit(program: Program, env: dict[str, int], max_bytes: int) -> dict[str, int]:
    """Halve the largest dims (never below their min) until a checked run fits ``max_bytes``
    (``fuzzaoti.model.scale.checked_bytes``: inputs, intermediates, outputs and the reference)
    and ``MAX_WORK``."""
    env = dict(env)
    mins = {d.name: d.min for d in program.dims}
    while not fits(program, env, max_bytes):
        name = max((n for n in env if env[n] > mins[n]), key=lambda n: env[n], default=None)
        if name is None:
            break
        env[name] = max(mins[name], env[name] // 2)
    return env


def runtime_shapes(program: Program, cap: int = 96, max_bytes: int = 32 << 20,
                   large: bool = False) -> st.SearchStrategy[dict[str, int]]:
    """One assignment of every root dim of ``program``, inside its declared range.

    Unbounded dims are capped at ``cap`` (in a ``large`` program, its big dims,
    ``_big_dims.is_big``, at ``FEED_MAX``); a checked run is kept under ``max_bytes``. Sizes are biased towards the boundaries (min, max,
    powers of two ± 1); shrinks towards each dim's min.
    """
    if cap < 1:
        raise InvalidArgument(f"Cannot have cap={cap} < 1")
    per_dim = {}
    for d in program.dims:
        hi = d.max if d.max is not None else max(FEED_MAX if large and is_big(d) else cap, d.min)
        per_dim[d.name] = st.one_of(st.sampled_from(_boundaries(d.min, hi)), st.integers(d.min, hi))
    return st.fixed_dictionaries(per_dim).map(lambda env: _fit(program, env, max_bytes))


def crossing_shapes(program: Program, max_bytes: int | None) -> list[dict[str, int]]:
    """The runtime shapes just below and just above each crossing the program's big dims can
    reach within ``max_bytes``: a bmm batch of 65535/65536, 2**31 - 1/2**31 and 2**32 - 1/2**32
    elements (``fuzzaoti.model.scale.CROSSINGS``). Its big dims grow together (each clamped to its
    range), the others stay at their export-time hints; empty without big dims. ``max_bytes``
    None: no budget (the shrinker's smallest shape past a crossing)."""
    big = [d for d in program.dims if is_big(d)]
    if not big:
        return []
    hints = program.hint_env()

    def at(v: int) -> dict[str, int]:
        return {**hints, **{d.name: min(max(v, d.min), d.max if d.max is not None else v) for d in big}}

    top = max(d.max if d.max is not None else FEED_MAX for d in big)
    shapes: list[dict[str, int]] = []
    for _, key, limit in CROSSINGS:
        if key == "index" or reach(program, at(top))[key] < limit:
            continue  # an index crossing is the program's own (its values), not a size's
        lo, hi = 1, top  # the least v whose reach passes the limit
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if reach(program, at(mid))[key] < limit else (lo, mid)
        for env in (at(lo - 1), at(lo)):
            if env not in shapes and fits(program, env, max_bytes):
                shapes.append(env)
    return shapes


@st.composite
def _cases(draw, programs_strategy, runs: int, cap: int, max_bytes: int, large: bool) -> Case:
    program = draw(programs_strategy)
    shapes = runtime_shapes(program, cap, max_bytes, large)
    if large:  # its min shape, every crossing it reaches, the largest that fits, then drawn ones
        planned = [_fit(program, {d.name: d.min for d in program.dims}, max_bytes)]
        planned += crossing_shapes(program, max_bytes)
        planned.append(_fit(program, {d.name: d.max if d.max is not None else FEED_MAX for d in program.dims},
                            max_bytes))
        planned = [dict(e) for e in dict.fromkeys(tuple(sorted(e.items())) for e in planned)]
        extra = min(max(MIN_LARGE_RUNS, runs) - len(planned), _distinct_shapes(program) - len(planned))
        fresh = shapes.filter(lambda e: e not in planned)
        envs = planned + draw(st.lists(fresh, min_size=max(extra, 0), max_size=max(extra, 0),
                                       unique_by=lambda e: tuple(sorted(e.items()))))
    else:
        envs = draw(st.lists(shapes, min_size=1, max_size=runs))
    seeds = draw(st.lists(st.integers(0, 2**31 - 1), min_size=len(envs), max_size=len(envs)))
    return Case(program, tuple(Run.of(e, s) for e, s in zip(envs, seeds)))


def _distinct_shapes(program: Program) -> int:
    """How many runtime shapes ``program`` has (at most a thousand per dim): a program of static
    sizes has one, and gets one run."""
    count = 1
    for d in program.dims:
        count *= min(1000, (d.max if d.max is not None else 10**9) - d.min + 1)
    return count


def cases(programs_strategy, runs: int = 4, profile: str = "small",
          max_bytes: int | None = None) -> st.SearchStrategy[Case]:
    """A program from ``programs_strategy`` with 1 to ``runs`` runtime shapes and input seeds;
    each checked run stays within the profile's byte budget (or ``max_bytes``). In the large
    profile a program gets its min shape, every crossing it reaches (``crossing_shapes``), the
    largest shape that fits, and drawn ones: at least ``MIN_LARGE_RUNS`` runs in all."""
    if runs < 1:
        raise InvalidArgument(f"Cannot have runs={runs} < 1")
    prof = get_profile(profile, max_bytes)
    return _cases(programs_strategy, runs, prof.cap, prof.max_bytes, bool(prof.big_sizes))
