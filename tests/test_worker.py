"""The isolation boundary, driven through the fake backend's scripted faults."""

import os
import re
import time

import pytest

from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.model.case import Case
from fuzzaoti.workers.worker import WorkerConfig


def _case(program, env=None):
    return Case(program, ((tuple(sorted((env or {"b": 3, "n": 9}).items())), 1),))


def _innocent():
    """A relu case that the fake backend's bmm faults never touch."""
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program

    program = Program((DimSpec("m", 2, 9, 3),), (InputSpec("x0", "float32", ("m",)),),
                      (Node("t0", "relu", ("x0",)),), ("t0",)).validate()
    return Case(program, (((("m", 4),), 0),))


@pytest.mark.parametrize("mode,stage,symptom", [
    ("wrong", "compare", "mismatch"),
    ("raise", "run", "exception"),
    ("crash", "run", "crash"),
    ("hang", "run", "timeout"),
])
def test_faults_come_back_as_values(bmm_index_program, fake_fault, mode, stage, symptom):
    fake_fault(f"bmm:{mode}")
    pool = WorkerPool(WorkerConfig(backend="fake", run_timeout=3))
    try:
        (outcome,) = pool.check([_case(bmm_index_program)])
        assert (outcome.stage, outcome.symptom) == (stage, symptom)
        assert outcome.env == {"b": 3, "n": 9}
        # the pool goes on: a crashed or hung worker is replaced for the next batch, and only then
        (after,) = pool.check([_innocent()])
        assert after.passed and after.runs_checked == 1
        assert pool.restarts == (1 if mode in ("crash", "hang") else 0)
    finally:
        pool.close()


def test_crash_in_a_batch_is_bisected_to_the_guilty_case(bmm_index_program, fake_fault):
    fake_fault("bmm:crash")
    pool = WorkerPool(WorkerConfig(backend="fake"))
    try:
        outcomes = pool.check([_innocent(), _case(bmm_index_program), _innocent()])
        assert [o.symptom for o in outcomes] == ["pass", "crash", "pass"]
        assert pool.stats.bisections >= 1 and pool.restarts >= 1
        # 3 cases: the whole batch, then each alone (a group of at most 4 whose worker died is not
        # halved: halves would cost 4 bisecting compiles, [innocent], [guilty, innocent] and each of those)
        assert (pool.stats.compiles, pool.stats.bisect_compiles) == (4, 3)
        assert pool.stats.bisect_s > 0 and "3 of them bisecting failed batches" in pool.stats.describe()
    finally:
        pool.close()


def test_unknown_canary_fails_the_worker_start(bmm_index_program):
    from fuzzaoti.workers.worker import Worker, WorkerDied

    worker = Worker(WorkerConfig(backend="fake", canary="no-such-canary"))
    with pytest.raises(WorkerDied, match="no-such-canary"):
        worker.start()
    worker.close()


def test_programs_with_different_configs_are_compiled_apart(bmm_index_program, fake_fault):
    fake_fault("nothing:wrong")
    autotuned = bmm_index_program.with_(configs=(("max_autotune", True),))
    pool = WorkerPool(WorkerConfig(backend="fake"))
    try:
        outcomes = pool.check([_case(bmm_index_program), _case(autotuned)])
        assert [o.symptom for o in outcomes] == ["pass", "pass"]
        assert pool.stats.compiles == 2
        described = pool.stats.describe()  # each config set's cost per program and its count
        assert re.search(r"default [\d.]+ s \(1 checked\)", described)
        assert re.search(r"max_autotune [\d.]+ s \(1 checked\)", described)
    finally:
        pool.close()


def test_a_programs_configs_and_the_drawn_config_set_share_one_label(bmm_index_program):
    from fuzzaoti.workers.pool_stats import configs_label
    from fuzzaoti.model.program import Program
    from fuzzaoti.strategies import batch_config_sets

    for drawn in batch_config_sets("cuda"):  # a program stores its configs frozen, as pairs
        program = Program.from_dict({**bmm_index_program.to_dict(), "configs": drawn})
        assert configs_label(program.configs) == configs_label(drawn)
    assert configs_label({}) == configs_label(()) == "default"
    assert configs_label({"triton.native_matmul": True, "max_autotune": True}) == "max_autotune+triton.native_matmul"


def test_a_reload_counts_as_no_compile_in_the_mean_compile_time():
    # follow-ups budget their checks by the mean compile; a reload (a load, no compile) must
    # neither add a compile nor its seconds to it
    from fuzzaoti.workers.pool_stats import PoolStats

    stats = PoolStats()
    stats.add(40.0, False, {"compile": 40.0}, "default", 8)
    stats.add(20.0, True, {"compile": 20.0}, "default", 3)
    stats.add(5.0, True, {"load": 5.0}, "default", 4, reloaded=True)
    assert (stats.compiles, stats.reloads) == (2, 1)
    assert stats.mean_compile_s == 30.0


def test_workers_share_the_bisection_of_a_failed_share(bmm_index_program, fake_fault):
    fake_fault("bmm:raise")
    pool = WorkerPool(WorkerConfig(backend="fake"), workers=2)
    try:
        cases = [_innocent()] * 3 + [_case(bmm_index_program)] + [_innocent()] * 4
        outcomes = pool.check(cases, alone=[7])
        assert [o.symptom for o in outcomes] == ["pass"] * 3 + ["exception"] + ["pass"] * 4
        # the first share [0..3] fails as a whole; its halves go back on the queue for either worker
        assert pool.stats.bisections >= 1 and pool.stats.bisect_compiles >= 2
        assert sum(pool.checked) == 8 and all(pool.checked)  # both workers did part of the work
        # case 7, compiled alone, made a compile of its own: [0..3], [4..6], [7], then the bisection
        assert pool.stats.compiles - pool.stats.bisect_compiles == 3
        assert pool.stats.alone == 1 and pool.stats.alone_s > 0  # case 7's, counted apart in the summary
        assert "; 1 compiles of a quarantined program alone (" in pool.stats.describe()
    finally:
        pool.close()


def test_batches_queued_back_to_back_each_get_their_own_outcomes(bmm_index_program, fake_fault):
    fake_fault("bmm:raise")
    pool = WorkerPool(WorkerConfig(backend="fake"), workers=2)
    try:
        pool.start()
        first = pool.submit([_innocent()] * 2 + [_case(bmm_index_program)] + [_innocent()])
        second = pool.submit([_innocent()] * 3)
        urgent = pool.check([_case(bmm_index_program)])  # jumps the queue, and waits
        assert [o.symptom for o in urgent] == ["exception"]
        assert [o.symptom for o in first.outcomes()] == ["pass", "pass", "exception", "pass"]
        assert [o.symptom for o in second.outcomes()] == ["pass"] * 3
        assert first.troubled and not second.troubled  # the first was bisected...
        assert first.blind and not second.blind  # ...blind: the fault names no member
        assert first.worker_s > 0 and second.worker_s > 0 and pool.stats.batches == 3
    finally:
        pool.close()


def test_the_queue_serves_urgent_work_then_bisection_then_fresh_groups():
    from fuzzaoti.workers.pool import QUEUED, URGENT, Submitted, _Group

    queued, urgent = Submitted([], None, QUEUED), Submitted([], None, URGENT)
    groups = [_Group((QUEUED, 1, 0), queued, [0], False), _Group((QUEUED, 0, 1), queued, [1], True),
              _Group((URGENT, 1, 2), urgent, [0], False)]
    assert [(g.batch.priority, g.bisecting) for g in sorted(groups)] == [(URGENT, False), (QUEUED, True),
                                                                         (QUEUED, False)]


def test_a_bisection_goes_depth_first_and_takes_a_splits_parts_in_their_order(bmm_index_program):
    # a batch of 8 whose worker died: its suspect half is split again before its other half is
    # compiled, so the crash is pinned after three compiles (8, 4, 1), not four (8, 4, 4, 1); the
    # fresh group queued behind comes after the whole bisection
    import heapq

    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.workers.pool import QUEUED, Submitted
    from fuzzaoti.workers.protocol import BatchResult

    pool = WorkerPool(WorkerConfig(backend="fake"), workers=1)
    segv = BatchResult(batch=Outcome("run", "crash", "worker died with signal SIGSEGV"))
    cases = [_innocent()] * 7 + [_case(bmm_index_program)]
    batch = Submitted(cases, None, QUEUED)
    with pool._state:
        pool._push(batch, list(range(8)), bisecting=False)
        pool._push(Submitted(cases, None, QUEUED), [0], bisecting=False)  # (a fresh group queued behind)
    taken = []
    for _ in range(3):
        group = heapq.heappop(pool._queue)
        taken.append(group.indices)
        parts = pool._attempt(_Stub(segv), [cases[i] for i in group.indices], None, True)[1]
        with pool._state:
            pool._requeue(batch, group, parts)
    assert taken == [[0, 1, 2, 3, 4, 5, 6, 7], [7, 0, 1, 2], [7]]
    assert [heapq.heappop(pool._queue).indices for _ in range(5)] == [[0], [1], [2], [3, 4, 5, 6], [0]]
    pool.close()


def test_a_member_pinned_by_a_run_probe_is_checked_alone_without_a_bisection(fake_fault):
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program

    def case(op):
        program = Program((DimSpec("m", 2, None, 3),), (InputSpec("x0", "float32", ("m",)),),
                          (Node("t0", op, ("x0",)),), ("t0",)).validate()
        return Case(program, (((("m", 4),), 0), ((("m", 70),), 1)))

    fake_fault("abs:raise-large")  # abs raises at m = 70 (fake.LARGE), not at its example
    pool = WorkerPool(WorkerConfig(backend="fake"))
    try:
        batch = pool.submit([case("relu"), case("abs"), case("neg")])
        outcomes = batch.outcomes()
        assert batch.troubled and not batch.blind  # split, but pinned: no reason to halve the batch
        assert [o.symptom for o in outcomes] == ["pass", "exception", "pass"]
        assert outcomes[1].env == {"m": 70} and [o.runs_checked for o in (outcomes[0], outcomes[2])] == [2, 2]
        # the batch, then the pinned member alone: two compiles, no bisection
        assert (pool.stats.compiles, pool.stats.bisections, pool.stats.rechecks) == (2, 0, 1)
        assert pool.checked == [3]
    finally:
        pool.close()


def test_only_a_failure_pinned_on_no_member_is_a_blind_bisection():
    # the batch size halves for a blind bisection alone (batch_size.py): a named suspect, or a
    # GPU worker retired after a wrong value, costs the same whatever the batch's size
    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.workers.pool import _Part
    from fuzzaoti.workers.protocol import BatchResult

    pool = WorkerPool(WorkerConfig(backend="fake"), workers=1)
    cases = [_innocent()] * 3
    ima = Outcome("run", "illegal_memory_access", "CUDA error: an illegal memory access was encountered")
    wrong, passed = Outcome("compare", "mismatch", "1 of 8 wrong"), Outcome("done", "pass")
    named = pool._attempt(_Stub(BatchResult(batch=ima, suspect=1)), cases, None, False)
    assert (named[0], named[1], named[3]) == (None, [_Part([1]), _Part([0, 1, 2], (1,))], False)
    assert named[1][1].reload and not named[1][0].reload
    unnamed = pool._attempt(_Stub(BatchResult(batch=ima)), cases, None, False)
    assert (unnamed[1], unnamed[3]) == ([_Part([0]), _Part([1]), _Part([2])], True)  # (died: each alone)
    raised = pool._attempt(_Stub(BatchResult(batch=Outcome("compile", "exception", "boom"))), cases, None, False)
    assert (raised[1], raised[3]) == ([_Part([0]), _Part([1, 2])], True)  # (a worker still alive: halves)
    many = pool._attempt(_Stub(BatchResult(batch=ima)), cases * 2, None, False)
    assert (many[1], many[3]) == ([_Part([0, 1, 2]), _Part([3, 4, 5])], True)
    retired = pool._attempt(_Stub(BatchResult(cases=(passed, wrong, passed))), cases, None, False)
    assert (retired[1], retired[3]) == ([], False)
    alone = pool._attempt(_Stub(BatchResult(batch=ima)), cases[:1], None, True)
    assert (alone[0][0].symptom, alone[1], alone[3]) == ("illegal_memory_access", [], False)
    pool.close()


def test_a_dead_group_is_pinned_member_by_member_indirect_accesses_first(bmm_index_program):
    # a death in generated code is a wild access: the member that indexes through data is
    # compiled alone first, so the first death alone (a stored finding) comes one compile sooner
    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.workers.pool import _Part, death_order
    from fuzzaoti.workers.protocol import BatchResult

    cases = [_innocent(), _innocent(), _case(bmm_index_program), _innocent()]
    assert death_order(cases, [0, 1, 2, 3]) == [2, 0, 1, 3]
    assert death_order(cases, [0, 1, 3]) == [0, 1, 3]  # (none does: the group's order)
    pool = WorkerPool(WorkerConfig(backend="fake"), workers=1)
    segv = Outcome("run", "crash", "worker died with signal SIGSEGV")
    parts = pool._attempt(_Stub(BatchResult(batch=segv)), cases, None, False)[1]
    assert parts == [_Part([2]), _Part([0]), _Part([1]), _Part([3])]
    bigger = [_innocent()] * 5 + [_case(bmm_index_program)] + [_innocent()] * 2  # (8: halved)
    parts = pool._attempt(_Stub(BatchResult(batch=segv)), bigger, None, False)[1]
    assert parts == [_Part([5, 0, 1, 2]), _Part([3, 4, 6, 7])]
    pool.close()


class _Stub:  # a worker that answers with a given result, and keeps the job it was given
    config = WorkerConfig(device="cuda", backend="fake")
    closed = False

    def __init__(self, result, closed_midway=False):
        self.result, self.job, self.closed_midway = result, None, closed_midway

    def check(self, job):
        self.job = job
        self.closed = self.closed_midway  # (the pool's close, while this check ran)
        return self.result


def test_the_rest_of_a_group_whose_suspect_failed_in_a_run_is_reloaded_not_compiled():
    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.workers.pool import _Part
    from fuzzaoti.workers.protocol import BatchResult

    pool = WorkerPool(WorkerConfig(backend="fake"), workers=1)
    cases = [_innocent()] * 4
    ima = Outcome("run", "illegal_memory_access", "CUDA error: an illegal memory access was encountered")
    # a reloaded group (member 1 excluded) whose run killed member 3: 3 alone, the rest reloaded again
    worker = _Stub(BatchResult(batch=ima, suspect=3))
    again = pool._attempt(worker, cases, None, True, "/pkg", (1,))
    assert (worker.job.package, worker.job.exclude) == ("/pkg", (1,))
    assert again[1] == [_Part([3]), _Part([0, 1, 2, 3], (1, 3))] and pool.stats.reloads == 1
    # a failure before the runs (a compile assert blamed on member 2): the package is no proof
    crash = Outcome("compile", "crash", "worker died with signal SIGSEGV")
    assert pool._attempt(_Stub(BatchResult(batch=crash, suspect=2)), cases, None, False)[1] == [_Part([2]),
                                                                                               _Part([0, 1, 3])]
    # a reloaded group with one member checked: its failure is confirmed with it compiled alone
    lone = pool._attempt(_Stub(BatchResult(batch=ima)), cases[:2], None, True, "/pkg", (1,))
    assert (lone[0], lone[1], lone[3]) == (None, [_Part([0])], False)
    pool.close()


def test_a_worker_killed_in_a_big_run_names_its_member_and_the_rest_is_reloaded(fake_fault, monkeypatch):
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program

    def case(op):
        program = Program((DimSpec("m", 2, None, 3),), (InputSpec("x0", "float32", ("m",)),),
                          (Node("t0", op, ("x0",)),), ("t0",)).validate()
        return Case(program, (((("m", 4),), 0), ((("m", 70),), 1)))

    fake_fault("abs:crash-large")  # the worker aborts when abs runs at m = 70, not at its example
    monkeypatch.setenv("FUZZAOTI_KEEP_BYTES", "0")  # every run a big run: one member at a time
    pool = WorkerPool(WorkerConfig(backend="fake"))
    try:
        batch = pool.submit([case("relu"), case("abs"), case("neg")])
        outcomes = batch.outcomes()
        assert [o.symptom for o in outcomes] == ["pass", "crash", "pass"]
        assert (outcomes[1].stage, outcomes[1].env) == ("run", {"m": 70})  # the run it died in
        assert [o.runs_checked for o in (outcomes[0], outcomes[2])] == [2, 2]
        assert batch.troubled and not batch.blind
        # the batch, then abs alone; relu and neg from the batch's package, abs fed its example
        assert (pool.stats.compiles, pool.stats.reloads, pool.restarts) == (2, 1, 2)
        assert "load" in pool.stats.stage_s  # the reloaded group found the package (the fake's "load")
        assert "1 checks of a failed group's rest from its package (no compile)" in pool.stats.describe()
        # each group's package is removed once no queued group reloads it; the pool's folder at close
        assert not pool._package_users and os.listdir(pool._packages) == []
        packages = pool._packages
    finally:
        pool.close()
    assert not os.path.exists(packages)


def test_stage_announcements_name_the_member_of_a_big_run_and_cross_the_pipe_as_data():
    import json

    from fuzzaoti.workers.protocol import Announcement

    def sent(a):  # as the worker's pipe carries it
        return Announcement.from_dict(json.loads(json.dumps(a.to_dict())))

    big = sent(Announcement("big-run", 3, 5))
    assert (big.stage, big.run, big.member, big.spoken()) == ("run", 3, 5, "big-run 3 of member 5")
    assert sent(Announcement("big-eager", 0, 12)).stage == "eager"
    assert sent(Announcement("compare", 2)).spoken() == "compare 2" and Announcement("compile").spoken() == "compile"
    with pytest.raises(ValueError, match="unknown outcome stage 'bigrun'"):
        Announcement("bigrun", 3, 5).stage


def test_a_directed_run_is_announced_with_its_sizes_and_a_death_there_is_pinned_on_them(fake_fault, monkeypatch):
    # the parent's case does not hold a run the worker added after the compile (workers.directed):
    # its announcement carries env and seed, so the crash it causes is stored at that run
    import json

    from fuzzaoti.workers.protocol import Announcement

    from fuzzaoti.check.assumption import Assumption

    broke = Assumption("d0 <= 8", "w.py:1", "f")
    announced = Announcement("big-run", 17, 5, {"env": {"d0": 2**30}, "seed": 7, "broke": [broke.to_data()]})
    announced = Announcement.from_dict(json.loads(json.dumps(announced.to_dict())))
    assert announced.spoken() == "big-run 17 of member 5"
    assert announced.directed_run() == {"env": {"d0": 2**30}, "seed": 7, "assumptions": (broke,)}
    assert Announcement("big-run", 3, 5).directed_run() is None
    monkeypatch.setenv("FUZZAOTI_FAKE_ASSUME", "{d} <= 8")
    fake_fault("abs:crash-large")  # aborts from size 64 (fake.LARGE): only the far directed run gets there
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program

    program = Program((DimSpec("m", 2, None, 3),), (InputSpec("x0", "float32", ("m",)),),
                      (Node("t0", "abs", ("x0",)),), ("t0",)).validate()
    pool = WorkerPool(WorkerConfig(backend="fake", max_bytes=1 << 20))
    try:
        (outcome,) = pool.check([_case(program, {"m": 3})])
    finally:
        pool.close()
    assert outcome.symptom == "crash" and outcome.env["m"] >= 64, outcome
    assert outcome.assumptions == (Assumption("m <= 8", "fake.py", "prepare"),)  # what the run broke, as the worker knew it


def test_a_new_pool_removes_what_processes_that_are_gone_left_behind(tmp_path, monkeypatch):
    # a campaign killed by SIGKILL never closes its pool: the next pool on the machine sweeps up
    # its package folders and its workers' stderr files
    import subprocess
    import sys
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"fuzzaoti-packages-{gone.pid}-abc"
    live = tmp_path / f"fuzzaoti-packages-{os.getpid()}-def"
    for folder in (dead, live):
        (folder / "7").mkdir(parents=True)
    dead_stderr = tmp_path / f"fuzzaoti-worker-{gone.pid}-xyz.stderr"
    live_stderr = tmp_path / f"fuzzaoti-worker-{os.getpid()}-uvw.stderr"
    dead_stderr.write_text("x")
    live_stderr.write_text("x")
    pool = WorkerPool(WorkerConfig(backend="fake"))
    try:
        assert not dead.exists() and live.exists()
        assert not dead_stderr.exists() and live_stderr.exists()
        assert all(os.path.basename(w.stderr_path).startswith(f"fuzzaoti-worker-{os.getpid()}-")
                   for w in pool.workers)
        assert os.path.basename(pool._packages).startswith(f"fuzzaoti-packages-{os.getpid()}-")
    finally:
        pool.close()


def test_a_check_the_pool_closed_midway_counts_as_nothing(bmm_index_program):
    # the campaign's end closes the pool: a worker killed then answered "died with signal
    # SIGKILL (killed: out of memory?)", and the summary counted a batch failed by a crash
    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.workers.protocol import BatchResult

    died = BatchResult(batch=Outcome("eager", "crash", "worker died with signal SIGKILL"), seconds={"crash": 1.0})
    pool = WorkerPool(WorkerConfig(backend="fake"), workers=1)
    try:
        outcomes, parts, _, _ = pool._attempt(_Stub(died, closed_midway=True), [_case(bmm_index_program)] * 2,
                                              None, False)
        assert outcomes == [None, None] and parts == []
        assert pool.stats.compiles == 0 and not pool.stats.bisect_causes
    finally:
        pool.close()


def test_the_pool_is_starving_while_a_worker_has_nothing_to_take(fake_fault):
    # what lets a campaign queue another batch while a straggler holds its oldest (in_flight.settle)
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program

    fake_fault("abs:slow")  # each run of a program with abs takes fake.SLOW_S
    program = Program((DimSpec("m", 2, None, 3),), (InputSpec("x0", "float32", ("m",)),),
                      (Node("t0", "abs", ("x0",)),), ("t0",)).validate()
    slow = Case(program, (((("m", 4),), 0),))
    pool = WorkerPool(WorkerConfig(backend="fake"), workers=2)
    try:
        pool.start()
        assert pool.starving  # nothing queued, nobody busy
        first = pool.submit([slow])
        assert _soon(lambda: pool.starving)  # worker 0 took it: worker 1 has nothing
        second = pool.submit([slow])
        assert _soon(lambda: not pool.starving)  # both busy for seconds: nobody idles
        assert [o.symptom for o in first.outcomes() + second.outcomes()] == ["pass", "pass"]
        assert _soon(lambda: pool.starving)
    finally:
        pool.close()


def _soon(condition, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_harness_failure_prints_its_trace_once_per_signature(capsys):
    # a fuzzaoti bug that needs a whole batch may be bisected away without ever becoming a
    # finding: its trace must still reach the user (it was lost on a GPU campaign)
    from fuzzaoti.check.outcome import Outcome

    pool = WorkerPool(WorkerConfig(backend="fake"))
    trace = 'Traceback (most recent call last):\n  File "execute.py", line 9\nIndexError: list index out of range'
    for _ in range(2):
        pool._report_internal_error(Outcome("harness", "exception", trace.splitlines()[-1], stderr=trace))
    err = capsys.readouterr().err
    assert err.count("fuzzaoti internal error") == 1 and 'File "execute.py", line 9' in err


def test_a_member_pinned_by_its_workers_fault_is_found_at_once_and_its_rest_compiled_afresh():
    # a fault in a loop nest of member 2's nodes, in a call that fed it its own run: its outcome
    # is there before any further compile; it is compiled alone to confirm it, and the rest is
    # compiled without it (its code runs in every call of the package, examples or not)
    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.workers.pool import _Part
    from fuzzaoti.workers.protocol import BatchResult

    pool = WorkerPool(WorkerConfig(backend="fake"), workers=1)
    cases = [_innocent()] * 4
    segv = Outcome("run", "crash", "worker died with signal SIGSEGV", env={"m": 4}, seed=0)
    outcomes, parts, _, blind = pool._attempt(_Stub(BatchResult(batch=segv, suspect=2, faulted=True, pinned=True)),
                                              cases, None, False)
    assert outcomes == [None, None, segv, None]
    assert (parts, blind) == ([_Part([2]), _Part([0, 1, 3])], False)
    # fed its examples only (not pinned): named, not found; the same parts
    outcomes, parts, _, _ = pool._attempt(_Stub(BatchResult(batch=segv, suspect=2, faulted=True)), cases, None, False)
    assert outcomes is None and parts == [_Part([2]), _Part([0, 1, 3])]
    # a reloaded group dying in the code of the member it set aside: the rest afresh, without it
    parts = pool._attempt(_Stub(BatchResult(batch=segv, suspect=1, faulted=True)), cases, None, True, "/pkg", (1,))[1]
    assert parts == [_Part([0, 2, 3])]
    pool.close()


def test_a_fault_is_placed_in_the_loop_nest_of_the_kernel_source_that_holds_its_line():
    from fuzzaoti.workers.faults import Site, _place_in

    source = '''#include <x.h>
extern "C"  void  cpp_fused_add_0(const float* in_ptr0,
                       float* out_ptr0)
{
    std::atomic<int> error{0};
    {
        for(int64_t x0=0; x0<8L; x0+=1L)
        {
            out_ptr0[x0] = in_ptr0[x0];  // a comment with a { brace
        }
    }
    {
        printf("{");
        out_ptr0[0] = 1;
    }
}
extern "C"  void  cpp_fused_mul_1(const float* in_ptr0)
{
}'''.splitlines()
    assert [_place_in(source, line) for line in (9, 13, 14)] == [("cpp_fused_add_0", 0, 2), ("cpp_fused_add_0", 1, 2),
                                                                ("cpp_fused_add_0", 1, 2)]
    assert _place_in(source, 5) == ("cpp_fused_add_0", None, 2)  # (in the body, in no loop nest)
    assert _place_in(source, 18) == ("cpp_fused_mul_1", None, 0)
    assert _place_in(source, 1) is None
    site = Site("cpp_fused_add_0", 9, (3,), 1, (0, 3))
    assert (site.member, site.pinned) == (3, True)
    assert not Site("cpp_fused_add_0", 9, (3,), 1, (0,)).pinned  # (fed its examples)
    assert Site("cpp_fused_add_0", 9, (0, 3), 1, (0, 3)).member is None  # (a kernel of two, its nest unknown)


def test_cases_checked_one_at_a_time_share_a_worker_and_one_that_crashes_it_gets_it_replaced(fake_fault,
                                                                                              bmm_index_program):
    # the pytest plugin's items and recheck's findings: each case alone, in one worker kept for
    # the next (a fresh worker per case cost its torch import and a first compile's warm-up)
    from fuzzaoti.findings.replay import SharedPools

    fake_fault("bmm:crash")
    pools = SharedPools()
    try:
        first = pools.check("a", _innocent(), "cpu", "fake", None, None)
        (pool, _), = pools.pools.values()
        again = pools.check("b", _innocent(), "cpu", "fake", None, None)
        assert (first.symptom, again.symptom, pool.restarts) == ("pass", "pass", 0)  # (no restart: one worker)
        crashed = pools.check("c", _case(bmm_index_program), "cpu", "fake", None, None)
        after = pools.check("d", _innocent(), "cpu", "fake", None, None)
        assert (crashed.symptom, after.symptom, pool.restarts) == ("crash", "pass", 1)
        pools.check("e", _innocent(), "cpu", "fake", "index-shift", None)
        assert len(pools.pools) == 2  # a canary's worker is its own
    finally:
        pools.close()
    assert not pools.pools
