"""Mutants of seed programs: the guided campaign's draws near programs that reached new decisions.

A seed is a program whose compile took a decision combination the campaign had not seen
(``coverage.decisions``: a vector loop over a new dtype, a masked tail, a Welford reduction run
in parallel). Its neighbours are likely to take that path again with something changed around
it, where a fresh draw mostly retraces the paths every campaign takes in its first minutes. A
mutant changes one or two things the decisions turn on, and keeps the seed's ops:

* an input's dtype (float32, float16, bfloat16; int64 or int32 for an index), which picks the
  vector lanes and the casts around them;
* an input's layout (``layouts_for`` it), which picks strided or contiguous loads;
* a dim's kind and range (bounded, unbounded, ``Dim.AUTO``, ``Dim.DYNAMIC``; a new hint inside
  it), which picks static or symbolic loop bounds, their tails and the index width.

A mutant's changes are picked by a generator seeded with one drawn integer, so a mutant
replays from its choices like any draw while the seeds are the same. A change the program cannot take (``Program.validate`` refuses it) is
left out; the eager check in the worker judges the rest, as for any drawn program.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Callable, Sequence

from hypothesis import strategies as st

from fuzzaoti.errors import InvalidProgram
from fuzzaoti.model.program import DIM_KINDS, Program, layouts_for
from fuzzaoti.strategies._builder import FLOAT_DTYPES, INDEX_DTYPES

#: a mutant makes one change, or two (rarely three: far from its seed is a fresh draw's job)
MAX_CHANGES = 3


def _dtype(rng: random.Random, p: Program) -> Program:
    inputs = list(p.inputs)
    k = rng.randrange(len(inputs))
    i = inputs[k]
    pool = FLOAT_DTYPES if i.dtype in FLOAT_DTYPES else INDEX_DTYPES if i.dtype in INDEX_DTYPES else (i.dtype,)
    inputs[k] = replace(i, dtype=rng.choice(pool))
    return p.with_(inputs=tuple(inputs))


def _layout(rng: random.Random, p: Program) -> Program:
    inputs = list(p.inputs)
    k = rng.randrange(len(inputs))
    written = {p.inputs[j].name for j in p.mutated_inputs()}
    inputs[k] = replace(inputs[k], layout=rng.choice(layouts_for(inputs[k], inputs[k].name in written)))
    return p.with_(inputs=tuple(inputs))


def _dim(rng: random.Random, p: Program) -> Program:
    if not p.dims:
        return p
    dims = list(p.dims)
    k = rng.randrange(len(dims))
    d = dims[k]
    kind = rng.choice(DIM_KINDS)
    low = rng.randint(max(0, d.min - 2), d.min + 2) if d.min > 1 else d.min
    top = max(d.max if d.max is not None else 2 * d.hint, low + 1)
    high = None if kind == "range" and d.max is None and rng.random() < 0.5 else rng.randint(low, 2 * top)
    hint = rng.randint(low, high if high is not None else 2 * top)
    dims[k] = replace(d, kind=kind, min=low, max=high, hint=hint)
    return p.with_(dims=tuple(dims))


_CHANGES: tuple[Callable[[random.Random, Program], Program], ...] = (_dtype, _layout, _dim)


def mutate(seed: Program, configs: dict[str, Any], rng: random.Random) -> Program | None:
    """``seed`` with one to ``MAX_CHANGES`` changes picked by ``rng`` and the batch's
    ``configs``; None when the changes make no valid program, or none at all."""
    base = seed.with_(configs=tuple(sorted(configs.items())))
    p = base
    for _ in range(rng.randint(1, MAX_CHANGES)):
        p = rng.choice(_CHANGES)(rng, p)
    try:
        p = p.validate()
    except InvalidProgram:
        return None
    return p if p.id != base.id else None


def guided(fresh: st.SearchStrategy[Program], seeds: Callable[[], Sequence[Program]],
           share: Callable[[], float], configs: dict[str, Any],
           drew_mutant: Callable[[str], None] = lambda program_id: None) -> st.SearchStrategy[Program]:
    """A fresh program from ``fresh``, or, ``share()`` of the time while there are ``seeds()``,
    a mutant of one of them (a fresh one where the mutant drawn is no valid program; each
    mutant's id is told to ``drew_mutant``). Both are read at each draw: the campaign adds
    seeds and moves the share as it learns what pays (``campaign.guided``).

    Hypothesis refuses a strategy whose draws change with state outside it (the seeds and the
    share do): so every draw makes the same choices, whatever the state, the coin, a seed's
    number and a generator seed for the mutation as plain 32-bit integers, and the fresh
    program too, which a mutant then takes the place of."""
    @st.composite
    def draw_one(draw) -> Program:
        coin, pick, mutation = (draw(st.integers(0, 2**32 - 1)) for _ in range(3))
        program = draw(fresh)
        pool = seeds()
        if pool and coin % 1000 < 1000 * share():
            mutant = mutate(pool[pick % len(pool)], configs, random.Random(mutation))
            if mutant is not None:
                drew_mutant(mutant.id)
                return mutant
        return program

    return draw_one()
