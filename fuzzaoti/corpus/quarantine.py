"""Quarantine: drawn programs that would trip a bug already found are checked alone, or not at all.

A bug that fails a whole compile (an Inductor exception, a C++ compile error, a crash) fails
every batch holding one program that triggers it, and such a batch must be bisected, up to
2·log2(n) compiles, only to pin a bug the corpus already has. On the H200 (torch 2.11, a
5-minute campaign) 40 of 60 compiles went to bisecting batches failed by two such bugs.

So each such bug gives a *trigger*: a set of program features (ops, ``derived-dim``, truthy
compile configs) taken from its minimal program, or listed by a known-bug entry. A drawn
program that has every feature of some trigger is quarantined: a fraction ``rate`` of those
is still checked, each alone (one compile, no bisection; a fix upstream still shows up), and
the rest are set aside, counted, and replaced in the batch by clean programs. The choice is a
hash of the program, so a campaign's ``--seed`` still decides everything.

Findings that do not fail a batch (wrong values, export refusals, which are pinned member by
member for the price of an export) never quarantine anything. A known-bug entry may still list
triggers for a wrong value on a GPU, where each one costs a worker (``fatal_for_process``) and
often comes with an illegal memory access that fails the batch: in an H200 large-profile bench,
9 of 12 failures were in unbounded-dim programs, as the unbounded-dim int32 bug fails, and
bisecting took 46% of its worker time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, NamedTuple, Sequence

from fuzzaoti.model import sizes
from fuzzaoti.check.outcome import fails_whole_batch, fatal_for_process
from fuzzaoti.corpus.finding import Finding
from fuzzaoti.corpus.known_bugs import expected_result
from fuzzaoti.corpus.known_entry import KnownEntry
from fuzzaoti.model.program import Program

# One program checked alone costs a whole compile (~8 s on the H200), some 7 batched programs'
# worth (1.1 worker-seconds each); at 0.2, with a fifth of drawn programs matching a trigger,
# those lone compiles took, by an estimate from an H200 bench's counts (66 set aside, so ~16
# alone, of ~490 worker-seconds), about a quarter of its worker time. At 0.05 a campaign of
# ~3500 programs an hour still checks ~45 of them alone: a fix upstream shows within minutes.
DEFAULT_RATE = 0.05


def features(program: Program, dtypes: bool = False) -> frozenset[str]:
    """What a trigger can ask of a program: its ops, with ``dtypes`` ``dtype:D`` for each dtype of
    its inputs and state (a known entry's trigger may name one; a finding's trigger is its shrunk
    program's features without them, as before), ``derived-dim`` when an input axis is sized
    by an expression of a dim (``d+1``, ``2*d``), ``unbounded-dim`` when a dim has no finite
    max in export (``Dim.AUTO``, ``Dim.DYNAMIC``, a ``Dim`` without max), ``int64-literal`` when
    an op's integer argument does not fit in int32, ``module-state`` when the module holds
    parameters or buffers, ``writes-state`` when it writes into a buffer, ``rejected-index``
    when it feeds an index eager rejects (``Program.rejects_indices``), ``written:LAYOUT`` for
    each layout but contiguous of an input it writes into, and ``config:KEY`` for each truthy
    config."""
    found = set(program.ops) | ({f"dtype:{t.dtype}" for t in program.leaves} if dtypes else set())
    if program.state:
        found.add("module-state")
    if any(d.unbounded for d in program.dims):
        found.add("unbounded-dim")
    if any(isinstance(v, int) and not isinstance(v, bool) and not -2**31 <= v < 2**31
           for node in program.nodes for _, v in node.attrs):
        found.add("int64-literal")
    for i in program.inputs:
        for size in i.shape:
            affine = sizes.parse(size)
            if affine.coefs and (affine.const != 0 or [c for _, c in affine.coefs] != [1]):
                found.add("derived-dim")
    if program.rejects_indices:
        found.add("rejected-index")
    if program.mutated_state():
        found.add("writes-state")
    found.update(f"written:{program.inputs[k].layout}" for k in program.mutated_inputs()
                 if program.inputs[k].layout != "contiguous")
    found.update(f"config:{key}" for key, value in program.configs if value)
    return frozenset(found)


@dataclass(frozen=True)
class Trigger:
    features: frozenset[str]
    source: str  # which bug: "finding 3" or a known-bug file

    def __str__(self) -> str:
        return f"{{{', '.join(sorted(self.features))}}} ({self.source})"


def finding_trigger(row: Finding, device: str) -> Trigger | None:
    """The trigger of a stored finding: its shrunk program's features (else its program's),
    for a finding on ``device`` that fails whole batches and is not a canary's. Not
    ``unbounded-dim``: a shrunk program may keep a dim of no max the bug does not need (many
    drawn programs have one), and the trigger would then miss the bug's bounded programs; a
    known entry names it where the bug needs it."""
    if row.device != device or row.canary or not fails_whole_batch(row.stage, row.symptom):
        return None
    return Trigger(features(row.case.program) - {"unbounded-dim"}, f"finding {row.id}")


def known_triggers(entries: Iterable[KnownEntry], device: str, torch_version: str,
                   profile: str = "small") -> list[Trigger]:
    """Triggers of built-in known bugs (``corpus/known/*.json``): the feature sets an entry
    lists under ``quarantine``, on the devices and in the profiles it lists there (all when it
    lists none), for a torch older than the ``fixed_in`` release it names (any when it names
    none), for a bug that fails whole batches or, there, the worker. An entry says so
    explicitly: its program's ops may need sizes no small program has (a batch past 65535) to
    fail, and then quarantining them would only cost coverage; and on a torch with the fix the
    same programs are coverage, not a bug to step around."""
    return [Trigger(features, f"{entry.name}.json") for entry in entries
            if entry.quarantine is not None and entry.quarantine.applies(device, profile)
            and (fails_whole_batch(entry.stage, entry.symptom) or fatal_for_process(entry.symptom, device))
            and expected_result(entry, torch_version) != "pass"
            for features in entry.quarantine.features]


class Sorted(NamedTuple):
    chosen: list[int]  # indices of the programs to check, in order
    alone: list[int]  # positions in ``chosen`` of those to check each on its own
    set_aside: int  # quarantined programs passed over


class Quarantine:
    def __init__(self, triggers: Sequence[Trigger] = (), rate: float = DEFAULT_RATE):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"quarantine rate {rate} must be between 0 and 1")
        self.triggers = list(dict.fromkeys(triggers))
        self.rate = rate

    def add(self, trigger: Trigger | None) -> bool:
        """Start quarantining ``trigger``'s programs; False if it adds nothing new."""
        if trigger is None or any(t.features <= trigger.features for t in self.triggers):
            return False
        self.triggers.append(trigger)
        return True

    def trigger_of(self, program: Program) -> Trigger | None:
        have = features(program, dtypes=True)
        return next((t for t in self.triggers if t.features <= have), None)

    def keeps(self, program: Program) -> bool:
        """Whether a quarantined program is one of the ``rate`` still checked (by its content hash)."""
        return int(program.id[:8], 16) < self.rate * 2**32

    def sort(self, programs: Sequence[Program], size: int) -> Sorted:
        """The first ``size`` programs to check, those of them to check alone, and how many
        quarantined programs were set aside on the way."""
        chosen, alone, set_aside = [], [], 0
        for index, program in enumerate(programs):
            if len(chosen) == size:
                break
            if self.trigger_of(program) is None:
                chosen.append(index)
            elif self.keeps(program):
                alone.append(len(chosen))
                chosen.append(index)
            else:
                set_aside += 1
        return Sorted(chosen, alone, set_aside)
