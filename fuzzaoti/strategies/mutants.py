"""Mutants of seed programs: the guided campaign's programs near those that took new decisions.

A seed is a program whose compile took a decision combination the campaign had not seen
(``coverage.decisions``: a vector loop over a new dtype, a masked tail, a Welford reduction run
in parallel). Its neighbours are likely to take that path again with something changed around
it, where a fresh draw mostly retraces the paths every campaign takes in its first minutes. A
mutant changes one to ``MAX_CHANGES`` things the decisions turn on, and keeps the seed's ops:

* an input's dtype (float32, float16, bfloat16; int64 or int32 for an index), which picks the
  vector lanes and the casts around them;
* an input's layout (``layouts_for`` it), which picks strided or contiguous loads;
* a dim's kind and range (bounded, unbounded, ``Dim.AUTO``, ``Dim.DYNAMIC``), by the
  generator's rules (``Builder.new_dim``: a max past the min and at most the profile's
  ``max_dim``, a hint of 2 or more, ``Dim.AUTO``/``Dim.DYNAMIC`` only for a dim no input axis
  derives a size from), its min kept: an op that needs a dim of some size (a narrow, a topk's
  k) stays valid. Sizes stay the profile's, generation after generation of mutants of mutants,
  and a mutant whose export-time shape does not fit the byte budget is dropped.

Mutants are made outside Hypothesis, by a generator the campaign seeds, after a batch is drawn
(``campaign.guided``): a Hypothesis strategy that drew them would draw differently as the seeds
change, and Hypothesis refuses a strategy whose draws depend on state outside it (it replays
the prefixes of earlier draws and finds other choices there). A mutant's runs are its telling
shapes (``telling_shapes``: the hint's, each dim's bounds and tails). A change the program
cannot take (``Program.validate`` refuses it) is left out; the eager check in the worker judges
the rest, as for any drawn program.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Callable

from fuzzaoti.errors import InvalidProgram
from fuzzaoti.model import sizes
from fuzzaoti.model.case import Case, Run, run_seed
from fuzzaoti.model.program import Program, layouts_for
from fuzzaoti.model.scale import fits
from fuzzaoti.strategies._builder import ACCUMULATING, FLOAT_DTYPES, INDEX_DTYPES
from fuzzaoti.strategies._shapes import MIN_SMALL_RUNS, telling_shapes
from fuzzaoti.strategies.profiles import Profile

#: a mutant makes one change, or two or three: far from its seed is a fresh draw's job
MAX_CHANGES = 3


def _dtype(rng: random.Random, p: Program, profile: Profile) -> Program:
    inputs = list(p.inputs)
    k = rng.randrange(len(inputs))
    i = inputs[k]
    pool = FLOAT_DTYPES if i.dtype in FLOAT_DTYPES else INDEX_DTYPES if i.dtype in INDEX_DTYPES else (i.dtype,)
    inputs[k] = replace(i, dtype=rng.choice(pool))
    return p.with_(inputs=tuple(inputs))


def _layout(rng: random.Random, p: Program, profile: Profile) -> Program:
    inputs = list(p.inputs)
    k = rng.randrange(len(inputs))
    written = {p.inputs[j].name for j in p.mutated_inputs()}
    piled = {n.args[1] for n in p.nodes if n.op in ACCUMULATING}  # (the generator's rule: Builder.program)
    name = inputs[k].name
    inputs[k] = replace(inputs[k], layout=rng.choice(layouts_for(inputs[k], name in written, name in piled)))
    return p.with_(inputs=tuple(inputs))


def _derived_from(p: Program, dim: str) -> bool:
    """Whether an input axis (or an index's value bound) is an expression of ``dim`` other
    than ``dim`` itself (``2*d``, ``d+1``): export takes those of a ``Dim`` only."""
    exprs = [s for i in p.inputs for s in (*i.shape, i.values.low, i.values.high) if isinstance(s, str)]
    return any(s != dim and dim in sizes.parse(s).dims for s in exprs)


def _dim(rng: random.Random, p: Program, profile: Profile) -> Program:
    if not p.dims:
        return p
    dims = list(p.dims)
    k = rng.randrange(len(dims))
    d = dims[k]
    kinds = ("bounded", "unbounded") if _derived_from(p, d.name) else ("bounded", "unbounded", "auto", "dynamic")
    kind = rng.choice(kinds)
    high = None if kind == "unbounded" else rng.randint(d.min + 1, max(d.min + 1, profile.max_dim))
    top = high if high is not None else max(profile.cap, d.min + 1)
    hint = rng.randint(max(d.min, 2), max(top, 2))
    spec_kind = "range" if kind in ("bounded", "unbounded") else kind
    dims[k] = replace(d, kind=spec_kind, max=high if spec_kind == "range" else top, hint=hint)
    return p.with_(dims=tuple(dims))


_CHANGES: tuple[Callable[[random.Random, Program, Profile], Program], ...] = (_dtype, _layout, _dim)


def mutate(seed: Program, configs: dict[str, Any], rng: random.Random, profile: Profile) -> Program | None:
    """``seed`` with one to ``MAX_CHANGES`` changes picked by ``rng`` and the batch's
    ``configs``; None when the changes make no valid program, none at all, or one whose
    export-time shape is over ``profile``'s byte budget."""
    base = seed.with_(configs=tuple(sorted(configs.items())))
    p = base
    for _ in range(rng.randint(1, MAX_CHANGES)):
        p = rng.choice(_CHANGES)(rng, p, profile)
    try:
        p = p.validate()
    except InvalidProgram:
        return None
    return p if p.id != base.id and fits(p, p.hint_env(), profile.max_bytes) else None


def mutant_case(seed: Program, configs: dict[str, Any], rng: random.Random, profile: Profile,
                runs: int) -> Case | None:
    """A mutant of ``seed`` (``mutate``) with its runs: the hint's shape and others of its
    telling shapes, ``MIN_SMALL_RUNS`` (or ``runs``) in all where it has that many."""
    program = mutate(seed, configs, rng, profile)
    if program is None:
        return None
    telling = telling_shapes(program, profile.cap, profile.max_bytes)
    envs = telling[:1] + rng.sample(telling[1:], min(len(telling) - 1, max(MIN_SMALL_RUNS, runs) - 1))
    first = rng.randrange(2**31)
    return Case(program, tuple(Run.of(env, run_seed(first, k)) for k, env in enumerate(envs)))
