"""Where a launch's tasks run: processes on this machine (``local``, for tests, CI and one big
node) or a Slurm job array through submitit (``slurm``); both run ``tasks.run_task``.

``launch`` submits, then (unless detached) waits and merges every shard into ``merged.db`` as
it goes: a merge is idempotent, so a live shard is merged again each round and the merged corpus
always holds what the tasks have committed so far.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Callable

from fuzzaoti.errors import InvalidArgument
from fuzzaoti.launch.tasks import LaunchPlan, run_task

JOBS_FILE = "jobs.json"
POLL_S = 5.0


class _LocalTask:
    """One task as a process of its own session (a Ctrl-C to the launcher does not reach it)."""

    def __init__(self, plan: LaunchPlan, k: int):
        self.process = subprocess.Popen([sys.executable, "-m", "fuzzaoti.launch.tasks", plan.corpus_dir, str(k)],
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        self.ident = str(self.process.pid)

    def done(self) -> bool:
        return self.process.poll() is not None

    def state(self) -> str:
        code = self.process.poll()
        return "RUNNING" if code is None else ("COMPLETED" if code == 0 else f"FAILED (exit {code})")


class _SlurmTask:
    """One array task through submitit. Its state comes from its result file and squeue, not
    from sacct: a cluster without accounting storage (a one-node test Slurm) has no sacct."""

    def __init__(self, job):
        self.job, self.ident = job, str(job.job_id)

    def done(self) -> bool:
        if self.job.paths.result_pickle.exists():
            return True
        queued = subprocess.run(["squeue", "-h", "-j", self.ident], capture_output=True, text=True)
        return queued.returncode == 0 and not queued.stdout.strip()  # left the queue without a result

    def state(self) -> str:
        if not self.done():
            return "RUNNING"
        if not self.job.paths.result_pickle.exists():
            return "FAILED (no result: cancelled, killed or out of time)"
        try:
            code = self.job.result()
        except Exception as exc:  # noqa: BLE001 - submitit re-raises the task's own failure
            return f"FAILED ({type(exc).__name__})"
        return "COMPLETED" if code == 0 else f"FAILED (exit {code})"


def submit(plan: LaunchPlan, only: list[int] | None = None) -> dict[int, object]:
    """Start the plan's tasks (or those in ``only``); a handle per task index."""
    indices = list(range(plan.tasks)) if only is None else only
    if plan.executor == "local":
        return {k: _LocalTask(plan, k) for k in indices}
    try:
        import submitit
    except ImportError:
        raise InvalidArgument("--executor slurm needs submitit: pip install submitit") from None
    executor = submitit.AutoExecutor(folder=os.path.join(plan.corpus_dir, "slurm", "%j"), cluster="slurm")
    params = {"timeout_min": int(plan.minutes) + 15, "slurm_array_parallelism": len(indices),
              "tasks_per_node": 1, "nodes": 1, **plan.slurm}
    if plan.gpus_per_task:
        params["gpus_per_node"] = plan.gpus_per_task
    if plan.partition:
        params["slurm_partition"] = plan.partition
    executor.update_parameters(**params)
    jobs = executor.map_array(run_task, [plan.corpus_dir] * len(indices), indices)
    return {k: _SlurmTask(job) for k, job in zip(indices, jobs)}


def launch(plan: LaunchPlan, wait: bool = True, only: list[int] | None = None,
           echo: Callable[[str], None] = print) -> bool:
    """Save the plan, submit its tasks, and unless ``wait`` is false wait for them, merging the
    shards as they go; True when every task completed."""
    from fuzzaoti.corpus.merge import merge_corpora

    os.makedirs(plan.corpus_dir, exist_ok=True)
    plan.save()
    handles = submit(plan, only)
    with open(os.path.join(plan.corpus_dir, JOBS_FILE), "w") as f:
        json.dump({str(k): {"executor": plan.executor, "id": h.ident} for k, h in handles.items()}, f)
    echo(f"launched {len(handles)} task(s) ({plan.executor}): " + ", ".join(f"{k}={h.ident}" for k, h in handles.items()))
    if not wait:
        echo(f"detached: 'fuzzaoti launch --status --corpus-dir {plan.corpus_dir}' shows them")
        return True
    last = 0.0
    try:
        while True:
            finished = all(h.done() for h in handles.values())
            if finished or time.monotonic() - last >= 60:
                last = time.monotonic()
                shards = [plan.shard_path(k) for k in range(plan.tasks) if _has_corpus(plan.shard_path(k))]
                if shards:
                    merge_corpora(shards, plan.merged_path, lambda line: None)
                echo("  " + "; ".join(f"task {k}: {h.state()}" for k, h in handles.items()))
            if finished:
                break
            time.sleep(POLL_S)
    except KeyboardInterrupt:  # the tasks are in sessions (or jobs) of their own: they go on
        echo(f"detached: the tasks go on; 'fuzzaoti launch --status --corpus-dir {plan.corpus_dir}' shows them")
        return False
    ok = all(h.state() == "COMPLETED" for h in handles.values())
    echo(f"{'all tasks completed' if ok else 'some tasks failed (their logs: shard-K.log)'}; merged into {plan.merged_path}")
    return ok


def _has_corpus(path: str) -> bool:
    return os.path.exists(path) and os.path.getsize(path) > 0
