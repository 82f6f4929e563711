"""What happened to one case, as a value: the stage it reached and the symptom it showed.

Stages, in order: ``eager`` (the reference; a failure here means the *program* is invalid, never
a finding), ``export``, ``compile``, ``load``, ``run``, ``compare``. ``harness`` is a bug in fuzzaoti itself. ``stage == "done"`` with
``symptom == "pass"`` means every runtime shape agreed with eager.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

from fuzzaoti.check.assumption import Assumption


class _Word(str, enum.Enum):
    """A closed set of words that are still plain strings: equal to, hashed, formatted and
    JSON-encoded as their text, so a stored corpus and every comparison with a literal keep
    working, while a typo is a ValueError where the word is made."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def of(cls, text: str) -> _Word:
        try:
            return cls(text)
        except ValueError:
            words = ", ".join(w.value for w in cls)
            raise ValueError(f"unknown outcome {cls.__name__.lower()} {text!r}; one of {words}") from None


class Stage(_Word):
    """How far a case got; a failure names the stage it failed in."""

    HARNESS = "harness"
    EAGER = "eager"
    EXPORT = "export"
    COMPILE = "compile"
    LOAD = "load"
    RUN = "run"
    COMPARE = "compare"
    DONE = "done"


class Symptom(_Word):
    """What the failure looked like (``pass`` and ``invalid`` are not failures)."""

    PASS = "pass"
    INVALID = "invalid"
    EXCEPTION = "exception"
    CRASH = "crash"
    ILLEGAL_MEMORY_ACCESS = "illegal_memory_access"
    TIMEOUT = "timeout"
    OOM = "oom"
    MISMATCH = "mismatch"
    UNCHECKED_INDEX = "unchecked_index"


STAGES = tuple(s.value for s in Stage)
SYMPTOMS = tuple(s.value for s in Symptom)


@dataclass(frozen=True)
class Outcome:
    stage: Stage  # (built from its text too: Outcome("run", "crash"))
    symptom: Symptom
    message: str = ""
    env: dict[str, int] | None = None  # the failing runtime dims, when a run failed
    seed: int | None = None  # the input seed of that run
    verdict: dict[str, Any] | None = None  # the oracle's description of a mismatch
    stderr: str = ""
    runs_checked: int = 0
    runs_skipped: int = 0
    runs_large: int = 0  # runs checked past a crossing (fuzzaoti.model.scale.CROSSINGS)
    runs_over_budget: int = 0  # runs not run: predicted over the byte budget
    runs_oom: int = 0  # runs not run: out of memory (never a finding)
    runs_cut: int = 0  # runs not run: the campaign's deadline came first
    runs_directed: int = 0  # runs at sizes chosen to break what Inductor assumed (fuzzaoti.workers.directed)
    assumptions: tuple[Assumption, ...] = ()  # those assumptions the failing run broke (compile.assumptions)
    slowest_run: dict[str, Any] | None = None  # its slowest big compiled run: env, seed, compiled_s, eager_s
    error_type: str = ""
    frames: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        # a typo'd stage or symptom would be stored, counted and signed as a bug of its own
        object.__setattr__(self, "stage", Stage.of(self.stage))
        object.__setattr__(self, "symptom", Symptom.of(self.symptom))

    @property
    def passed(self) -> bool:
        return self.symptom == "pass"

    @property
    def is_finding(self) -> bool:
        return self.symptom not in ("pass", "invalid")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["frames"], data["assumptions"] = list(self.frames), [a.to_data() for a in self.assumptions]
        data["stage"], data["symptom"] = self.stage.value, self.symptom.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        data = dict(data)
        data["frames"] = tuple(data.get("frames", ()))
        data["assumptions"] = tuple(Assumption.from_data(a) for a in data.get("assumptions", ()))
        return cls(**data)


def symptom_of_exception(error: BaseException, stderr: str = "") -> str:
    """Classify an exception (plus what the process printed) into a symptom."""
    text = f"{type(error).__name__}: {error}\n{stderr}".lower()
    if "illegal memory access" in text or "illegal address" in text or "device-side assert" in text:
        return "illegal_memory_access"
    if "out of memory" in text or isinstance(error, MemoryError):
        return "oom"
    return "exception"


def fails_whole_batch(stage: str, symptom: str) -> bool:
    """Whether a failure of one program fails the whole merged compile it is part of (and so
    its batch): an exception or crash at compile, load or run, or any crash or hang. A wrong
    value is judged per program; an export refusal is pinned member by member."""
    return symptom in ("crash", "timeout") or (stage in ("compile", "load", "run") and symptom != "mismatch")


def fatal_for_process(symptom: str, device: str = "cpu") -> bool:
    """Symptoms after which the worker process must not be reused: a poisoned CUDA context, and
    on a GPU any wrong value too (a kernel that computed offsets in int32 past 2**31 may also
    have written outside its buffers, into memory the next program's tensors use: an H200
    campaign labelled 99.8% of its later programs invalid, each eager run failing on an illegal
    memory access, before this rule)."""
    return symptom in ("illegal_memory_access", "crash", "timeout") or (device != "cpu" and symptom == "mismatch")
