"""Standby workers (fuzzaoti/workers/standby.py), driven through the fake backend's scripted faults."""

import os

import pytest

from fuzzaoti.model.case import Case
from fuzzaoti.workers.placement import wants_standby
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.workers.standby import WARM_UP, warm_up_job
from fuzzaoti.workers.worker import WorkerConfig


def _case(program):
    return Case(program, (((("b", 3), ("n", 9)), 1),))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a killed child stays a zombie until reaped: count it dead
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


def _innocent_relu():
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program

    program = Program((DimSpec("m", 2, 9, 3),), (InputSpec("x0", "float32", ("m",)),),
                      (Node("t0", "relu", ("x0",)),), ("t0",)).validate()
    return Case(program, (((("m", 4),), 0),))


def _warm_spare(pool):
    """The pool's spare for its one worker, once warmed (its thread done)."""
    (spare,) = pool.standbys._spares.values()
    spare.thread.join(60)
    return spare


def test_a_crashed_worker_is_replaced_by_the_warm_standby(bmm_index_program, fake_fault):
    fake_fault("bmm:crash")
    pool = WorkerPool(WorkerConfig(backend="fake"), standby=True)
    try:
        pool.start()
        assert not pool.standbys._spares  # none with the pool: it would slow the first compiles
        (first,) = pool.check([Case(WARM_UP, (((("d0", 3),), 0),))])
        assert first.passed
        spare = _warm_spare(pool)  # started after the first batch, and warmed by a compile
        assert spare.warmed and spare.worker.alive()
        spare_pid = spare.worker.process.pid
        (crashed,) = pool.check([_case(bmm_index_program)])
        assert crashed.symptom == "crash"
        (after,) = pool.check([Case(WARM_UP, (((("d0", 4),), 1),))])
        assert after.passed
        worker = pool.workers[0]
        assert worker.process.pid == spare_pid and pool.restarts == 1
        assert pool.standbys.handed_out == 1
        assert "1 worker restarts, 1 of them by a warm standby" in pool.describe()
        assert _warm_spare(pool).worker.process.pid != spare_pid  # the next spare warms meanwhile
    finally:
        pool.close()


def test_taking_the_spare_starts_the_next_one_at_once():
    # not only after the next batch: two workers retired close together would find none
    pool = WorkerPool(WorkerConfig(backend="fake"), standby=True)
    try:
        pool.check([Case(WARM_UP, (((("d0", 3),), 0),))])
        _warm_spare(pool)
        worker = pool.workers[0]
        worker.kill()
        worker.start()
        assert pool.standbys.handed_out == 1 and worker.config in pool.standbys._spares
    finally:
        pool.close()


def test_a_spare_that_fails_its_warm_up_is_not_used(fake_fault):
    # the warm-up program's own op crashes: every spare dies warming, and the slot starts cold
    fake_fault("affine:crash")
    pool = WorkerPool(WorkerConfig(backend="fake"), standby=True)
    try:
        (crashed,) = pool.check([Case(WARM_UP, (((("d0", 3),), 0),))])
        assert crashed.symptom == "crash"
        spare = _warm_spare(pool)
        assert not spare.warmed and not spare.worker.alive()
        (again,) = pool.check([Case(WARM_UP, (((("d0", 4),), 0),))])
        assert again.symptom == "crash"  # checked by a cold worker, not lost
        assert pool.restarts == 1 and pool.standbys.handed_out == 0
    finally:
        pool.close()


def test_a_spare_whose_warm_up_hangs_is_given_up_not_waited_for(fake_fault):
    import time

    fake_fault("affine:hang")  # the warm-up program's run never returns
    pool = WorkerPool(WorkerConfig(backend="fake"), standby=True)
    try:
        pool.check([_innocent_relu()])
        config = pool.workers[0].config
        (spare,) = pool.standbys._spares.values()
        started = time.monotonic()
        assert pool.standbys.take(config, wait_s=2) is None
        assert time.monotonic() - started < 30  # not the 300 s run timeout
        spare.thread.join(30)
        assert not spare.worker.alive() and not spare.thread.is_alive()
    finally:
        pool.close()


def test_closing_the_pool_ends_its_spares(bmm_index_program):
    pool = WorkerPool(WorkerConfig(backend="fake"), standby=True)
    pool.check([Case(WARM_UP, (((("d0", 3),), 0),))])
    pid = _warm_spare(pool).worker.process.pid
    assert _alive(pid)
    pool.close()
    assert not _alive(pid)
    assert pool.standbys.take(pool.workers[0].config) is None
    pool.standbys.refill(pool.workers[0].config)  # a closed pool starts no spare
    assert not pool.standbys._spares


def test_the_warm_up_job_is_one_small_run_on_the_workers_device_and_backend():
    config = WorkerConfig(device="cuda", backend="aoti", max_bytes=123)
    job = warm_up_job(config)
    assert (job.backend, job.device, job.max_bytes) == ("aoti", "cuda", 123)
    assert [c.program for c in job.cases] == [WARM_UP] and len(job.cases[0].runs) == 1


@pytest.mark.parametrize("device,wanted", [("cuda", True), ("cpu", False)])
def test_campaigns_keep_a_standby_on_gpus_only(device, wanted):
    assert wants_standby(device) is wanted
