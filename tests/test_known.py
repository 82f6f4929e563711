"""Known upstream bugs found by fuzzaoti, kept as data in corpus/known/ (one JSON file each)."""

import glob
import json
import os

import pytest

from fuzzaoti.execute import check_batch
from fuzzaoti.outcome import Outcome
from fuzzaoti.program import Program
from fuzzaoti.signature import signature

KNOWN = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "corpus", "known", "*.json")))


def _device(path):
    return json.load(open(path)).get("device", "cpu")


# a CUDA-only bug is checked on a GPU machine (and skipped elsewhere)
ON_ITS_DEVICE = [pytest.param(p, marks=[pytest.mark.gpu] if _device(p) == "cuda" else []) for p in KNOWN]


def _check(path, backend, device="cpu"):
    data = json.load(open(path))
    program = Program.from_dict(data["program"])
    job = {"backend": backend, "device": device, "cases": [{"program": program.to_json(), "runs": data["runs"]}]}
    result = check_batch(job, lambda stage: None)
    return data, program, Outcome.from_dict(result["batch"] or result["cases"][0])


def test_there_are_known_cases():
    assert KNOWN


@pytest.mark.parametrize("path", KNOWN, ids=os.path.basename)
def test_known_case_is_a_valid_program_that_eager_runs_cleanly(path):
    _, _, outcome = _check(path, "eager")
    assert outcome.passed, outcome.message


@pytest.mark.aoti
@pytest.mark.parametrize("path", ON_ITS_DEVICE, ids=os.path.basename)
def test_known_case_reproduces_with_its_signature(path):
    data, program, outcome = _check(path, "aoti", _device(path))
    if outcome.passed:
        pytest.xfail(f"fixed in this torch: {data['title']}")
    assert signature(outcome, program) == data["signature"]


@pytest.mark.aoti
def test_a_wrongly_rejected_range_is_pinned_on_its_member_of_a_batch(five_op_program):
    # export names the member whose range it rejects; its guard is checked without bisection
    path = os.path.join(os.path.dirname(KNOWN[0]), "export-flatten-repeated-dim-false-constraint.json")
    data = json.load(open(path))
    wrongly_rejected = Program.from_dict(data["program"])
    job = {"backend": "aoti", "device": "cpu", "cases": [
        {"program": five_op_program.to_json(), "runs": [{"env": {"b": 3, "n": 9}, "seed": 0}]},
        {"program": wrongly_rejected.to_json(), "runs": data["runs"]}]}
    result = check_batch(job, lambda stage: None)
    assert result["batch"] is None
    passed, rejected = (Outcome.from_dict(o) for o in result["cases"])
    assert passed.passed and passed.runs_checked == 1
    assert signature(rejected, wrongly_rejected) == data["signature"]
    assert "holds for every d1 in [1, 256] (256 sizes tried)" in rejected.message
