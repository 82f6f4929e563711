"""The guided campaign: mutants of seed programs (strategies/_guided.py) and the guide that keeps
the seeds and moves the share of mutants (campaign/guided.py)."""

import random

from hypothesis import HealthCheck, given, settings

from fuzzaoti.campaign.guided import MAX_SEEDS, SHARE_RANGE, Guide
from fuzzaoti.model.case import Case
from fuzzaoti.strategies import programs
from fuzzaoti.strategies._guided import guided, mutate


def test_a_mutant_is_a_valid_program_with_its_seeds_ops_and_the_batchs_configs(five_op_program):
    mutants = [mutate(five_op_program, {"cpp.simdlen": 256}, random.Random(k)) for k in range(200)]
    made = [m for m in mutants if m is not None]
    assert len(made) > 100  # most changes make a valid program
    for m in made:
        assert m.validate() is m and [n.op for n in m.nodes] == [n.op for n in five_op_program.nodes]
        assert dict(m.configs) == {"cpp.simdlen": 256} and m.id != five_op_program.with_(configs=m.configs).id
    changed = {what for m in made for what, a, b in (("inputs", m.inputs, five_op_program.inputs),
                                                       ("dims", m.dims, five_op_program.dims)) if a != b}
    assert changed == {"inputs", "dims"}
    assert {i.layout for m in made for i in m.inputs} > {"contiguous"}
    assert {i.dtype for m in made for i in m.inputs} > {i.dtype for i in five_op_program.inputs}


def test_drawing_mutants_of_seeds_that_change_between_draws_is_no_flaky_strategy(five_op_program):
    # Hypothesis refuses draws that depend on outside state unless their choices stay the same:
    # the seeds list grows while the test runs, and the share is all mutants
    seeds, mutants = [], []
    strategy = guided(programs(), lambda: seeds, lambda: 1.0, {}, mutants.append)

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(program):
        seeds.append(five_op_program if not seeds else program)

    draw()
    assert mutants  # (every draw after the first had a seed to mutate)


def test_the_guide_keeps_programs_that_took_new_combinations_and_moves_the_share_to_what_pays(five_op_program):
    guide = Guide()
    cases = [Case(mutate(five_op_program, {}, random.Random(k)) or five_op_program, ()) for k in range(40)]
    cases = list({c.program.id: c for c in cases}.values())
    mutants, fresh = cases[: len(cases) // 2], cases[len(cases) // 2:]
    for c in mutants:
        guide.drew_mutant(c.program.id)
    # every mutant took a new combination, no fresh program did: the share goes to mutants
    guide.learn(mutants + fresh, {**{c.program.id: 1 for c in mutants}, **{c.program.id: 0 for c in fresh}})
    assert [s.id for s in guide.seed_list()] == [c.program.id for c in mutants][-MAX_SEEDS:]
    assert guide.share() == SHARE_RANGE[1]
    assert guide.total == {"mutant": [len(mutants), len(mutants)], "fresh": [len(fresh), 0]}
    for _ in range(3):  # then the mutants stop paying and fresh programs do: the share turns
        guide.learn(mutants + fresh, {**{c.program.id: 0 for c in mutants}, **{c.program.id: 1 for c in fresh}})
    assert guide.share() == SHARE_RANGE[0]
    assert "seeds, mutants" in guide.describe()
