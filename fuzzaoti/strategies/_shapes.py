"""Runtime shapes: where one compiled program is checked, always inside its declared ranges."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model import sizes
from fuzzaoti.model.case import Case, Run, run_seed
from fuzzaoti.model.program import Program
from fuzzaoti.model.scale import CROSSINGS, FEED_MAX, fits, reach
from fuzzaoti.strategies._big_dims import is_big
from fuzzaoti.strategies.profiles import get_profile

#: a compile of a big program is checked at least this often: a run costs milliseconds, a compile seconds
MIN_LARGE_RUNS = 16
#: ...and one without a big dim (a large profile's glue-sized program) this often: each of its
#: runs costs Hypothesis's choice buffer as much as a big one's, and crosses nothing
MIN_RUNS_NO_BIG_DIM = 8
#: of a big program's drawn runs, all but one in this many are past a crossing (``past_crossing``)
PAST_SHARE = 4
#: a small program is checked at least this often, at the sizes where generated code changes
#: behaviour (``telling_shapes``): a run costs milliseconds, its compile seconds
MIN_SMALL_RUNS = 8
#: sizes around the vector widths of the CPU's loops (8 and 16 lanes of 32 bits, 32 and 64 of
#: 8 bits: a loop's tail is the size modulo the width) and Triton's block sizes
TAIL_SIZES = tuple(sorted({p + d for p in (8, 16, 32, 64, 128) for d in (-1, 0, 1)}))


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
    ``_big_dims.is_big``, at ``FEED_MAX``); a checked run is kept under ``max_bytes``. Sizes are
    biased towards the boundaries (min, max, powers of two ± 1); shrinks towards each dim's min.
    """
    if cap < 1:
        raise InvalidArgument(f"Cannot have cap={cap} < 1")
    return _sizes(program.dims, cap, large).map(lambda env: _fit(program, env, max_bytes))


def _sizes(dims, cap: int, large: bool) -> st.SearchStrategy[dict[str, int]]:
    per_dim = {}
    for d in dims:
        hi = d.max if d.max is not None else max(FEED_MAX if large and is_big(d) else cap, d.min)
        per_dim[d.name] = st.one_of(st.sampled_from(_boundaries(d.min, hi)), st.integers(d.min, hi))
    return st.fixed_dictionaries(per_dim)


class _Growth:
    """A program's big dims grown together from ``base`` (each clamped to its range): the one
    axis along which the runtime-shape strategies solve for crossings."""

    def __init__(self, program: Program, base: dict[str, int]):
        self.program, self.base = program, base
        self.big = [d for d in program.dims if is_big(d)]
        self.top = max((d.max if d.max is not None else FEED_MAX for d in self.big), default=0)

    def at(self, v: int) -> dict[str, int]:
        return {**self.base, **{d.name: min(max(v, d.min), d.max if d.max is not None else v) for d in self.big}}

    def first_past(self, key: str, limit: int) -> int | None:
        """The least v whose reach passes ``limit`` (None: not even at the top)."""
        if not self.big or reach(self.program, self.at(self.top))[key] < limit:
            return None
        return sizes.least(lambda v: reach(self.program, self.at(v))[key] >= limit, 1, self.top)

    def largest_fitting(self, lo: int, max_bytes: int | None) -> int:
        """The largest v >= lo whose run fits ``max_bytes`` (lo - 1: none)."""
        return sizes.least(lambda v: not fits(self.program, self.at(v), max_bytes), lo, self.top) - 1

    def spans(self, max_bytes: int | None) -> list[tuple[int, int]]:
        """For each size crossing reachable within ``max_bytes``: the v from the least past it to
        the largest that fits."""
        spans = []
        for _, key, limit in CROSSINGS:
            lo = None if key == "index" else self.first_past(key, limit)
            if lo is not None and (hi := self.largest_fitting(lo, max_bytes)) >= lo:
                spans.append((lo, hi))
        return spans


def crossing_shapes(program: Program, max_bytes: int | None) -> list[dict[str, int]]:
    """The runtime shapes just below and just above each crossing the program's big dims can
    reach within ``max_bytes``: a bmm batch of 65535/65536, 2**31 - 1/2**31 and 2**32 - 1/2**32
    elements (``fuzzaoti.model.scale.CROSSINGS``). Its big dims grow together (each clamped to its
    range), the others stay at their export-time hints; empty without big dims. ``max_bytes``
    None: no budget (the shrinker's smallest shape past a crossing)."""
    growth = _Growth(program, program.hint_env())
    shapes: list[dict[str, int]] = []
    for _, key, limit in CROSSINGS:
        lo = None if key == "index" else growth.first_past(key, limit)
        if lo is None:
            continue  # an index crossing is the program's own (its values), not a size's
        for env in (growth.at(lo - 1), growth.at(lo)):
            if env not in shapes and fits(program, env, max_bytes):
                shapes.append(env)
    return shapes


@functools.lru_cache(maxsize=1024)
def _spans(program: Program, base: tuple[tuple[str, int], ...], max_bytes: int | None) -> tuple[tuple[int, int], ...]:
    """``_Growth.spans`` remembered: a program's runs past a crossing mostly share the sizes
    of its small dims (most large programs have none), and each solve is some hundred shape
    inferences. Drawing 300 large cases took 23.8 s without it, 14.8 s with it."""
    return tuple(_Growth(program, dict(base)).spans(max_bytes))


@st.composite
def past_crossing(draw, program: Program, cap: int, max_bytes: int | None) -> dict[str, int]:
    """A runtime shape past one of the crossings the program reaches within ``max_bytes``,
    anywhere between the least size past it and the largest that fits (its ends and the powers
    of two between biased for), the other dims drawn as ``runtime_shapes`` draws them (the big
    ones are not drawn: they grow together to the size drawn here); where none fits, a shape
    drawn as ``runtime_shapes`` draws it. Most of a large program's runs come from here: a run
    costs far less than a compile, and a bug past 2**31 may need an odd size, or a particular
    one, to show."""
    small = [d for d in program.dims if not is_big(d)]
    base = {**{d.name: d.min for d in program.dims}, **draw(_sizes(small, cap, large=True))}
    growth = _Growth(program, base)
    spans = _spans(program, tuple(base.items()), max_bytes)
    if not spans:  # the big dims drawn too, as runtime_shapes would (the small ones already are)
        return _fit(program, {**base, **draw(_sizes(growth.big, cap, large=True))}, max_bytes)
    lo, hi = draw(st.sampled_from(spans))
    ends = _boundaries(lo, hi)
    return growth.at(draw(st.one_of(st.sampled_from(ends), st.integers(lo, hi))))


def telling_shapes(program: Program, cap: int, max_bytes: int) -> list[dict[str, int]]:
    """Runtime shapes where generated code changes behaviour, each dim moved alone from the
    export hint (the others stay at theirs): its min and max, the hint plus and minus one (a
    decision made at the hint), and the sizes around the CPU vector widths and Triton block sizes
    (``TAIL_SIZES``) in its range (a dim of no max up to ``max(cap, 129)``); each kept within
    ``max_bytes``, none twice, the hint's own shape first."""
    hint = program.hint_env()
    planned = [hint]
    for d in program.dims:
        hi = d.max if d.max is not None else max(cap, TAIL_SIZES[-1], d.min)
        for v in (d.min, hi, d.hint - 1, d.hint + 1, *TAIL_SIZES):
            if d.min <= v <= hi:
                planned.append(_fit(program, {**hint, d.name: v}, max_bytes))
    return [dict(e) for e in dict.fromkeys(tuple(sorted(e.items())) for e in planned)]


@st.composite
def _small_runs(draw, program: Program, shapes, runs: int, cap: int, max_bytes: int) -> list[dict[str, int]]:
    """A small program's runs: at least ``MIN_SMALL_RUNS`` (or ``runs``), from its telling shapes
    (the hint's first, the rest a drawn selection of them), then drawn ones where there are
    fewer telling shapes than that."""
    telling = telling_shapes(program, cap, max_bytes)
    wanted = max(MIN_SMALL_RUNS, runs)
    chosen = [telling[0]] + draw(st.lists(st.sampled_from(telling[1:]), unique_by=lambda e: tuple(sorted(e.items())),
                                          min_size=min(wanted, len(telling)) - 1, max_size=wanted - 1)) \
        if len(telling) > 1 else telling
    extra = max(0, min(wanted - len(chosen), _distinct_shapes(program) - len(chosen)))
    return chosen + draw(_distinct(shapes, chosen, extra))


@st.composite
def _cases(draw, programs_strategy, runs: int, cap: int, max_bytes: int, large: bool) -> Case:
    program = draw(programs_strategy)
    shapes = runtime_shapes(program, cap, max_bytes, large)
    envs = draw(_large_runs(program, shapes, runs, cap, max_bytes) if large
                else _small_runs(program, shapes, runs, cap, max_bytes))
    first = draw(st.integers(0, 2**31 - 1))  # one choice for all the input seeds: a large case's 16
    # seeds of their own cost a third of its share of Hypothesis's choice buffer (Profile.draw_batch)
    return Case(program, tuple(Run.of(e, run_seed(first, k)) for k, e in enumerate(envs)))


@st.composite
def _large_runs(draw, program: Program, shapes, runs: int, cap: int, max_bytes: int) -> list[dict[str, int]]:
    """A large-profile program's runs: its min shape, every crossing it reaches, the largest
    shape that fits, then drawn ones, most of them past a crossing; ``MIN_LARGE_RUNS`` in all
    (``MIN_RUNS_NO_BIG_DIM`` for a program without a big dim, which crosses nothing)."""
    planned = [_fit(program, {d.name: d.min for d in program.dims}, max_bytes)]
    planned += crossing_shapes(program, max_bytes)
    planned.append(_fit(program, {d.name: d.max if d.max is not None else FEED_MAX for d in program.dims},
                        max_bytes))
    planned = [dict(e) for e in dict.fromkeys(tuple(sorted(e.items())) for e in planned)]
    wanted = max(MIN_LARGE_RUNS if any(map(is_big, program.dims)) else MIN_RUNS_NO_BIG_DIM, runs)
    extra = max(0, min(wanted - len(planned), _distinct_shapes(program) - len(planned)))
    room = sum(hi - lo + 1 for lo, hi in _spans(program, tuple(program.hint_env().items()), max_bytes))
    n_past = min(extra - extra // PAST_SHARE, room // 4)  # (a bounded-just dim has few sizes past)
    planned += draw(_distinct(past_crossing(program, cap, max_bytes), planned, n_past))
    return planned + draw(_distinct(shapes, planned, extra - n_past))


def _distinct(shapes, planned: list[dict[str, int]], n: int):
    """``n`` shapes from ``shapes``, none twice, none of ``planned``."""
    return st.lists(shapes.filter(lambda e: e not in planned), min_size=n, max_size=n,
                    unique_by=lambda e: tuple(sorted(e.items())))


def _distinct_shapes(program: Program) -> int:
    """How many runtime shapes ``program`` has (at most a thousand per dim): a program of static
    sizes has one, and gets one run."""
    count = 1
    for d in program.dims:
        count *= min(1000, (d.max if d.max is not None else 10**9) - d.min + 1)
    return count


def cases(programs_strategy, runs: int = 4, profile: str = "small",
          max_bytes: int | None = None) -> st.SearchStrategy[Case]:
    """A program from ``programs_strategy`` with its runtime shapes and input seeds; each checked
    run stays within the profile's byte budget (or ``max_bytes``). In the small profile a program
    gets at least ``MIN_SMALL_RUNS`` (or ``runs``) runs, from the shapes where code changes
    behaviour (``telling_shapes``: min, max, hint and hint +- 1, vector-tail sizes). In the large
    profile a program gets its min shape, every crossing it reaches (``crossing_shapes``), the
    largest shape that fits, and drawn ones, three in four of those past a crossing
    (``past_crossing``): at least ``MIN_LARGE_RUNS`` runs in all (``MIN_RUNS_NO_BIG_DIM``
    without a big dim). The runs' input seeds come from one drawn seed (``run_seed``); each
    size shrinks towards its min."""
    if runs < 1:
        raise InvalidArgument(f"Cannot have runs={runs} < 1")
    prof = get_profile(profile, max_bytes)
    return _cases(programs_strategy, runs, prof.cap, prof.max_bytes, bool(prof.big_sizes))
