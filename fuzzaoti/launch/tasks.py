"""A sharded campaign's plan and its tasks: what each task runs, where its corpus and log go.

A launch directory (on a shared file system, for Slurm) holds ``launch.json`` (the plan), a
corpus and a log per task (``shard-K.db``, ``shard-K.log``) and ``merged.db``, where the shards
are merged as their tasks go. A task is ``fuzzaoti fuzz --shard K/N`` into a corpus on its
node's local disk (SQLite's locking is not safe over NFS), copied to ``shard-K.db`` (SQLite's
backup: a consistent copy) every ``COPY_EVERY_S`` and at its end. A task whose shard holds a
campaign that did not finish (preempted, requeued, killed) resumes that campaign: from the local
copy on the same node, else from the last copy in the launch directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from dataclasses import asdict, dataclass, field

from fuzzaoti.errors import InvalidArgument

PLAN_FILE = "launch.json"
MERGED = "merged.db"
EXECUTORS = ("local", "slurm")
COPY_EVERY_S = 60.0


@dataclass(frozen=True)
class LaunchPlan:
    """Everything a task needs, as data (it goes to Slurm nodes in ``launch.json``)."""

    corpus_dir: str
    tasks: int
    minutes: float
    seed: int = 0
    executor: str = "local"
    fuzz_args: tuple[str, ...] = ()  # further 'fuzzaoti fuzz' options, the same for every task
    gpus_per_task: int = 0
    partition: str | None = None
    slurm: dict = field(default_factory=dict)  # further submitit/Slurm parameters

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise InvalidArgument(f"unknown executor {self.executor!r}; choose from {', '.join(EXECUTORS)}")
        if self.tasks < 1:
            raise InvalidArgument(f"--tasks {self.tasks}: at least one task")
        for option in ("--shard", "--corpus", "--resume", "--seed", "--minutes"):
            if option in self.fuzz_args:
                raise InvalidArgument(f"{option} is the launcher's to give each task; leave it out")

    def shard_path(self, k: int) -> str:
        return os.path.join(self.corpus_dir, f"shard-{k}.db")

    def log_path(self, k: int) -> str:
        return os.path.join(self.corpus_dir, f"shard-{k}.log")

    @property
    def merged_path(self) -> str:
        return os.path.join(self.corpus_dir, MERGED)

    def save(self) -> None:
        data = {**asdict(self), "fuzz_args": list(self.fuzz_args)}
        tmp = os.path.join(self.corpus_dir, PLAN_FILE + ".tmp")
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, os.path.join(self.corpus_dir, PLAN_FILE))

    @classmethod
    def load(cls, corpus_dir: str) -> LaunchPlan:
        path = os.path.join(corpus_dir, PLAN_FILE)
        if not os.path.isdir(corpus_dir):
            raise InvalidArgument(f"no launch directory {corpus_dir}")
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as exc:
            raise InvalidArgument(f"{corpus_dir} holds no readable {PLAN_FILE} ({exc}): not a launch directory") from None
        return cls(**{**data, "corpus_dir": corpus_dir, "fuzz_args": tuple(data.get("fuzz_args", ()))})

    def local_path(self, k: int) -> str:
        """Task ``k``'s working corpus on its node's own disk (``FUZZAOTI_LOCAL_DIR``, else
        ``TMPDIR``, else /tmp), named after the launch directory so launches do not meet."""
        root = os.environ.get("FUZZAOTI_LOCAL_DIR") or os.environ.get("TMPDIR") or "/tmp"
        launch_id = hashlib.sha1(os.path.abspath(self.corpus_dir).encode()).hexdigest()[:12]
        return os.path.join(root, f"fuzzaoti-{launch_id}-shard-{k}.db")

    def task_command(self, k: int, corpus: str) -> list[str]:
        """The command task ``k`` runs on ``corpus``: its unfinished campaign resumed, else a new one."""
        fuzz = [sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--corpus", corpus]
        unfinished = unfinished_campaign(corpus)
        if unfinished is not None:
            return fuzz + ["--resume", str(unfinished)]
        return fuzz + ["--shard", f"{k}/{self.tasks}", "--seed", str(self.seed), "--minutes", f"{self.minutes:g}",
                       *self.fuzz_args]


def latest_campaign(shard: str) -> tuple[int, str] | None:
    """The newest campaign of a shard corpus, ``(id, status)``; None before its task started."""
    if not os.path.exists(shard) or os.path.getsize(shard) == 0:
        return None
    conn = sqlite3.connect(f"file:{shard}?mode=ro", uri=True)
    try:
        return conn.execute("select id, status from campaigns order by id desc limit 1").fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def unfinished_campaign(shard: str) -> int | None:
    """The newest campaign of a shard corpus when it did not finish (killed, preempted)."""
    latest = latest_campaign(shard)
    return latest[0] if latest is not None and latest[1] != "finished" else None


def shard_finished(shard: str) -> bool:
    """Whether a shard's task ran to its end: its newest campaign finished (``launch --resume``
    starts again every task for which this is False: not started, killed, preempted)."""
    latest = latest_campaign(shard)
    return latest is not None and latest[1] == "finished"


def copy_corpus(source: str, target: str) -> None:
    """A consistent copy of a live SQLite corpus (its WAL included), put in place atomically."""
    tmp = f"{target}.copy-{os.getpid()}"
    src, dst = sqlite3.connect(source), sqlite3.connect(tmp)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    os.replace(tmp, target)


def run_task(plan_dir: str, k: int) -> int:
    """Run task ``k`` of the launch in ``plan_dir`` to its end, its output appended to its log;
    its exit code. What a Slurm array task (through submitit) and a local process both run.
    A SIGTERM (scancel, preemption, a requeue) is passed on to the campaign, which stores its
    state, and the corpus is copied out before this task exits."""
    plan = LaunchPlan.load(plan_dir)
    local, shared = plan.local_path(k), plan.shard_path(k)
    if not os.path.exists(local) and os.path.exists(shared) and os.path.getsize(shared):
        copy_corpus(shared, local)  # a task requeued on another node: from the last copy out
    with open(plan.log_path(k), "ab") as log:
        proc = subprocess.Popen(plan.task_command(k, local), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: proc.send_signal(signal.SIGTERM))
        try:
            while True:
                try:
                    code = proc.wait(timeout=COPY_EVERY_S)
                    break
                except subprocess.TimeoutExpired:
                    if os.path.exists(local):
                        copy_corpus(local, shared)
        finally:
            signal.signal(signal.SIGTERM, previous)
    if os.path.exists(local):
        copy_corpus(local, shared)
        if unfinished_campaign(local) is None:  # done: the launch directory's copy is the corpus now
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(local + suffix):
                    os.unlink(local + suffix)
    return code


if __name__ == "__main__":  # python -m fuzzaoti.launch.tasks DIR K: one task, as the local executor starts it
    sys.exit(run_task(sys.argv[1], int(sys.argv[2])))
