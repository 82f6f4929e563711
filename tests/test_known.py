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


def _check(path, backend):
    data = json.load(open(path))
    program = Program.from_dict(data["program"])
    job = {"backend": backend, "device": "cpu", "cases": [{"program": program.to_json(), "runs": data["runs"]}]}
    result = check_batch(job, lambda stage: None)
    return data, program, Outcome.from_dict(result["batch"] or result["cases"][0])


def test_there_are_known_cases():
    assert KNOWN


@pytest.mark.parametrize("path", KNOWN, ids=os.path.basename)
def test_known_case_is_a_valid_program_that_eager_runs_cleanly(path):
    _, _, outcome = _check(path, "eager")
    assert outcome.passed, outcome.message


@pytest.mark.aoti
@pytest.mark.parametrize("path", KNOWN, ids=os.path.basename)
def test_known_case_reproduces_with_its_signature(path):
    data, program, outcome = _check(path, "aoti")
    if outcome.passed:
        pytest.xfail(f"fixed in this torch: {data['title']}")
    assert signature(outcome, program) == data["signature"]
