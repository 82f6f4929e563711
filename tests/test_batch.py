import torch

from fuzzaoti.compile import merge as batch
from fuzzaoti.compile import render
from fuzzaoti.model.concrete import input_specs
from fuzzaoti.model.inputs import make_inputs


def test_merged_program_computes_each_member(bmm_index_program):
    other = batch.namespaced(bmm_index_program, "q_")  # a second, differently named copy
    merged = batch.merge([bmm_index_program, other])
    assert len(merged.inputs) == 6 and len(merged.outputs) == 2
    env = {"b": 3, "n": 5}
    single = render.load_program(bmm_index_program)["Repro"]()
    inputs = make_inputs(input_specs(bmm_index_program, env), 7, "cpu")
    expected = list(single(*inputs))
    outputs = render.load_program(merged)["Repro"]()(*(inputs + inputs))
    for member_outputs in batch.split_outputs(outputs, [bmm_index_program, other]):
        torch.testing.assert_close(member_outputs, expected)


def test_namespacing_renames_sizes_and_index_bounds(bmm_index_program):
    renamed = batch.namespaced(bmm_index_program, "p3_")
    assert renamed.inputs[0].shape == ("p3_b", "p3_n", 3)
    assert renamed.inputs[2].values.high == "p3_n"


def test_a_traceback_into_one_members_code_blames_that_member(bmm_index_program, five_op_program):
    from fuzzaoti.workers.blame import blamed_member as _blamed_member
    from fuzzaoti.check.outcome import Outcome

    merged = batch.merge([bmm_index_program, five_op_program])
    lines = render.program_source(merged).splitlines()
    number = next(i for i, line in enumerate(lines, 1) if "p1_t2 =" in line)
    where = f'File "<fuzzaoti program {merged.id}>", line {number}, in forward'
    outcome = Outcome("export", "invalid", f"GuardOnDataDependentSymNode: ...\n{where}\n")
    assert _blamed_member(outcome, merged, 2) == 1
    elsewhere = where.replace(merged.id, "0123456789abcdef")  # another module's line says nothing
    assert _blamed_member(Outcome("export", "invalid", elsewhere), merged, 2) is None
    assert _blamed_member(Outcome("export", "invalid", "KeyError: 'max'"), merged, 2) is None
