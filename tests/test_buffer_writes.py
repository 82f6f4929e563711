"""Buffers the program writes into (``Program.mutated_state``): their values carry from call to
call, so every package call is mirrored by an eager twin called the same way (``shadow_step``),
and each run is judged against the twin's outputs at that call."""

import subprocess
import sys

import pytest

from fuzzaoti.compile.render import repro_script
from fuzzaoti.errors import InvalidProgram
from fuzzaoti.model.case import Case
from fuzzaoti.model.program import SWAP_CONFIG, DimSpec, InputSpec, Node, Program, StateSpec
from fuzzaoti.workers.execute import check_batch
from fuzzaoti.workers.protocol import Job

RUNS = [{"env": {"d0": n}, "seed": s} for s, n in enumerate((3, 17, 33, 5))]


def _accumulating(kind="buffer", configs=()) -> Program:
    """b0 (6,) += x0.sum(0) at every call (narrow_add_ over all of it), returned; and the sum
    of x0 read through the buffer afterwards."""
    return Program((DimSpec("d0", 2, 64, 8),), (InputSpec("x0", "float32", ("d0", 6)),),
                   (Node("t0", "sum", ("x0",), (("dim", 0),)),
                    Node("t1", "narrow_add_", ("b0", "t0"), (("dim", 0), ("start", 0), ("trim", 0))),
                    Node("t2", "mul", ("t1", "t0"))),
                   ("t2", "t1"), configs,
                   state=(StateSpec("b0", "float32", (6,), kind=kind, seed=3),)).validate()


def _plain() -> Program:
    return Program((DimSpec("d0", 2, 64, 8),), (InputSpec("x0", "float32", ("d0", 6)),),
                   (Node("t0", "sum", ("x0",), (("dim", 0),)),), ("t0",)).validate()


def test_a_buffer_may_be_written_but_not_a_parameter_nor_swapped_state():
    assert _accumulating().mutated_state() == ("b0",) and _plain().mutated_state() == ()
    with pytest.raises(InvalidProgram, match="a parameter"):
        _accumulating(kind="parameter")
    with pytest.raises(InvalidProgram, match="whose state is swapped"):
        _accumulating(configs=(SWAP_CONFIG,))


def test_a_package_that_keeps_its_buffer_writes_passes_call_after_call():
    cases = (Case.from_run_dicts(_plain(), RUNS), Case.from_run_dicts(_accumulating(), RUNS))
    result = check_batch(Job("fake", "cpu", cases), lambda s: None)
    assert [(o.symptom, o.runs_checked) for o in result.cases] == [("pass", 4)] * 2, \
        [o.message for o in result.cases]


def test_a_package_that_forgets_its_buffer_writes_is_wrong_from_its_second_call(fake_fault):
    # every call of the package steps the buffer, the calls that feed this member its examples
    # too, so the first judged call already differs where writes are forgotten
    fake_fault("narrow_add_:forgets-writes")
    cases = (Case.from_run_dicts(_plain(), RUNS), Case.from_run_dicts(_accumulating(), RUNS))
    result = check_batch(Job("fake", "cpu", cases), lambda s: None)
    assert result.cases[0].symptom == "pass" and result.cases[1].symptom == "mismatch", result.cases[1].message


@pytest.mark.aoti
def test_real_aoti_keeps_a_buffer_it_writes_from_call_to_call(tmp_path):
    cases = (Case.from_run_dicts(_plain(), RUNS), Case.from_run_dicts(_accumulating(), RUNS))
    result = check_batch(Job("aoti", "cpu", cases), lambda s: None)
    assert [(o.symptom, o.runs_checked) for o in result.cases] == [("pass", 4)] * 2, \
        [o.message[:300] for o in result.cases]
    script = tmp_path / "repro.py"
    script.write_text(repro_script(_accumulating(), "cpu", [({"d0": n}, s) for s, n in enumerate((3, 17, 33))]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "0 of 3 runs wrong" in done.stdout, done.stdout + done.stderr[-2000:]
