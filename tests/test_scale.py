"""fuzzaoti.model.shapes and fuzzaoti.model.scale: shapes as eager makes them, bytes and reach of a run."""

import torch
from hypothesis import HealthCheck, given, settings

from fuzzaoti.compile import render
from fuzzaoti.model import scale
from fuzzaoti.model import shapes
from fuzzaoti.model.concrete import input_specs
from fuzzaoti.model.inputs import make_inputs
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
from fuzzaoti.strategies import programs


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_inferred_shapes_and_dtypes_are_eagers(program):
    # every node an output: eager then returns each intermediate, whose shape and dtype the
    # pure-Python inference must give (a length read from data, ``shapes.UNBACKED``, is bounded)
    every = program.with_(outputs=tuple(n.name for n in program.nodes))
    env = program.hint_env()
    with torch.no_grad():
        got = render.load_program(every)["Repro"]()(*make_inputs(input_specs(every, env, example=True), 0, "cpu"))
    inferred = shapes.tensors(every, env)
    for node, tensor in zip(every.nodes, got):
        info = inferred[node.name]
        if node.op in shapes.UNBACKED:
            assert len(info.shape) == tensor.dim() and all(map(int.__ge__, info.shape, tensor.shape)), node
        else:
            assert info.shape == tuple(tensor.shape), (node, program.to_json())
        assert info.dtype == str(tensor.dtype).removeprefix("torch."), (node, program.to_json())


def _upper_bound_i64() -> Program:
    """PyTorch's test_upper_bound_i64: an int8 ``x + y`` whose dim's max is 2**33."""
    d = DimSpec("d0", 1, 2**33, 2**18)
    return Program((d,), (InputSpec("x0", "int8", ("d0",), Values("int", -100, 100)),
                          InputSpec("x1", "int8", (1,), Values("int", -100, 100))),
                   (Node("t0", "add", ("x0", "x1")),), ("t0",)).validate()


def test_an_int8_add_at_3_times_2_30_holds_inputs_eager_and_compiled_outputs_and_needs_no_reference():
    program, n = _upper_bound_i64(), 3 * 2**30
    assert scale.reference_dtype(program, {"d0": n}, None) is None  # an integer output: compared with eager
    oracle = 12 * 8 * scale.ORACLE_CHUNK
    assert scale.checked_bytes(program, {"d0": n}, None) == n + 1 + 2 * n + oracle  # inputs, eager's, compiled
    assert scale.size_classes(scale.reach(program, {"d0": n})) == ("elements>=2^31",)
    assert scale.size_classes(scale.reach(program, {"d0": 2**31 - 1})) == ()


def test_a_half_program_gets_a_float32_reference_only_where_float64_would_not_fit():
    d = DimSpec("d0", 1, None, 4)
    program = Program((d,), (InputSpec("x0", "float16", ("d0", 8)),), (Node("t0", "sigmoid", ("x0",)),),
                      ("t0",)).validate()
    env = {"d0": 2**28}
    wide = scale.run_bytes(program, env, "float64")
    assert scale.reference_dtype(program, env, wide) == "float64"
    assert scale.reference_dtype(program, env, wide - 1) == "float32"
    assert scale.run_bytes(program, env, "float32") < wide - 1


def test_a_select_of_the_last_row_reaches_the_whole_base():
    d = DimSpec("d0", 2, None, 4)
    program = Program((d,), (InputSpec("x0", "int8", ("d0", 1000)),),
                      (Node("t0", "select", ("x0",), (("dim", 0), ("index", -1))), Node("t1", "neg", ("t0",))),
                      ("t1",)).validate()
    measures = scale.reach(program, {"d0": 2**22})
    assert measures["elements"] == 2**22 * 1000  # the offset of its last row, though it holds 1000
    assert scale.family_reach(program, {"d0": 2**22})["slices"]["elements"] == 2**22 * 1000


def test_a_big_cpu_input_repeats_a_block_whose_period_no_wrapped_int32_index_matches():
    # the CPU's seeded generator draws on one thread: a large-profile CPU campaign spent its
    # first 3 minutes drawing one batch's inputs. Big CPU inputs repeat one random block; an
    # index that wrapped by 2**31 or 2**32 must still read a different value, or a wrapped read
    # would compare equal to eager and the int32 bug class would pass unseen
    import torch

    from fuzzaoti.model.inputs import BIG_NUMEL, CPU_PERIOD, make_tensor

    n = BIG_NUMEL + CPU_PERIOD
    x = make_tensor("float16", (n,), "normal", None, None, 3, "cpu")
    assert torch.equal(x, make_tensor("float16", (n,), "normal", None, None, 3, "cpu"))  # a function of the seed
    assert torch.equal(x[CPU_PERIOD:CPU_PERIOD + 1000], x[:1000])
    for wrap in (2**31, 2**32):
        phase = wrap % CPU_PERIOD
        assert phase and not torch.equal(x[phase:phase + 1000], x[:1000])
