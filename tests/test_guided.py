"""The guided campaign: mutants of seed programs (strategies/mutants.py) and the guide that keeps
the seeds, puts mutants in drawn batches and moves their share (campaign/guided.py)."""

import random

import pytest

from fuzzaoti.campaign.guided import MAX_SEEDS, SHARE_RANGE, Guide
from fuzzaoti.campaign.settings import CampaignSettings
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model.case import Case
from fuzzaoti.strategies.mutants import mutant_case, mutate
from fuzzaoti.strategies.profiles import get_profile

SMALL = get_profile("small")


def test_a_mutant_is_a_valid_program_with_its_seeds_ops_and_the_batchs_configs(five_op_program):
    mutants = [mutate(five_op_program, {"cpp.simdlen": 256}, random.Random(k), SMALL) for k in range(200)]
    made = [m for m in mutants if m is not None]
    assert len(made) > 100  # most changes make a valid program
    for m in made:
        assert m.validate() is m and [n.op for n in m.nodes] == [n.op for n in five_op_program.nodes]
        assert dict(m.configs) == {"cpp.simdlen": 256} and m.id != five_op_program.with_(configs=m.configs).id
        for d, seed in zip(m.dims, five_op_program.dims):  # the generator's rules for a dim
            assert d.min == seed.min and d.hint >= 2 and (d.max is None or d.max > d.min)
    assert {i.layout for m in made for i in m.inputs} > {"contiguous"}
    assert {i.dtype for m in made for i in m.inputs} > {i.dtype for i in five_op_program.inputs}
    assert {d.kind for m in made for d in m.dims} == {"range", "auto", "dynamic"}


def test_a_mutant_case_runs_at_its_telling_shapes_inside_its_ranges(five_op_program):
    case = mutant_case(five_op_program, {}, random.Random(3), SMALL, runs=4)
    assert case is not None and len(case.runs) >= 2
    dims = case.program.dim
    assert dict(case.runs[0].env) == case.program.hint_env()
    for env, _ in case.runs:
        assert all(dims[n].min <= v and (dims[n].max is None or v <= dims[n].max) for n, v in env)


def test_the_guide_puts_mutants_of_its_seeds_in_a_batch_and_moves_the_share_to_what_pays(five_op_program):
    guide = Guide(SMALL, runs=4)
    fresh = [Case(mutate(five_op_program, {}, random.Random(k), SMALL) or five_op_program, ()) for k in range(60)]
    fresh = list({c.program.id: c for c in fresh}.values())[:16]
    assert guide.substitute(fresh, "7:1:0") == fresh  # no seeds yet: the batch as drawn
    guide.learn(fresh, {c.program.id: 1 for c in fresh[:4]} | {c.program.id: 0 for c in fresh[4:]})
    assert [s.id for s in guide.seeds] == [c.program.id for c in fresh[:4]]
    batch = guide.substitute(fresh, "7:2:0")
    assert batch == guide.substitute(fresh, "7:2:0")  # the key decides
    mutants = [c for c in batch if c not in fresh]
    assert mutants and len({c.program.id for c in batch}) == len(batch)
    # every mutant took a new combination, no fresh program did: the share goes to mutants
    guide.learn(batch, {c.program.id: (1 if c in mutants else 0) for c in batch})
    assert guide.share() > 0.5
    for _ in range(4):  # then the mutants stop paying and fresh programs do: the share turns
        guide.learn(batch, {c.program.id: (0 if c in mutants else 1) for c in batch})
    assert guide.share() == SHARE_RANGE[0]
    assert len(guide.seeds) <= MAX_SEEDS and "seeds, mutants" in guide.describe()


@pytest.mark.parametrize("changes", [{"device": "cuda"}, {"profile": "large"}])
def test_guided_is_refused_where_it_cannot_learn(changes):
    with pytest.raises(InvalidArgument, match="--guided needs --device cpu"):
        CampaignSettings(**{"device": "cpu", "guided": True, **changes})


def test_mutants_of_mutants_keep_the_profiles_sizes_and_a_derived_dim_a_plain_dim():
    # export takes 2*n only of a Dim: n never becomes Dim.AUTO or Dim.DYNAMIC; and a mutant of a
    # mutant draws its range from the profile, not from its seed's, or sizes double each generation
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program

    program = Program(dims=(DimSpec("n", 2, 40, 9),), inputs=(InputSpec("x0", "float32", ("2*n", 3)),),
                      nodes=(Node("t0", "relu", ("x0",)),), outputs=("t0",)).validate()
    rng = random.Random(0)
    for _ in range(300):
        program = mutate(program, {}, rng, SMALL) or program
        (n,) = program.dims
        assert n.kind == "range" and n.min == 2 and n.hint <= max(SMALL.cap, SMALL.max_dim)
        assert n.max is None or n.max <= SMALL.max_dim
