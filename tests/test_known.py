"""Known upstream bugs found by fuzzaoti, kept as data in corpus/known/ (one JSON file each)."""

import glob
import json
import os

import pytest

from fuzzaoti.workers.execute import check_batch
from fuzzaoti.model.program import Program
from fuzzaoti.check.signature import signature
from fuzzaoti.model.case import Case
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.workers.worker import WorkerConfig
from fuzzaoti.workers.protocol import Job

KNOWN = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "fuzzaoti", "corpus", "known", "*.json")))


def _device(path):
    return json.load(open(path)).get("device", "cpu")


# a CUDA-only bug is checked on a GPU machine (and skipped elsewhere)
ON_ITS_DEVICE = [pytest.param(p, marks=[pytest.mark.gpu] if _device(p) == "cuda" else []) for p in KNOWN]


def _check(path, backend, device="cpu"):
    data = json.load(open(path))
    program = Program.from_dict(data["program"])
    if device == "cuda":
        # in a worker of its own: a device-side assert poisons the CUDA context of the process
        # it happens in, and every later CUDA test in this one would fail with it
        pool = WorkerPool(WorkerConfig(device=device, backend=backend))
        try:
            (outcome,) = pool.check([Case.from_run_dicts(program, data["runs"])])
        finally:
            pool.close()
        return data, program, outcome
    result = check_batch(Job(backend, device, (Case.from_run_dicts(program, data["runs"]),)), lambda stage: None)
    return data, program, result.batch or result.cases[0]


def test_there_are_known_cases():
    assert KNOWN


@pytest.mark.parametrize("path", KNOWN, ids=os.path.basename)
def test_known_case_is_a_valid_program_that_eager_runs_cleanly(path):
    _, _, outcome = _check(path, "eager")
    assert outcome.passed, outcome.message


@pytest.mark.aoti
@pytest.mark.parametrize("path", ON_ITS_DEVICE, ids=os.path.basename)
def test_known_case_fails_in_its_torch_range_and_passes_past_its_fix(path):
    # strict both ways: a pipeline that stopped catching this bug fails here (inside the range
    # the entry names), and so does a regression after its fix
    import torch

    from fuzzaoti.corpus.known_bugs import expected_result

    data = json.load(open(path))
    expected = expected_result(data, torch.__version__)
    if expected == "unknown":
        pytest.skip(f"not known to fail before torch {data['fails_from']}")
    data, program, outcome = _check(path, "aoti", _device(path))
    if expected == "pass":
        assert outcome.passed, f"fixed in {data['fixed_in']}, fails again: {signature(outcome, program)}"
    else:
        assert not outcome.passed, f"passes on torch {torch.__version__}: fixed? set its fixed_in"
        assert signature(outcome, program) == data["signature"]


def _beside_a_passing_program(five_op_program, name):
    """Check known case ``name`` in one batch after a program that passes."""
    data = json.load(open(os.path.join(os.path.dirname(KNOWN[0]), name)))
    program = Program.from_dict(data["program"])
    job = Job("aoti", "cpu", (Case.from_run_dicts(five_op_program, [{"env": {"b": 3, "n": 9}, "seed": 0}]),
                              Case.from_run_dicts(program, data["runs"])))
    result = check_batch(job, lambda stage: None)
    passed, known = result.cases
    return data, program, result, passed, known


@pytest.mark.aoti
def test_a_wrongly_rejected_range_is_pinned_on_its_member_of_a_batch(five_op_program):
    # export names the member whose range it rejects; its guard is checked without bisection
    data, program, result, passed, rejected = _beside_a_passing_program(
        five_op_program, "export-flatten-repeated-dim-false-constraint.json")
    assert result.batch is None
    assert passed.passed and passed.runs_checked == 1
    assert signature(rejected, program) == data["signature"]
    assert "holds for every d1 in [1, 256] (256 sizes tried)" in rejected.message


@pytest.mark.aoti
def test_a_member_whose_export_fails_is_found_without_bisecting(five_op_program):
    # export raises KeyError for the merged module without naming a member: each member is
    # exported alone (no compile), the failing one keeps that outcome, the rest compile once
    data, program, result, passed, failed = _beside_a_passing_program(
        five_op_program, "export-derived-dim-keyerror-max.json")
    if failed.passed:
        pytest.xfail(f"fixed in this torch: {data['title']}")
    assert result.batch is None
    assert passed.passed and passed.runs_checked == 1
    assert signature(failed, program) == data["signature"]
