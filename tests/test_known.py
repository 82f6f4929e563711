"""Known upstream bugs found by fuzzaoti, kept as data in corpus/known/ (one JSON file each)."""

import collections
import glob
import os
import re
import subprocess
import sys

import pytest

from fuzzaoti.workers.execute import check_batch
from fuzzaoti.model.program import Program
from fuzzaoti.check.signature import signature
from fuzzaoti.check.verdict import RungResult, Verdict
from fuzzaoti.corpus.known_entry import load_entry
from fuzzaoti.model.case import Case
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.workers.worker import WorkerConfig
from fuzzaoti.workers.protocol import Job

KNOWN = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "fuzzaoti", "corpus", "known", "*.json")))


def _device(path):
    return load_entry(path).device


def _check(path, backend, device="cpu"):
    data = load_entry(path)
    program = Program.from_dict(data.program)
    if device == "cuda":
        # in a worker of its own: a device-side assert poisons the CUDA context of the process
        # it happens in, and every later CUDA test in this one would fail with it
        pool = WorkerPool(WorkerConfig(device=device, backend=backend))
        try:
            (outcome,) = pool.check([Case.from_run_dicts(program, list(data.runs))])
        finally:
            pool.close()
        return data, program, outcome
    result = check_batch(Job(backend, device, (Case.from_run_dicts(program, list(data.runs)),)), lambda stage: None)
    return data, program, result.batch or result.cases[0]


def test_there_are_known_cases():
    assert KNOWN


@pytest.mark.parametrize("path", KNOWN, ids=os.path.basename)
def test_known_case_is_a_valid_program_that_eager_runs_cleanly(path):
    _, _, outcome = _check(path, "eager")
    assert outcome.passed, outcome.message


@pytest.mark.aoti
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_every_known_case_does_what_its_entry_says_for_this_torch(tmp_path, device):
    # through the pytest plugin, as a user runs it (pytest --fuzzaoti-known): strict both ways.
    # Inside an entry's torch range it must fail with its signature (a pipeline that stopped
    # catching the bug fails here, as an XPASS or a different failure); past its fixed_in it must
    # pass (a regression fails); before its fails_from it is skipped.
    import torch

    from fuzzaoti.corpus.known_bugs import expected_result

    word = {"fail": "xfailed", "pass": "passed", "unknown": "skipped"}
    expected = collections.Counter(word[expected_result(load_entry(p), torch.__version__)]
                                   for p in KNOWN if _device(p) == device)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "--fuzzaoti-known",
                           "--fuzzaoti-device", device], cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    last = done.stdout.strip().splitlines()[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", last) if word != "warnings"}
    assert done.returncode == 0 and counts == dict(expected), done.stdout[-6000:]


def _beside_a_passing_program(five_op_program, name):
    """Check known case ``name`` in one batch after a program that passes."""
    data = load_entry(os.path.join(os.path.dirname(KNOWN[0]), name))
    program = Program.from_dict(data.program)
    job = Job("aoti", "cpu", (Case.from_run_dicts(five_op_program, [{"env": {"b": 3, "n": 9}, "seed": 0}]),
                              Case.from_run_dicts(program, list(data.runs))))
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
    assert signature(rejected, program) == data.signature
    assert "holds for every d1 in [1, 256] (256 sizes tried)" in rejected.message


@pytest.mark.aoti
def test_a_member_whose_export_fails_is_found_without_bisecting(five_op_program):
    # export raises KeyError for the merged module without naming a member: each member is
    # exported alone (no compile), the failing one keeps that outcome, the rest compile once
    data, program, result, passed, failed = _beside_a_passing_program(
        five_op_program, "export-derived-dim-keyerror-max.json")
    if failed.passed:
        pytest.xfail(f"fixed in this torch: {data.title}")
    assert result.batch is None
    assert passed.passed and passed.runs_checked == 1
    assert signature(failed, program) == data.signature


@pytest.mark.aoti
def test_triage_tells_a_bug_the_export_hint_decided():
    # the CPU sum compiled without cascade summation at its hint of 48 rows: the same Dim range
    # exported at the failing 2**24 rows passes, the seeds' bounded max does not; a triage
    # without the hinted probe could not tell this root cause from a codegen bug of every size
    import torch

    from fuzzaoti.corpus.known_bugs import expected_result
    from fuzzaoti.findings.triage import workarounds

    path = os.path.join(os.path.dirname(KNOWN[0]), "aoti-cpu-sum-cascade-chosen-at-export-hint.json")
    data = load_entry(path)
    if expected_result(data, torch.__version__) != "fail":
        pytest.skip(f"not in the entry's torch range: {data.title}")
    case = Case.from_run_dicts(Program.from_dict(data.program), list(data.runs[:1]))
    pool = WorkerPool(WorkerConfig(backend="aoti"))
    try:
        remedies = workarounds(case, data.signature, pool.check)
    finally:
        pool.close()
    assert all(want.fits(remedies.get(rung)) for rung, want in data.members.workarounds.items())  # its
    assert remedies["bounded Dim max"] == RungResult(Verdict.FAILS_SAME)  # members rule's evidence
