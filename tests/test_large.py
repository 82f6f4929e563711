"""The large profile reaches the seeds' class: every op family and every big dim kind past 2**31
elements in the drawn runtime shapes, each case within --max-bytes and MAX_WORK (drawn, not run)."""

from collections import Counter

import pytest

from fuzzaoti.model import scale
from fuzzaoti.model.case import Case, Run
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program
from fuzzaoti.strategies.histograms import sample
from fuzzaoti.strategies import cases, crossing_first, get_profile, programs
from fuzzaoti.strategies._big_dims import BIG_KINDS, big_kind, is_big
from fuzzaoti.strategies._large import LARGE_CORE
from fuzzaoti.strategies._shapes import MIN_LARGE_RUNS, MIN_RUNS_NO_BIG_DIM, crossing_shapes, run_seed

BUDGET = 24 << 30  # what a campaign gives each of 3 workers on a 139 GiB H200: half its memory

#: the family each large core op must take past 2**31 elements (the arange family's crossing is
#: its index values, which pass 2**31 at every size; the heads bmm's is its merged batch)
CROSSING = {"big_arange_index": ("index arithmetic", "index"), "big_heads_bmm": ("bmm", "batch"),
            "big_bmm": ("bmm", "batch")}
FAMILY_OF = {"big_bmm": "bmm", "big_matmul": "bmm", "expanded_sum": "reduction", "big_pointwise": "pointwise",
             "big_reduction": "reduction", "big_index_select": "index_select", "big_gather": "gather",
             "big_take": "take", "big_index": "advanced indexing", "big_index_put": "index_put/scatter",
             "big_scatter": "index_put/scatter", "big_slice": "slices", "big_cat": "cat/split"}


def _large_cases(ops=None, n=40):
    return sample(cases(programs(device="cuda", profile="large", ops=ops, max_bytes=BUDGET), profile="large",
                        max_bytes=BUDGET), n)


@pytest.mark.parametrize("op", sorted(LARGE_CORE))
def test_each_large_family_crosses_its_limit_within_the_budget(op):
    family, key = CROSSING.get(op, (FAMILY_OF.get(op), "elements"))
    crossed = Counter()
    for case in _large_cases((op,)):
        wanted = MIN_LARGE_RUNS if any(map(is_big, case.program.dims)) else MIN_RUNS_NO_BIG_DIM
        assert len(case.runs) >= wanted or not case.program.dims
        assert len({seed for _, seed in case.runs}) == len(case.runs)  # each run its own inputs
        for env, _ in case.runs:
            env = dict(env)
            assert scale.checked_bytes(case.program, env, BUDGET) <= BUDGET, (case.program.to_json(), env)
            # and its time: a stride-0 view of 2**39 elements fits any budget and ran for minutes
            assert scale.work(case.program, env) <= scale.MAX_WORK, (case.program.to_json(), env)
            measures = scale.family_reach(case.program, env).get(family, {})
            crossed["2^31"] += measures.get(key, 0) >= (2**31 if key != "batch" else 65536)
            crossed["2^32"] += key == "elements" and measures.get(key, 0) >= 2**32
    assert crossed["2^31"] >= 5, (op, crossed)
    if key == "elements" and op != "big_matmul":  # fp16 bmm outputs of 2**32 elements pass 24 GiB
        assert crossed["2^32"] >= 1, (op, crossed)


def test_every_big_dim_kind_crosses_2_31_elements():
    crossed = Counter()
    for case in _large_cases(n=300):
        kinds = {big_kind(case.program, s) for i in case.program.inputs for s in i.shape} - {None}
        for env, _ in case.runs:
            if scale.reach(case.program, dict(env))["elements"] >= 2**31:
                crossed.update(kinds)
    assert set(crossed) == set(BIG_KINDS) and min(crossed.values()) >= 5, crossed


def test_every_crossing_a_program_reaches_within_the_budget_is_straddled():
    # just below and just above: the size class a bug needs, and the one next to it that passes
    straddled = 0
    for case in _large_cases(("big_pointwise", "big_gather", "big_slice"), n=60):
        program, runs = case.program, [dict(env) for env, _ in case.runs]
        reached = max(scale.reach(program, env)["elements"] for env in runs)
        for limit in (2**31, 2**32):
            if reached >= limit:
                elements = {scale.reach(program, env)["elements"] for env in runs}
                assert min(e for e in elements if e >= limit) < limit + 2 * 1000, (program.to_json(), runs)
                assert max(e for e in elements if e < limit) > limit - 2 * 1000, (program.to_json(), runs)
                straddled += 1
    assert straddled >= 20


def test_big_dims_are_exported_at_small_hints():
    # (a big dim of a big family's hint is at most 64; an unbounded one of the glue's, the cap)
    for case in _large_cases(n=100):
        for d in filter(is_big, case.program.dims):
            assert d.hint <= get_profile("large").cap, d


def test_most_runs_of_a_program_that_can_cross_are_past_a_crossing():
    # a run costs far less than a compile: a large program that can cross spends most of its
    # runs past a crossing (fails if the drawn extras fall back to small shapes)
    past = runs = 0
    for case in _large_cases(("big_pointwise", "big_gather", "big_reduction", "big_index"), n=60):
        if not crossing_shapes(case.program, BUDGET):
            continue
        flags = [scale.is_large(case.program, dict(env)) for env, _ in case.runs]
        past, runs = past + sum(flags), runs + len(flags)
        if all(d.max is None or d.max >= 2**33 for d in case.program.dims if d.max is None or d.max > 2**15):
            # (a bounded-just dim may have a single size past its crossing)
            assert sum(flags) >= MIN_LARGE_RUNS // 2, (case.program.to_json(), case.runs)
    assert runs and past / runs > 0.5, (past, runs)  # (most: 477 of 816 under Hypothesis 6.170)


def test_the_runs_of_a_case_share_one_drawn_seed_yet_each_gets_its_own():
    # (one choice for all of them keeps a large batch inside Hypothesis's buffer: Profile)
    seeds = [run_seed(first, k) for first in (0, 2**31 - 1) for k in range(64)]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2**31 for s in seeds)
    assert run_seed(12345, 0) == 12345


def test_a_batch_takes_the_cases_that_reach_a_crossing_first():
    program = Program(dims=(DimSpec("d", 2, None, 8),), inputs=(InputSpec("x", "int8", ("d", 8)),),
                      nodes=(Node("t0", "abs", ("x",), ()),), outputs=("t0",)).validate()

    def case(*sizes):
        return Case(program, tuple(Run.of({"d": n}, k) for k, n in enumerate(sizes)))

    small, large, larger, small_too = case(4, 9), case(4, 2**28), case(2**29), case(5)
    assert crossing_first([small, large, small_too, larger]) == [large, larger, small, small_too]
    assert crossing_first([small, small_too]) == [small, small_too]  # none crosses: as drawn
