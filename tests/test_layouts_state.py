"""Input layouts and module state: how inputs lie in memory (``Program.LAYOUTS``), and the
parameters and buffers a module holds (``StateSpec``), swapped after loading under runtime
constant folding (``Program.swaps_state``)."""

import subprocess
import sys

import pytest
import torch

from fuzzaoti.check.oracle import called, compare_outputs, copied, fresh, storage_of
from fuzzaoti.compile import render
from fuzzaoti.compile.backends.base import Prepared
from fuzzaoti.compile.render import repro_script
from fuzzaoti.errors import InvalidProgram
from fuzzaoti.model.case import Case
from fuzzaoti.model.inputs import OFFSET, laid_out, poison_value
from fuzzaoti.model import concrete
from fuzzaoti.model.program import SWAP_CONFIG, DimSpec, InputSpec, Node, Program, StateSpec, Values
from fuzzaoti.findings.shrink import _program_candidates
from fuzzaoti.workers.execute import check_batch
from fuzzaoti.workers.protocol import Job

RUNS = [{"env": {"d0": n}, "seed": s} for s, n in enumerate((3, 17, 33))]


def _laid(layouts=("transposed", "offset", "expanded", "channels_last"), state=True, configs=()) -> Program:
    """bmm of x0 (d0, 5, 7) and x1 (d0, 7, 3), a masked_fill_ into x3 (d0, 6), an index_select
    of x2 (2, 3, d0, 4) by a buffer, and a parameter added to the bmm: every layout and both
    kinds of state. The written input x3 takes the second layout (offset), never 'expanded'."""
    x0, _, x2, x3 = (("contiguous",) * 4 if not layouts else
                     (layouts[0], layouts[0], layouts[3] if len(layouts) > 3 else "contiguous", layouts[1]))
    inputs = (InputSpec("x0", "float32", ("d0", 5, 7), layout=x0),
              InputSpec("x1", "float32", ("d0", 7, 3), layout=layouts[2] if layouts else "contiguous"),
              InputSpec("x2", "float32", (2, 3, "d0", 4), layout=x2),
              InputSpec("x3", "float32", ("d0", 6), layout=x3),
              InputSpec("m0", "bool", ("d0", 6), Values("bool")))
    nodes = [Node("t0", "bmm", ("x0", "x1")),
             Node("t2", "masked_fill_", ("x3", "m0"), (("value", 2),)),
             Node("t3", "index_select", ("x2", "i0" if state else "j0"), (("dim", 3),))]
    own = ()
    if state:
        own = (StateSpec("w0", "float32", (5, 3), kind="parameter", seed=0),
               StateSpec("i0", "int64", (5,), Values("int", 0, 4), kind="buffer", seed=1))
        nodes.insert(1, Node("t1", "add", ("t0", "w0")))
    else:
        inputs += (InputSpec("j0", "int64", (5,), Values("int", 0, 4)),)
    outputs = ("t1" if state else "t0", "t2", "t3")
    return Program((DimSpec("d0", 2, 64, 8),), inputs, tuple(nodes), outputs, configs, state=own).validate()


def test_layouts_keep_values_and_lie_as_named():
    value = torch.randn(2, 3, 4, 5)
    assert laid_out(value, "transposed").stride() == (1, 2, 6, 24)
    assert torch.equal(laid_out(value, "transposed"), value)
    assert laid_out(value, "channels_last").is_contiguous(memory_format=torch.channels_last)
    offset = laid_out(value, "offset")
    assert torch.equal(offset, value) and offset.storage_offset() == OFFSET
    assert storage_of(offset)[:OFFSET].eq(poison_value(torch.float32)).all()
    expanded = laid_out(value, "expanded")
    assert expanded.stride()[0] == 0 and torch.equal(expanded[1], value[0])
    assert concrete.storage_elements((2, 3), "offset") == 6 + 2 * OFFSET and concrete.OFFSET == OFFSET


def test_a_copy_keeps_its_layout_and_the_poison_around_it():
    t = laid_out(torch.randn(4, 6), "offset")
    c = copied(t)
    assert c.data_ptr() != t.data_ptr() and (c.stride(), c.storage_offset()) == (t.stride(), t.storage_offset())
    assert torch.equal(storage_of(c), storage_of(t))
    wide = copied(t, torch.float64)
    assert wide.dtype == torch.float64 and wide.storage_offset() == OFFSET and torch.equal(wide, t.double())


def test_a_write_outside_a_written_input_view_is_a_mismatch():
    # the whole storage of a written input at an offset is judged: a package that spills into
    # the poison before the view differs there even when the view itself is right
    t = laid_out(torch.zeros(4, 6), "offset")

    def right(x):
        x.add_(1)
        return (x.sum(),)

    def spills(x):
        storage_of(x)[OFFSET - 1] = 0
        return right(x)

    expected = called(right, fresh([t], (0,)), (0,))
    assert compare_outputs(expected, expected, expected) is None
    verdict = compare_outputs(called(spills, fresh([t], (0,)), (0,)), expected, expected)
    assert verdict is not None and verdict["output"] == 2  # the sum, the view, then its storage


def test_layouts_and_state_are_validated_and_round_trip():
    p = _laid()
    assert Program.from_json(p.to_json()) == p
    assert '"layout"' not in _laid(layouts=(), state=False).to_json()  # older programs keep their ids
    assert '"state"' not in _laid(layouts=(), state=False).to_json()
    with pytest.raises(InvalidProgram, match="layout 'expanded'"):  # x3 is written into
        _laid(layouts=("transposed", "expanded", "offset"))
    with pytest.raises(InvalidProgram, match="unknown layout"):
        Program.from_dict({**p.to_dict(), "inputs": [{**p.to_dict()["inputs"][0], "layout": "weird"}]
                           + p.to_dict()["inputs"][1:]})
    with pytest.raises(InvalidProgram, match="static shape"):
        p.with_(state=(StateSpec("w0", "float32", ("d0", 3)),) + p.state[1:]).validate()
    with pytest.raises(InvalidProgram, match="writes into module state"):
        p.with_(nodes=p.nodes + (Node("t9", "mul_", ("w0", "w0")),)).validate()


def test_an_input_offset_at_run_is_aligned_in_export_s_example_only():
    p = _laid(layouts=("transposed", "offset_at_run", "offset", "channels_last"))
    example, run = concrete.input_specs(p, p.hint_env(), example=True), concrete.input_specs(p, {"d0": 5})
    assert (example[3]["layout"], run[3]["layout"]) == ("contiguous", "offset")  # x3, which it writes
    assert [s["layout"] for s in example if s is not example[3]] == [s["layout"] for s in run if s is not run[3]]
    assert concrete.storage_elements((5, 6), "offset_at_run") == 30 + 2 * OFFSET


def test_a_run_whose_strides_are_not_export_s_is_not_accepted():
    prepared = Prepared(run=None, ranges={}, sizes={(0, 0): "s0"}, strides={(0, 0): "1", (0, 1): "s0"})
    assert prepared.accepts([(5, 3)], 0, [(1, 5)])
    assert not prepared.accepts([(5, 3)], 0, [(3, 1)])  # contiguous where export saw a transposed input
    assert prepared.accepts([(1, 3)], 0, [(3, 1)])  # (an axis of one: its stride is never read)


def test_shrink_tries_each_input_contiguous_and_the_state_as_inputs():
    from fuzzaoti.model.case import Case as C
    from fuzzaoti.findings.shrink import size_key

    p = _laid()
    candidates = [c for c in _program_candidates(p) if c is not None]
    assert ("contiguous",) * len(p.inputs) in {tuple(i.layout for i in c.inputs) for c in candidates}
    plain = [c for c in candidates if not c.state]
    assert plain and size_key(C(plain[0], (((("d0", 3),), 0),))) < size_key(C(p, (((("d0", 3),), 0),)))


def test_the_eager_module_and_every_backend_build_the_same_state():
    p = _laid()
    a, b = (render.instantiate(render.load_program(p), "cpu") for _ in range(2))
    assert all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())
    assert isinstance(a.w0, torch.nn.Parameter) and "i0" in dict(a.named_buffers())
    swapped = render.instantiate(render.load_program(p), "cpu", swapped=True)
    assert not torch.equal(a.w0, swapped.w0)


@pytest.mark.parametrize("fault", ["spill", "stale-state"])
def test_the_fake_backend_s_layout_and_state_faults_are_mismatches(fake_fault, fault):
    fake_fault(f"*:{fault}")
    p = _laid(configs=(SWAP_CONFIG,))
    (outcome,) = check_batch(Job("fake", "cpu", (Case.from_run_dicts(p, RUNS),)), lambda s: None).cases
    assert outcome.symptom == "mismatch", outcome


@pytest.mark.aoti
def test_real_aoti_takes_every_layout_and_state_and_a_swap_of_its_constants(tmp_path):
    # one batch through a real CPU compile: the program as drawn, with contiguous inputs and
    # inputs for state, and with runtime constant folding (its constants swapped after loading)
    programs = (_laid(), _laid(layouts=(), state=False), _laid(configs=(SWAP_CONFIG,)),
                _laid(layouts=("transposed", "offset_at_run", "offset", "channels_last"), state=False))
    for configs in ((), (SWAP_CONFIG,)):
        cases = tuple(Case.from_run_dicts(p, RUNS) for p in programs if p.configs == configs)
        result = check_batch(Job("aoti", "cpu", cases), lambda s: None)
        assert [o.symptom for o in result.cases] == ["pass"] * len(cases), [o.message[:300] for o in result.cases]
        assert all(o.runs_skipped == 0 for o in result.cases)  # export's strides are the layouts'
    script = tmp_path / "repro.py"
    script.write_text(repro_script(programs[2], "cpu", [({"d0": 17}, 1)]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "0 of 1 runs wrong" in done.stdout, done.stdout + done.stderr[-2000:]


def test_triage_tries_contiguous_inputs_and_constants_as_inputs():
    from fuzzaoti.findings.triage import workaround_cases

    remedies = dict(workaround_cases(Case.from_run_dicts(_laid(), RUNS[:1])))
    contiguous, as_inputs = remedies["contiguous inputs"].program, remedies["constants as inputs"].program
    assert {i.layout for i in contiguous.inputs} == {"contiguous"} and contiguous.state == _laid().state
    assert as_inputs.state == () and {"w0", "i0"} <= {i.name for i in as_inputs.inputs}
    for name in ("contiguous inputs", "constants as inputs"):  # each still runs cleanly in eager
        assert check_batch(Job("eager", "cpu", (remedies[name],)), lambda s: None).cases[0].symptom == "pass", name
