"""The isolation boundary: compiling and running happen in spawned worker processes.

A worker announces each stage to its parent before entering it, so when it dies (a segfault
in a generated kernel, an abort, an illegal memory access, the OOM killer) or stops answering,
the parent knows where, and turns the event into an ``Outcome`` with the stderr the worker
wrote. Such a worker is killed and replaced before the next batch: a poisoned CUDA context
never checks another program. Workers are spawned, never forked, so no CUDA state is shared.

This module must not import torch at module level: the parent may never need it.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass
from typing import Any

from fuzzaoti.check.outcome import Outcome
from fuzzaoti.errors import WorkerDied
from fuzzaoti.workers import faults
from fuzzaoti.workers.protocol import Announcement, BatchResult, Job

COMPILE_STAGES = ("export", "compile", "load", "eager")


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs to start: device, backend, canary, timeouts and extra environment."""

    device: str = "cpu"
    backend: str = "aoti"
    canary: str | None = None
    compile_timeout: float = 900.0
    run_timeout: float = 300.0
    env: tuple[tuple[str, str], ...] = ()
    max_bytes: int | None = None  # one checked run's bytes; None: the device's (placement.device_budget)
    coverage: bool = False  # report the Inductor lines each compile ran (fuzzaoti.coverage.record)


def _serve(config: WorkerConfig, stderr_path: str) -> None:
    """Worker main loop: apply the environment and canary, then check batches until stdin closes.

    The protocol is one JSON object per line on the original stdout; fds 1 and 2 are pointed
    at ``stderr_path`` so that whatever torch, g++ or CUDA prints cannot corrupt it.
    """
    out = os.fdopen(os.dup(1), "w", buffering=1)
    fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(fd, 1)
    os.dup2(fd, 2)

    def send(kind: str, payload: Any) -> None:
        out.write(json.dumps([kind, payload]) + "\n")

    os.environ.update(dict(config.env))
    from fuzzaoti import compat
    from fuzzaoti.compile import canaries
    from fuzzaoti.coverage import record
    from fuzzaoti.workers.execute import check_batch
    from fuzzaoti.workers.protocol import Job

    compat.set_default_cxx()
    if config.device == "cpu":  # (a GPU's faults surface at a later call, not where they were)
        faults.enable(notes_path(stderr_path))
    try:
        canaries.install(config.canary)
    except Exception as exc:  # noqa: BLE001 - report, then exit: the parent shows it
        send("error", f"canary {config.canary!r}: {exc}")
        return
    record.enable(config.coverage)
    send("ready", os.getpid())
    for line in sys.stdin:
        try:
            result = check_batch(Job.from_dict(json.loads(line)),
                                 lambda announced: send("stage", announced.to_dict())).to_dict()
        except Exception:  # noqa: BLE001 - a fuzzaoti bug: report it rather than die silently
            result = {"internal_error": traceback.format_exc()}
        if config.coverage:
            result["coverage"] = record.take()
            result["decisions"], result["program_decisions"] = record.take_decisions()
        send("result", result)


class Worker:
    """One worker process and the parent's side of its pipe."""

    def __init__(self, config: WorkerConfig, standbys=None):
        self.config = config
        self.standbys = standbys  # a pool's ``standby.Standbys``: replacements started and warmed ahead
        self.process = None
        self.closed = False  # closed for good: no process is started again
        self.restarts = -1  # the first start is not a restart
        self.stage: Announcement | None = None  # what it is doing now (None: idle), for progress lines...
        self.stage_since = 0.0  # ...and since when (monotonic)
        # named by this process: a pool started after a SIGKILL removes the files of dead ones
        fd, self.stderr_path = tempfile.mkstemp(prefix=f"fuzzaoti-worker-{os.getpid()}-", suffix=".stderr")
        os.close(fd)

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the process: a warm standby's when the pool keeps one, else a new one."""
        spare = self.standbys.take(self.config) if self.standbys is not None else None
        if spare is not None:
            self._adopt(spare)
            self.standbys.refill(self.config)  # the next spare warms while this one works
            return
        self.launch()
        self.wait_ready()

    def _adopt(self, spare: Worker) -> None:
        """Take over ``spare``'s started process (and its stderr file)."""
        self.kill()
        _remove_files(self.stderr_path)
        self.process, self._buffer, self.stderr_path = spare.process, spare._buffer, spare.stderr_path
        spare.process, spare.closed = None, True
        self.restarts += 1

    def launch(self) -> None:
        """Spawn the process without waiting for it: a pool starts all its workers at once."""
        if self.closed:
            raise WorkerDied("the worker is closed")
        config = json.dumps(asdict(self.config))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fuzzaoti.workers.worker", config, self.stderr_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=tempfile.gettempdir(),  # import the installed fuzzaoti, never a checkout in the cwd
            start_new_session=True,  # a Ctrl-C meant for the campaign does not kill a compile midway
        )
        self._buffer = b""
        self.restarts += 1

    def wait_ready(self) -> None:
        """Wait for a launched worker's "ready" (it has imported torch and installed its canary)."""
        kind, payload = self._receive(self.config.compile_timeout)
        if kind != "ready":
            self.kill()
            raise WorkerDied(payload if kind == "error" else f"worker failed to start: {payload}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                stream.close()
        self.process = None

    def close(self) -> None:
        self.closed = True
        if self.alive():
            try:
                self.process.stdin.close()
                self.process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        _remove_files(self.stderr_path)

    # ---- one batch -------------------------------------------------------------------------
    def check(self, job: Job) -> BatchResult:
        """Send one batch; return the worker's result, or a batch outcome if it died or hung."""
        if not self.alive():
            self.start()
        offset, started = os.path.getsize(self.stderr_path), time.monotonic()
        self.process.stdin.write((json.dumps(job.to_dict()) + "\n").encode())
        self.process.stdin.flush()
        self.stage, self.stage_since = Announcement("eager"), time.monotonic()
        try:
            return self._await_result(job, offset, started)
        finally:
            self.stage = None
            if self.standbys is not None:  # from the first batch on, a warm replacement waits
                self.standbys.refill(self.config)

    def _await_result(self, job: Job, offset: int, started: float) -> BatchResult:
        announced = Announcement("eager")
        while True:
            timeout = (self.config.compile_timeout if announced.step in COMPILE_STAGES
                       else self.config.run_timeout)
            kind, payload = self._receive(timeout)
            if kind == "stage":
                announced = Announcement.from_dict(payload)
                self.stage, self.stage_since = announced, time.monotonic()
                continue
            if kind == "result":
                return self._with_stderr(payload, offset)
            symptom = "timeout" if kind == "timeout" else "crash"
            message = (f"no answer within {timeout:.0f} s" if kind == "timeout" else payload)
            self.kill()
            return self._death(job, announced, symptom, message, offset, started)

    def _death(self, job: Job, announced: Announcement, symptom: str, message: str, offset: int,
               started: float) -> BatchResult:
        """The batch outcome of a worker that died (or hung) while in stage ``announced``. A
        death in one member's big run names that member and the run. A fault in a CPU kernel's
        loop nest of one member's nodes names that member (``faults``), and pins it where the
        call fed it its own run: the pool stores that as found at once, and confirms it alone."""
        stage, run, member = announced.stage, announced.run, announced.member
        stderr = self._stderr_since(offset)
        site = faults.site_of_death(stderr, notes_path(self.stderr_path)) if symptom == "crash" else None
        faulted = site.member if site is not None and stage in ("run", "compare") else None
        if faulted is not None and (faulted >= len(job.cases) or member not in (None, faulted)):
            faulted = None
        pinned = faulted is not None and site.pinned
        if site is not None:
            message += "\n" + site.describe(merged=len(job.cases) > 1)
        if pinned:
            member, run = faulted, site.run
        where = {}
        if member is not None and 0 <= member < len(job.cases) and run is not None and 0 <= run < len(job.cases[member].runs):
            env, seed = job.cases[member].runs[run]  # the run it died in
            where = {"env": dict(env), "seed": seed}
        elif member is not None and (directed := announced.directed_run()) is not None:
            where = directed  # (a directed run: its parent's case does not hold it)
        outcome = Outcome(stage=stage, symptom=symptom, message=message, stderr=stderr, runs_checked=0, **where)
        return BatchResult(batch=outcome, suspect=member if faulted is None else faulted, faulted=faulted is not None,
                           pinned=pinned, seconds={symptom: time.monotonic() - started})

    def _receive(self, timeout: float) -> tuple[str, Any]:
        """The next message, ``("timeout", None)``, or ``("died", how)`` if the pipe closed."""
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return "timeout", None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return "died", _describe_exit(self.process.wait())
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        kind, payload = json.loads(line)
        return kind, payload

    def _stderr_since(self, offset: int, limit: int = 8000) -> str:
        with open(self.stderr_path, "rb") as f:
            f.seek(offset)
            data = f.read()
        return data[-limit:].decode("utf-8", "replace")

    def _with_stderr(self, payload: dict[str, Any], offset: int) -> BatchResult:
        """The worker's answer, with what it printed attached to every failure; a poisoned
        worker is retired."""
        if "internal_error" in payload:  # a fuzzaoti bug: kept as a finding so it is seen and fixed
            trace = payload["internal_error"]
            return BatchResult(batch=Outcome("harness", "exception", trace.strip().splitlines()[-1], stderr=trace))
        result = BatchResult.from_dict(payload).with_stderr(self._stderr_since(offset))
        if result.fatal(self.config.device):
            self.kill()
        return result


def notes_path(stderr_path: str) -> str:
    """The worker's ``faults`` notes file, beside its stderr file (and named by the same pid)."""
    return stderr_path.removesuffix(".stderr") + ".notes"


def _remove_files(stderr_path: str) -> None:
    for path in (stderr_path, notes_path(stderr_path)):
        try:
            os.unlink(path)
        except OSError:
            pass


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "worker vanished"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        hint = " (killed: out of memory?)" if -code == signal.SIGKILL else ""
        return f"worker died with signal {name}{hint}"
    return f"worker exited with code {code}"


if __name__ == "__main__":
    _config = json.loads(sys.argv[1])
    _config["env"] = tuple(tuple(kv) for kv in _config["env"])
    _serve(WorkerConfig(**_config), sys.argv[2])
