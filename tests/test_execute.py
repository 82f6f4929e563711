"""fuzzaoti.workers.execute's memory plan: big runs one member at a time, the budget, out of memory."""

import json
from dataclasses import replace

import torch

from fuzzaoti.workers import execute
from fuzzaoti.workers.execute import check_batch
from fuzzaoti.workers.protocol import BatchResult, Job
from fuzzaoti.model.case import Case
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
from fuzzaoti.model.scale import checked_bytes


def _job(programs, runs, max_bytes=None):
    return Job("fake", "cpu", tuple(Case.from_run_dicts(p, runs) for p in programs), max_bytes)


def _program(op="neg") -> Program:
    d = DimSpec("d0", 2, None, 4)
    return Program((d,), (InputSpec("x0", "int8", ("d0", 3), Values("int", -100, 100)),),
                   (Node("t0", op, ("x0",)),), ("t0",)).validate()


RUNS = [{"env": {"d0": n}, "seed": s} for s, n in enumerate((2, 5, 70, 9))]


def test_runs_made_again_after_the_compile_are_judged_like_kept_ones(monkeypatch, fake_fault):
    # every run deferred (KEEP_BYTES 0): each member runs alone, its expectation made anew, and a
    # wrong compiled value is still caught at the run it appears in
    monkeypatch.setattr(execute, "KEEP_BYTES", 0)
    fake_fault("abs:wrong")
    result = check_batch(_job([_program("neg"), _program("abs")], RUNS), lambda stage: None)
    clean, wrong = result.cases
    assert (clean.symptom, clean.runs_checked) == ("pass", 4)
    assert (wrong.symptom, wrong.env) == ("mismatch", {"d0": 2})
    # the big runs' time counts apart from the kept runs' (none here), for the large profile's bench
    assert {"big-eager", "big-run", "big-compare"} <= set(result.seconds) and "run" not in result.seconds


def _before_each_compiled_run(monkeypatch, hook) -> None:
    """Every run a big run, and the fake backend's compiled runs call ``hook(inputs)`` first."""
    from fuzzaoti.compile.backends.fake import FakeBackend

    monkeypatch.setattr(execute, "KEEP_BYTES", 0)
    prepare = FakeBackend.prepare

    def hooked(self, *args, **kwargs):
        prepared = prepare(self, *args, **kwargs)
        real = prepared.run

        def run(*inputs):
            hook(inputs)
            return real(*inputs)
        return replace(prepared, run=run)

    monkeypatch.setattr(FakeBackend, "prepare", hooked)


def test_a_run_over_the_budget_is_counted_and_not_run():
    program = _program()
    budget = checked_bytes(program, {"d0": 9}, None)  # 70 rows do not fit; 2, 5 and 9 do
    (outcome,) = check_batch(_job([program], RUNS, budget), lambda stage: None).cases
    assert (outcome.symptom, outcome.runs_checked, outcome.runs_over_budget) == ("pass", 3, 1)


def test_out_of_memory_in_a_big_run_is_counted_never_a_finding(monkeypatch):
    monkeypatch.setattr(execute, "KEEP_BYTES", 0)
    real = execute.make_inputs

    def tight(specs, seed, device):  # the third run's inputs do not fit this GPU at its turn
        made.append(seed)
        if seed == 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 3.00 GiB")
        return real(specs, seed, device)

    made = []
    monkeypatch.setattr(execute, "make_inputs", tight)
    (outcome,) = check_batch(_job([_program()], RUNS), lambda stage: None).cases
    assert (outcome.symptom, outcome.runs_checked, outcome.runs_oom) == ("pass", 3, 1)
    # each big run's inputs are made once, at its turn after the compile (0: the export example)
    assert sorted(made) == [0, 0, 1, 2, 3]


def test_a_program_whose_eager_run_fails_at_a_big_run_is_invalid_and_the_batch_goes_on(monkeypatch):
    # a big run's eager run comes at its turn, after the compile: failing there, the program is
    # invalid as it would have been in the eager pass, never a finding, and the others go on
    monkeypatch.setattr(execute, "KEEP_BYTES", 0)
    real = execute._Member.expect

    def expect(self, r, device):
        if self.program.nodes[0].op == "abs" and self.runs[r][0]["d0"] == 70:
            raise RuntimeError("shape '[70, 3]' is invalid for input of size 3")
        return real(self, r, device)

    monkeypatch.setattr(execute._Member, "expect", expect)
    result = check_batch(_job([_program("neg"), _program("abs")], RUNS), lambda stage: None)
    clean, invalid = result.cases
    assert result.batch is None and (clean.symptom, clean.runs_checked) == ("pass", 4)
    assert (invalid.stage, invalid.symptom, invalid.env) == ("eager", "invalid", {"d0": 70})


def test_a_cuda_error_outside_the_guarded_run_fails_the_batch_fatally(monkeypatch):
    # an illegal memory access raised by the oracle reading a compiled output (or by eager after a
    # compiled run) poisons the process: the batch fails as a whole, so its worker is replaced,
    # instead of every later program being called invalid in a dead CUDA context
    from fuzzaoti.check.outcome import fatal_for_process

    def poisoned(*args, **kwargs):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(execute, "compare_outputs", poisoned)
    result = check_batch(_job([_program()], RUNS), lambda stage: None)
    assert (result.batch.stage, result.batch.symptom) == ("compare", "illegal_memory_access")
    assert fatal_for_process(result.batch.symptom) and result.fatal("cpu")


def test_a_gpu_worker_retires_after_a_wrong_value():
    from fuzzaoti.check.outcome import fatal_for_process

    assert not fatal_for_process("pass", "cuda")
    assert fatal_for_process("mismatch", "cuda") and not fatal_for_process("mismatch", "cpu")


def test_a_big_run_that_raises_names_its_member_the_suspect(monkeypatch):
    # an illegal memory access in member 1's big run (only its inputs were real there): the pool
    # checks that member alone and the rest together, not a bisection of worker restarts
    def faulty(inputs):
        if any(t.shape[0] == 70 for t in inputs):
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    _before_each_compiled_run(monkeypatch, faulty)
    small = [r for r in RUNS if r["env"]["d0"] != 70]
    job = Job("fake", "cpu", tuple(Case.from_run_dicts(_program(op), runs)
                                   for op, runs in (("neg", small), ("abs", RUNS), ("neg", small))))
    result = check_batch(job, lambda stage: None)
    assert result.batch.symptom == "illegal_memory_access"
    assert result.suspect == 1


def test_a_run_that_raises_in_one_member_pins_it_and_the_rest_go_on(fake_fault):
    # member 1's run at d0 = 70 raises only when its own inputs are real (a launch refused past
    # a grid limit): a probe per member pins it, it is rechecked alone, and the others are
    # judged at every run in this same compile, no bisection
    fake_fault("abs:raise-large")
    job = _job([_program("neg"), _program("abs"), _program("neg")], RUNS)
    result = check_batch(job, lambda stage: None)
    assert result.batch is None and result.recheck == (1,)
    first, pinned, last = result.cases
    assert (first.symptom, first.runs_checked) == ("pass", 4) == (last.symptom, last.runs_checked)
    assert (pinned.stage, pinned.symptom, pinned.env) == ("run", "exception", {"d0": 70})


def test_a_run_that_raises_in_every_member_alone_fails_the_batch(fake_fault):
    # nothing to pin when each member raises alone too: the batch fails whole and the pool bisects
    fake_fault("abs:raise-large")
    result = check_batch(_job([_program("abs"), _program("abs")], RUNS), lambda stage: None)
    assert result.batch.symptom == "exception" and result.recheck == ()


def test_an_illegal_memory_access_surfacing_after_a_big_run_names_its_member(monkeypatch):
    # asynchronous: the big run returned, the error came at the next CUDA call (empty_cache, the
    # H200 campaign's int8 amax at 2**32 elements): the member whose big run it was is the suspect
    monkeypatch.setattr(execute, "KEEP_BYTES", 0)

    calls = []

    def release(device):  # first after member 0's big run (the eager pass makes no big run)
        calls.append(device)
        if len(calls) == 1:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(execute, "release_memory", release)
    result = check_batch(_job([_program("neg"), _program("abs")], RUNS[:1]), lambda stage: None)
    assert result.batch.symptom == "illegal_memory_access" and result.suspect == 0


def test_a_job_and_its_result_cross_the_pipe_unchanged(fake_fault):
    # what the pool sends and the worker answers is JSON on a pipe: each record survives the trip
    fake_fault("abs:raise-large")
    job = _job([_program("neg"), _program("abs"), _program("neg")], RUNS, 1 << 20)
    assert Job.from_dict(json.loads(json.dumps(job.to_dict()))) == job
    result = check_batch(job, lambda stage: None)
    assert BatchResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    with_stderr = result.with_stderr("ptxas said so")
    assert [o.stderr for o in with_stderr.cases] == ["", "ptxas said so", ""]  # failures only


def test_each_member_names_its_slowest_compiled_big_run(monkeypatch):
    # the compiled code is slow only where member 1's own input has 70 rows: that run, not
    # another, is its slowest, with its eager time beside it (fuzzaoti.campaign.slowest keeps a campaign's);
    # member 0's big runs (member 1 fed its export-time example) are all fast
    import time

    def slow(inputs):
        if inputs[1].shape[0] == 70:
            time.sleep(0.3)

    _before_each_compiled_run(monkeypatch, slow)
    first, second = check_batch(_job([_program("neg"), _program("abs")], RUNS), lambda stage: None).cases
    timed = second.slowest_run
    assert (timed["env"], timed["seed"]) == ({"d0": 70}, 2)
    assert timed["compiled_s"] >= 0.3 > timed["eager_s"] >= 0
    assert first.slowest_run["compiled_s"] < 0.3


def test_past_its_stop_at_a_worker_answers_with_the_runs_it_has_checked(monkeypatch):
    # the clock passes the job's stop_at during member 0's big run at d0 = 70 (run 2): member 0
    # has checked 3 runs and has 1 left, member 1 (its run 2 not reached) 2 and 2; a job whose
    # stop_at has passed before its compile gives no outcome at all (never checked)
    now = [1000.0]
    monkeypatch.setattr(execute.time, "time", lambda: now[0])

    def deadline_passes(inputs):
        if inputs[0].shape[0] == 70:
            now[0] = 2000.0

    _before_each_compiled_run(monkeypatch, deadline_passes)
    cases = tuple(Case.from_run_dicts(_program(op), RUNS) for op in ("neg", "abs"))
    first, second = check_batch(Job("fake", "cpu", cases, stop_at=1500.0), lambda stage: None).cases
    assert (first.symptom, first.runs_checked, first.runs_cut) == ("pass", 3, 1)
    assert (second.symptom, second.runs_checked, second.runs_cut) == ("pass", 2, 2)
    assert check_batch(Job("fake", "cpu", cases, stop_at=1500.0), lambda stage: None).cases == (None, None)


def test_a_program_the_byte_model_cannot_size_is_invalid_when_eager_refuses_it_too():
    # a shrink candidate that bypassed a node can feed an op an argument of the wrong rank: the
    # byte model's shape rules fail before eager runs (a harness failure on a GPU campaign);
    # eager refuses the program too, so it is invalid, not a fuzzaoti error
    d = DimSpec("d0", 2, None, 4)
    program = Program((d,), (InputSpec("x0", "float32", ("d0", 3)),),
                      (Node("t0", "sum", ("x0",), (("dim", 1),)), Node("t1", "transpose", ("t0",), (("d0", 0), ("d1", 1)))),
                      ("t1",))
    (outcome,) = check_batch(_job([program], RUNS[:2], max_bytes=1 << 20), lambda stage: None).cases
    assert (outcome.stage, outcome.symptom) == ("eager", "invalid") and "Dimension out of range" in outcome.message
