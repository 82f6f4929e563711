"""The worker protocol: what the pool sends a worker process (a ``Job``), what the worker
announces while it works (an ``Announcement`` per step) and what comes back (a ``BatchResult``).

Each crosses a pipe as one JSON object per line (``fuzzaoti.workers.worker``), so each is a
frozen record with one ``to_dict`` and one ``from_dict``: the pool, the worker,
``execute.check_batch`` and the tests all build and read the same types, never a dict by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from fuzzaoti.check.assumption import Assumption
from fuzzaoti.check.outcome import Outcome, Stage, fatal_for_process
from fuzzaoti.model.case import Case
from fuzzaoti.model.program import Program


@dataclass(frozen=True)
class Job:
    """One batch to check: its cases, compiled together as one merged program, with
    ``backend`` on ``device``; ``max_bytes`` is one checked run's budget (None: the worker
    takes half the device's free memory, ``placement.device_budget``).

    ``package`` is the directory the merged program is compiled into (None: a temporary one).
    A package found there is loaded instead of compiled: the pool hands a group whose worker
    died in one member's run back with that directory, so the rest of the group is checked
    without compiling it again. The members at positions ``exclude`` are then part of the
    module (the same merged program, so the same package) but are not checked: they are fed
    their export-time examples, as a member is in another member's big run.

    ``stop_at`` (wall-clock seconds, ``time.time()``) is when a campaign's workers stop, half
    way through the grace after its deadline: past it the worker runs nothing more and answers
    with what it has (``execute.check_batch``)."""

    backend: str
    device: str
    cases: tuple[Case, ...]
    max_bytes: int | None = None
    package: str | None = None
    exclude: tuple[int, ...] = ()
    stop_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "device": self.device, "max_bytes": self.max_bytes,
                "cases": [{"program": c.program.to_json(), "runs": c.run_dicts()} for c in self.cases],
                "package": self.package, "exclude": list(self.exclude), "stop_at": self.stop_at}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        cases = tuple(Case.from_run_dicts(Program.from_json(c["program"]), c["runs"]) for c in data["cases"])
        return cls(data["backend"], data["device"], cases, data.get("max_bytes"), data.get("package"),
                   tuple(data.get("exclude") or ()), data.get("stop_at"))


@dataclass(frozen=True)
class BatchResult:
    """What became of a ``Job``.

    ``batch`` is set when the merged program failed as a whole (export, compile, load, an
    exception at run, the worker's death), which the pool resolves by checking the members on
    their own: the ``suspect`` first when the failure points into one member. Otherwise
    ``cases`` holds one outcome per case, and the ``recheck`` members (a run raised in them
    alone, ``execute._Runner.probe``) are for the pool to check on their own. ``cases`` is None
    when the worker died before it could say. ``seconds``: worker time by stage; ``coverage``:
    the Inductor lines its compile ran that the worker had not reported before (a worker started
    with ``WorkerConfig.coverage``; ``fuzzaoti.coverage.record``), and ``decisions`` the
    decision combinations of its compiles (``fuzzaoti.coverage.decisions``)."""

    batch: Outcome | None = None
    cases: tuple[Outcome, ...] | None = None
    suspect: int | None = None
    faulted: bool = False  # the worker died of a fault in the suspect's kernel code (``faults``)...
    pinned: bool = False  # ...running its own run: the suspect is known to fail
    recheck: tuple[int, ...] = ()
    seconds: dict[str, float] = field(default_factory=dict)
    coverage: dict[str, list[int]] = field(default_factory=dict)
    decisions: dict[str, int] = field(default_factory=dict)  # combination -> kernels (``coverage.decisions``)
    program_decisions: dict[str, list[str]] = field(default_factory=dict)  # program id -> its own combinations

    def outcomes(self) -> list[Outcome]:
        """Every outcome in it, the batch's first."""
        return [o for o in (self.batch, *(self.cases or ())) if o is not None]

    def with_stderr(self, stderr: str) -> BatchResult:
        """The same result with what the worker printed attached to every failure."""
        def attach(o: Outcome | None) -> Outcome | None:
            return replace(o, stderr=stderr) if o is not None and o.symptom not in ("pass", "invalid") else o
        cases = tuple(attach(o) for o in self.cases) if self.cases is not None else None
        return replace(self, batch=attach(self.batch), cases=cases)

    def fatal(self, device: str) -> bool:
        """Whether the worker that gave it must not check another batch (``fatal_for_process``)."""
        return any(fatal_for_process(o.symptom, device) for o in self.outcomes())

    def to_dict(self) -> dict[str, Any]:
        return {"batch": _dict(self.batch),
                "cases": [_dict(o) for o in self.cases] if self.cases is not None else None,
                "suspect": self.suspect, "faulted": self.faulted, "pinned": self.pinned,
                "recheck": list(self.recheck), "seconds": dict(self.seconds),
                "coverage": dict(self.coverage), "decisions": dict(self.decisions),
                "program_decisions": dict(self.program_decisions)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BatchResult:
        cases = data.get("cases")
        return cls(batch=_outcome(data.get("batch")),
                   cases=tuple(_outcome(o) for o in cases) if cases is not None else None,
                   suspect=data.get("suspect"), faulted=bool(data.get("faulted")),
                   pinned=bool(data.get("pinned")), recheck=tuple(data.get("recheck") or ()),
                   seconds=dict(data.get("seconds") or {}), coverage=dict(data.get("coverage") or {}),
                   decisions={str(k): int(v) for k, v in (data.get("decisions") or {}).items()},
                   program_decisions={str(k): [str(c) for c in v]
                                      for k, v in (data.get("program_decisions") or {}).items()})


def _dict(outcome: Outcome | None) -> dict[str, Any] | None:
    return outcome.to_dict() if outcome is not None else None


def _outcome(data: dict[str, Any] | None) -> Outcome | None:
    return Outcome.from_dict(data) if data is not None else None


@dataclass(frozen=True)
class Announcement:
    """What a worker is about to do, sent to its parent before it does it: if the worker dies
    there, its parent knows the stage, and for a run of one member alone (``big-run 3 of member
    5``) whose run killed it. ``step`` is the worker's own word (``export``, ``compile``, ``run``,
    ``big-eager``, ``big-run``, ``big-compare``...), ``run`` the run's index, ``member`` the member
    whose run it is. A run the parent's case does not hold (a directed one, ``workers.directed``)
    comes with ``at``: its sizes, seed and the assumptions of Inductor it breaks
    (``{"env": {"d0": 1073741824}, "seed": 7, "broke": [{"guard": "8*d0 <= 2147483647", ...}]}``)."""

    step: str
    run: int | None = None
    member: int | None = None
    at: dict[str, Any] | None = None

    @property
    def stage(self) -> Stage:
        """The step as an ``Outcome`` stage (a big run's ``big-run`` is ``run``)."""
        return Stage.of(self.step.removeprefix("big-"))

    def spoken(self) -> str:
        """What a progress line shows of it (``big-run 17 of member 5``, ``run 3``, ``compile``)."""
        run = f" {self.run}" if self.run is not None else ""
        return f"{self.step}{run}" + (f" of member {self.member}" if self.member is not None else "")

    def directed_run(self) -> dict[str, Any] | None:
        """The run ``at`` carries as ``Outcome`` fields (``env``, ``seed``, ``assumptions``);
        None where it carries none."""
        if self.at is None:
            return None
        return {"env": dict(self.at["env"]), "seed": int(self.at["seed"]),
                "assumptions": tuple(Assumption.from_data(a) for a in self.at.get("broke", ()))}

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "run": self.run, "member": self.member, "at": self.at}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Announcement:
        return cls(data["step"], data.get("run"), data.get("member"), data.get("at"))
