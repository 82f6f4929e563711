"""Programs that write in place: the inputs they write into are judged after every call, each
call on its own copy (fuzzaoti.check.oracle.fresh/called), in the worker and in repro scripts."""

import subprocess
import sys

import pytest

from fuzzaoti.compile.render import repro_script
from fuzzaoti.model.case import Case
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
from fuzzaoti.workers.execute import check_batch
from fuzzaoti.workers.protocol import Job

RUNS = [{"env": {"d0": n}, "seed": s} for s, n in enumerate((3, 17, 33))]


def _writer(target="x0") -> Program:
    """index_put_ with accumulate (duplicates defined) into ``target``: an input, or the
    intermediate t0 = x0 * 2; the output is t1 = the write plus one, read after it."""
    nodes = (Node("t0", "mul", ("x0", "x0")),) if target == "t0" else ()
    nodes += (Node("w", "index_put_", (target, "i0", "v0")), Node("t1", "affine", ("w",), (("scale", 1.0), ("shift", 1.0))))
    return Program((DimSpec("d0", 2, 64, 8),),
                   (InputSpec("x0", "float32", ("d0", 4)), InputSpec("i0", "int64", (5,), Values("int", 0, "d0")),
                    InputSpec("v0", "float32", (5, 4))),
                   nodes, ("t1",)).validate()


def test_the_inputs_a_program_writes_into_are_followed_through_its_writes():
    assert _writer("x0").mutated_inputs() == (0,)
    assert _writer("t0").mutated_inputs() == ()  # an intermediate's write stays inside


def test_a_package_that_never_writes_an_input_back_is_a_mismatch_on_that_input(fake_fault):
    fake_fault("index_put_:lost-write")
    (outcome,) = check_batch(Job("fake", "cpu", (Case.from_run_dicts(_writer("x0"), RUNS),)), lambda s: None).cases
    assert (outcome.symptom, outcome.verdict["output"]) == ("mismatch", 1)  # output 1: the written input x0


def test_the_same_fault_inside_an_intermediate_is_no_finding(fake_fault):
    fake_fault("index_put_:lost-write")  # the program's outputs are right; no input is written
    (outcome,) = check_batch(Job("fake", "cpu", (Case.from_run_dicts(_writer("t0"), RUNS),)), lambda s: None).cases
    assert outcome.symptom == "pass"


@pytest.mark.aoti
def test_real_aoti_writes_an_input_back_and_the_repro_judges_it(tmp_path):
    # a batch of both programs through a real CPU compile: each call on fresh copies, so the
    # accumulating write is judged once per call, never twice
    cases = tuple(Case.from_run_dicts(_writer(t), RUNS) for t in ("x0", "t0"))
    result = check_batch(Job("aoti", "cpu", cases), lambda s: None)
    assert [o.symptom for o in result.cases] == ["pass", "pass"], [o.message[:300] for o in result.cases]
    script = tmp_path / "repro.py"
    script.write_text(repro_script(_writer("x0"), "cpu", [({"d0": 17}, 1)]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "0 of 1 runs wrong" in done.stdout, done.stdout + done.stderr[-2000:]


def test_triage_lands_the_writes_in_copies_and_tells_a_lost_write_back_apart(fake_fault):
    # the rung's program writes the same values into a clone of x0: nothing is written back, so
    # a package that loses the write into its input passes there, and the rung says so
    from fuzzaoti.findings.triage import workaround_cases

    fake_fault("index_put_:lost-write")
    frozen = _writer("x0").with_(configs=(("freezing", True),)).validate()
    rungs = dict(workaround_cases(Case.from_run_dicts(frozen, RUNS)))
    copied = rungs["writes into copies"]
    assert [n.op for n in copied.program.nodes][:2] == ["clone", "index_put_"] and copied.program.mutated_inputs() == ()
    assert rungs["freezing off"].program.configs == ()
    (outcome,) = check_batch(Job("fake", "cpu", (copied,)), lambda s: None).cases
    assert outcome.symptom == "pass", outcome.message[:300]
    assert "writes into copies" not in dict(workaround_cases(Case.from_run_dicts(_writer("t0"), RUNS)))
