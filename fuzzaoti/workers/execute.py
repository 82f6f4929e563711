"""Inside a worker: check a batch of cases, stage by stage, and describe what happened as data.

A case is a program plus the runtime runs to check it at (a dim assignment and an input seed
each). Every member is first run in eager at every run but its big ones (those come at their
turn, after the compile): a member that fails there, or whose eager output is not finite, is
*invalid* (a generator bug, never a finding) and is dropped. The valid members are merged and
compiled once; then each run feeds every member its inputs (a member whose sizes fall outside
the ranges export decided gets its export-time example instead, and that run is skipped for
it) and each member's outputs are judged by the oracle.
"""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
import time
from dataclasses import dataclass, replace

from fuzzaoti.compile import merge as batch
from fuzzaoti.compile import render
from fuzzaoti.compile.backends import StageFailure, get_backend
from fuzzaoti.model.case import Case
from fuzzaoti.compile.assumptions import broken
from fuzzaoti.coverage import record
from fuzzaoti.workers import blame, directed, faults
from fuzzaoti.workers.placement import device_budget, release_memory
from fuzzaoti.workers.clock import Progress, StageClock
from fuzzaoti.workers.protocol import Announcement, BatchResult, Job
from fuzzaoti.model.concrete import input_specs
from fuzzaoti.model.inputs import make_inputs
from fuzzaoti.check.oracle import called, compare_outputs, fresh, poison_like, reference_outputs, written
from fuzzaoti.check.outcome import Outcome, symptom_of_exception
from fuzzaoti.model.scale import checked_bytes, fits, is_large, reference_dtype

#: a run's eager outputs and reference are made in the eager pass up to this size; a bigger
#: run's are made after the compile, at its turn, one member at a time (eight 2**31-element
#: runs of each of 64 members would not fit any GPU at once). ``FUZZAOTI_KEEP_BYTES`` sets it for the
#: workers a test starts, to drive big runs with small tensors.
KEEP_BYTES = int(os.environ.get("FUZZAOTI_KEEP_BYTES", 256 << 20))
LATER = "later"  # ``_Member.expected`` entry of a run whose expectation is made at its turn


@dataclass(frozen=True)
class Refused:
    """``_Member.expected`` entry of a run eager refused, in a program that feeds an index eager
    rejects on purpose (``Values`` kind ``oob``): the compiled model must raise too. Its inputs,
    and what eager said."""

    inputs: list
    message: str


class _Member:
    """One case's state while a batch is checked."""

    def __init__(self, case: Case, max_bytes: int | None = None, index: int = 0):
        self.index = index  # its position in the job (``faults`` notes members so)
        self.program = case.program
        self.runs = [(dict(env), seed) for env, seed in case.runs]
        self.max_bytes = max_bytes
        # per run: (inputs, eager, reference), LATER, Refused, or None (not run: over budget or out of memory)
        self.expected: list[tuple[list, list, list] | str | Refused | None] = []
        self.outcome: Outcome | None = None
        self.checked = self.skipped = self.large = self.over_budget = self.oom = 0
        self.suspect = False  # the batch failed in this member's code
        self.recheck = False  # a run failed in this member alone: the pool checks it on its own
        self.cut = 0  # runs left unrun when the job's ``stop_at`` came
        self.assumed: tuple = ()  # what Inductor assumed of its sizes, unchecked (``directed.add_runs``)
        self.directed = 0  # runs added after the compile to break those assumptions
        self.failed_run: int | None = None  # the big run that raised (a lone member's batch failure names it)
        self.eager_s = 0.0  # its last big run's eager run, in seconds (for ``slowest``)
        self.slowest: dict | None = None  # its slowest big compiled run: env, seed, compiled_s, eager_s
        self._model = None
        # a program that writes into its buffers: their values carry from call to call, so its
        # expectation comes from an eager twin called exactly as the package is (``shadow_step``)
        self.stateful = bool(case.program.mutated_state())
        self.desynced = False  # a package call raised: its buffers and the twin's may differ now
        self._twin = self._twin_wide = None

    def model(self, device: str):
        """The program's eager module on ``device``, built once (its source is exec'd) for all
        its runs, with the state the compiled one runs with (``Program.swaps_state``)."""
        if self._model is None:
            self._model = render.instantiate(render.load_program(self.program), device, self.program.swaps_state)
        return self._model

    def expect(self, r: int, device: str) -> tuple[list, list, list]:
        """Inputs, eager outputs and the reference (eager itself when no output is a float) of run ``r``."""
        import torch

        env, seed = self.runs[r]
        inputs = make_inputs(input_specs(self.program, env), seed, device)
        mutated = self.program.mutated_inputs()
        with torch.no_grad():
            began = time.monotonic()
            eager = called(self.model(device), fresh(inputs, mutated), mutated)
            if r < len(self.expected) and self.expected[r] == LATER:  # a big run: timed for ``slowest``
                if device == "cuda":  # (a kept run is not: no synchronize in the eager pass)
                    torch.cuda.synchronize()
                self.eager_s = time.monotonic() - began
            ref_dtype = reference_dtype(self.program, env, self.max_bytes)  # (after eager: it has run)
            reference = eager if ref_dtype is None else reference_outputs(self.model(device), inputs,
                                                                          getattr(torch, ref_dtype), mutated)
        return inputs, eager, reference

    def shadow_step(self, inputs: list, device: str) -> tuple[list, list]:
        """A stateful member's expectation for one package call with ``inputs``: its eager twin
        (and the twin's float64 copy, the reference) called once, as the package was. Every call
        of the package steps the twins, the member's own runs and the calls that feed it its
        examples alike, so both hold the same buffers at every call; outputs are copied at once
        (one that is a buffer changes at the next call)."""
        import torch

        if self._twin is None:
            self._twin = render.instantiate(render.load_program(self.program), device)
            self._twin_wide = copy.deepcopy(self._twin).to(torch.float64)
        mutated = self.program.mutated_inputs()
        with torch.no_grad():
            eager = [t.clone() for t in called(self._twin, fresh(inputs, mutated), mutated)]
            reference = [t.clone() for t in reference_outputs(self._twin_wide, inputs, torch.float64, mutated,
                                                              widened=True)]
        return eager, reference

    def at(self, r: int) -> dict | None:  # run r if directed (its parent does not know it), for its Announcement
        (env, seed), directed = self.runs[r], r >= len(self.runs) - self.directed
        return {"env": env, "seed": seed, "broke": [a.to_data() for a in broken(self.assumed, env)]} if directed else None

    def timed(self, r: int, compiled_s: float) -> None:
        """Keep big run ``r`` as ``slowest`` if its compiled run, ``compiled_s``, is the slowest yet."""
        if self.slowest is None or compiled_s > self.slowest["compiled_s"]:
            env, seed = self.runs[r]
            self.slowest = {"env": env, "seed": seed, "compiled_s": round(compiled_s, 3),
                            "eager_s": round(self.eager_s, 3)}

    def run_eager(self, device: str) -> None:
        """Run every kept run in eager first: a program that fails there, or whose output is not
        finite, is invalid and never compiled. A run over the byte budget, or that runs out of
        memory, is not run at all (counted). A big run (past ``KEEP_BYTES``) is only marked
        ``LATER``: its eager run, judged the same way, comes at its turn after the compile
        (``_Runner.big``), once: making it here too, only to drop it, was a third of a CPU
        campaign's worker time."""
        for r, (env, seed) in enumerate(self.runs):
            try:
                over = self.max_bytes is not None and not fits(self.program, env, self.max_bytes)
                later = not over and checked_bytes(self.program, env, self.max_bytes) > KEEP_BYTES
            except (IndexError, KeyError, ValueError, ZeroDivisionError):
                # the byte model cannot size a program whose ops do not fit their arguments (a
                # shrink candidate that bypassed an unsqueeze feeds a transpose one axis short):
                # eager refuses it too, and says why; a program eager runs is a fuzzaoti bug
                refused = self.expect_valid(r, device)
                if self.outcome is None and isinstance(refused, Refused):  # (a rejected index as well)
                    self.outcome = Outcome("eager", "invalid", f"eager failed: {refused.message}", env=env, seed=seed)
                if self.outcome is None:
                    raise
                return
            if over:
                self.over_budget += 1
                self.expected.append(None)
                continue
            if later:
                self.expected.append(LATER)
                continue
            expected = self.expect_valid(r, device)
            if self.outcome is not None:
                return
            self.expected.append(expected)

    def expect_valid(self, r: int, device: str) -> tuple[list, list, list] | Refused | None:
        """``expect(r)``, or None where eager failed: out of memory is counted, an illegal memory
        access re-raised (a poisoned CUDA context, not an invalid program: ``check_batch``), an
        exception in a program that feeds a rejected index on purpose is ``Refused`` (the
        compiled model must raise too), and any other error, or an output that is not finite,
        makes the program invalid."""
        import torch

        env, seed = self.runs[r]
        try:
            inputs, eager, reference = self.expect(r, device)
        except Exception as exc:  # noqa: BLE001
            if symptom_of_exception(exc) == "illegal_memory_access":
                raise
            if symptom_of_exception(exc) == "oom":
                self.oom += 1
                release_memory(device)
                return None
            message = f"eager failed: {type(exc).__name__}: {exc}"[:2000]
            if self.program.rejects_indices:
                return Refused(make_inputs(input_specs(self.program, env), seed, device),
                               f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300])
            self.outcome = Outcome("eager", "invalid", message, env=env, seed=seed)
            return None
        if any(t.dtype.is_floating_point and not bool(torch.isfinite(t).all()) for t in eager):
            self.outcome = Outcome("eager", "invalid", "eager output is not finite", env=env, seed=seed)
            return None
        return inputs, eager, reference

    def example_inputs(self, device: str) -> list:
        return make_inputs(input_specs(self.program, self.program.hint_env(), example=True), 0, device)


def check_batch(job: Job, progress: Progress) -> BatchResult:
    """Check ``job.cases`` with ``job.backend`` on ``job.device`` (``protocol.BatchResult`` says
    what comes back: a failure of the merged program as a whole with its ``suspect``, or an
    outcome per case with the members to ``recheck`` alone). The members ``job.exclude``
    names are compiled (or their package loaded) but never run in eager nor judged."""
    device, backend = job.device, get_backend(job.backend)
    clock = StageClock(progress)
    max_bytes = job.max_bytes or device_budget(device)
    members = [_Member(c, max_bytes, k) for k, c in enumerate(job.cases)]
    faults.note_job()
    judged = [m for k, m in enumerate(members) if k not in job.exclude]
    clock("eager")
    try:
        for m in judged:
            m.run_eager(device)
        valid = [m for m in members if m.outcome is None]
        batch_outcome = (_check_compiled(valid, backend, device, clock, job.package, job.stop_at)
                         if any(m.outcome is None for m in judged) else None)
    except Exception as exc:  # noqa: BLE001
        if symptom_of_exception(exc) != "illegal_memory_access":
            raise
        # a CUDA error outside the guarded run (eager after a compiled run, the oracle reading a
        # compiled output) poisons this process: every later check in it would fail too. The
        # batch fails as a whole, fatally, so the pool goes on in a fresh worker
        batch_outcome = blame.failure(clock.outcome_stage, exc)
    suspect = next((k for k, m in enumerate(members) if m.suspect), None) if batch_outcome is not None else None
    if batch_outcome is not None and len(members) == 1:  # a lone member's failing run, known exactly
        batch_outcome = blame.on_run(batch_outcome, members[0])
    recheck = tuple(k for k, m in enumerate(members) if m.recheck) if batch_outcome is None else ()
    cases = tuple(None if k in job.exclude else _final(m) for k, m in enumerate(members))
    return BatchResult(batch=batch_outcome, cases=cases, suspect=suspect, recheck=recheck, seconds=clock.totals())


def _final(m: _Member) -> Outcome | None:
    """The member's outcome; None when the job's ``stop_at`` came before any of its runs (unchecked)."""
    counts = {"runs_large": m.large, "runs_over_budget": m.over_budget, "runs_oom": m.oom, "slowest_run": m.slowest,
              "runs_cut": m.cut, "runs_directed": m.directed}
    if m.outcome is not None:
        return replace(m.outcome, assumptions=broken(m.assumed, m.outcome.env), **counts)
    if m.cut and not m.checked:
        return None
    return Outcome("done", "pass", runs_checked=m.checked, runs_skipped=m.skipped, **counts)


@contextlib.contextmanager
def _workdir(package: str | None):
    """Where the merged program is compiled: the job's package directory (the pool owns it and
    may hand it to another worker), else a temporary one."""
    if package is None:
        with tempfile.TemporaryDirectory(prefix="fuzzaoti-") as workdir:
            yield workdir
    else:
        os.makedirs(package, exist_ok=True)
        yield package


def _past(stop_at: float | None) -> bool:
    return stop_at is not None and time.time() >= stop_at


def _stop(members: list[_Member], r: int, k: int | None = None) -> None:
    """``stop_at`` came before run ``r`` (before member ``k``'s big run ``r``, when given, the
    runs of ``r`` that go together being done): each member counts the runs it has left."""
    for j, m in enumerate(members):
        if m.outcome is not None:
            continue
        m.cut = sum(expected is not None for expected in m.expected[r if k is None else r + 1:])
        if k is not None and j >= k and r < len(m.expected) and m.expected[r] == LATER:
            m.cut += 1  # its big run r, not reached


def _check_compiled(members: list[_Member], backend, device: str, progress: StageClock,
                    package: str | None = None, stop_at: float | None = None) -> Outcome | None:
    """Compile the valid members as one program and check them at each run; past ``stop_at``
    (``Job.stop_at``), nothing more is compiled or run: the runs done so far count."""
    if _past(stop_at):
        _stop(members, 0)
        return None
    with _workdir(package) as workdir:
        while True:
            programs = [m.program for m in members]
            merged = batch.merge(programs)
            example = sum((m.example_inputs(device) for m in members), [])
            try:
                prepared = backend.prepare(merged, render.load_program(merged), example, device, workdir, progress)
                break
            except StageFailure as failure:
                outcome = blame.failure(failure.stage, failure.error)
                if len(members) == 1:
                    return blame.export_wrong(outcome, members[0].program, "") or outcome  # merge() leaves one program as is
                dropped = blame.drop_failing_members(outcome, failure, merged, members, backend, device)
                if not dropped:
                    return outcome
                members = [m for k, m in enumerate(members) if k not in dropped]
                if not members:
                    return None
        faults.note_kernels(prepared.kernels, [m.index for m in members])
        record.note_programs({members[k].program.id: found for k, found in prepared.decisions.items()
                              if k < len(members)})
        directed.add_runs(members, prepared.assumptions, members[0].max_bytes, LATER)
        examples = batch.split(example, programs, lambda p: len(p.inputs))
        offsets = [sum(len(p.inputs) for p in programs[:k]) for k in range(len(programs))]
        run = _Runner(prepared, members, examples, offsets, device, progress)
        for r in range(max(len(m.runs) for m in members)):
            kept = {k: m.expected[r] for k, m in enumerate(members)
                    if m.outcome is None and r < len(m.expected) and isinstance(m.expected[r], tuple)}
            if _past(stop_at):
                _stop(members, r)
                return None
            failure = run(r, kept)
            if failure is not None:
                return failure
            for k, m in enumerate(members):  # the runs eager refused: one member at a time
                if m.outcome is None and r < len(m.expected) and isinstance(m.expected[r], Refused):
                    run.refused(r, k, m.expected[r])
            for k, m in enumerate(members):  # the big runs: one member at a time, made now
                if m.outcome is None and r < len(m.expected) and m.expected[r] == LATER:
                    if _past(stop_at):
                        _stop(members, r, k)
                        return None
                    failure = run.big(r, k)
                    if failure is not None:
                        return failure
    return None


class _Runner:
    """Runs the compiled batch once per group of members and judges their outputs."""

    def __init__(self, prepared, members: list[_Member], examples: list[list], offsets: list[int], device: str,
                 progress: StageClock):
        self.prepared, self.members, self.examples, self.offsets = prepared, members, examples, offsets
        self.device, self.progress = device, progress
        self.programs = [m.program for m in members]
        self.run_s: float | None = None  # the last call's compiled run, in seconds (None: not run)
        self.twins: dict[int, tuple[list, list]] = {}  # the last call's stateful expectations, by member

    def big(self, r: int, k: int) -> Outcome | None:
        """Run ``r`` of member ``k`` alone (the others get their export-time examples), its
        expectation made now and judged as the eager pass judges a kept run's (an eager failure
        makes the program invalid): a run that runs out of memory is counted, never a finding."""
        member = self.members[k]
        self.progress(Announcement("big-eager", r, k, member.at(r)))
        try:
            expected = member.expect_valid(r, self.device)  # (None: out of memory, or invalid)
        except Exception:
            member.suspect = True  # an illegal memory access surfacing in its eager run
            raise
        if expected is None:
            return None
        if isinstance(expected, Refused):
            self.refused(r, k, expected)
            return None
        try:
            poison_like(expected[1])  # its outputs' blocks hold no stale eager output
            failure = self(r, {k: expected}, big=True)
            if self.run_s is not None:
                member.timed(r, self.run_s)
            release_memory(self.device)  # (where an asynchronous illegal memory access may surface)
        except Exception as exc:  # noqa: BLE001
            if symptom_of_exception(exc) != "oom":
                member.suspect, member.failed_run = True, r  # (an illegal memory access reading its outputs, say)
                raise
            member.oom += 1
            failure = None
            release_memory(self.device)
        return failure

    def refused(self, r: int, k: int, expected: Refused) -> None:
        """Run ``r`` of member ``k`` alone, where eager raised on the index it feeds out of
        range: the compiled model raising too passes; returning outputs is the member's finding
        (``unchecked_index``: values read from outside a tensor, or an index wrapped that eager
        rejects). A worker death here names the member (``protocol.Announcement``)."""
        member, inputs = self.members[k], expected.inputs
        if not self.prepared.accepts([tuple(t.shape) for t in inputs], self.offsets[k],
                                     [tuple(t.stride()) for t in inputs]):
            member.skipped += 1
            return
        self.progress(Announcement("run", r, k, member.at(r)))
        try:
            self._run({k: (inputs, None, None)}, r)
        except Exception as exc:  # noqa: BLE001
            if symptom_of_exception(exc) != "exception":
                member.suspect, member.failed_run = True, r
                raise
            member.checked += 1
            return
        env, seed = member.runs[r]
        member.outcome = Outcome("compare", "unchecked_index", f"eager raised {expected.message}; the compiled "
                                 "model returned its outputs", env=env, seed=seed, runs_checked=member.checked)

    def __call__(self, r: int, chosen: dict[int, tuple], big: bool = False) -> Outcome | None:
        self.run_s, judged = None, {}
        for k, m in enumerate(self.members):
            inputs = chosen[k][0] if k in chosen else None
            if inputs is not None and not self.prepared.accepts([tuple(t.shape) for t in inputs], self.offsets[k],
                                                                [tuple(t.stride()) for t in inputs]):
                m.skipped += 1
            elif inputs is not None:
                judged[k] = chosen[k]
        if not judged:
            return None

        def announce(stage: str) -> None:  # a big run names its member: a death there blames it
            k = next(iter(judged))
            self.progress(Announcement(f"big-{stage}", r, k, self.members[k].at(r)) if big else Announcement(stage, r))

        announce("run")
        try:
            began = time.monotonic()
            outputs = self._run(judged, r)
            self.run_s = time.monotonic() - began
        except Exception as exc:  # noqa: BLE001
            if big and symptom_of_exception(exc) == "oom":
                raise
            failing = self.probe(r, judged) if len(judged) > 1 and symptom_of_exception(exc) == "exception" else set()
            if failing and len(failing) < len(judged):  # pinned: the rest go on without them
                return self(r, {k: v for k, v in judged.items() if k not in failing})
            where = {}
            if len(judged) == 1:  # the others ran their export-time examples (a big run): the pool
                # checks this one alone first, two compiles rather than a bisection's 2*log2(n)
                self.members[next(iter(judged))].suspect = True
            if len(self.members) == 1:  # a lone member's failing run is known exactly
                where = {"env": self.members[0].runs[r][0], "seed": self.members[0].runs[r][1]}
            return blame.failure("run", exc, **where)
        announce("compare")
        for k, outs in enumerate(outputs):
            if k in judged and self.members[k].desynced:  # (a call raised: its buffers are unknown)
                self.members[k].skipped += 1
            elif k in judged:
                self._judge(self.members[k], r, outs, (None, *self.twins[k]) if k in self.twins else judged[k])
        return None

    def _run(self, judged: dict[int, tuple], r: int) -> list[list]:
        """One call of the compiled batch (the ``judged`` members' inputs of run ``r``, the
        others' examples): each member's outputs, then the inputs it wrote into
        (``Program.mutated_inputs``)."""
        import torch

        faults.note_call(r, [self.members[k].index for k in judged])
        writes = [p.mutated_inputs() for p in self.programs]
        given = [judged[k][0] if k in judged else self.examples[k] for k in range(len(self.members))]
        fed = [fresh(inputs, writes[k]) for k, inputs in enumerate(given)]  # (copies of what it writes)
        try:
            with torch.no_grad():
                outputs = self.prepared.run(*[t for inputs in fed for t in inputs])
            if self.device == "cuda":
                torch.cuda.synchronize()
        except Exception:
            for m in self.members:
                m.desynced = m.desynced or m.stateful
            raise
        outputs = batch.split_outputs(outputs, self.programs)
        self.twins = {k: m.shadow_step(given[k], self.device) for k, m in enumerate(self.members) if m.stateful}
        return [([t.clone() for t in outs] if self.members[k].stateful else outs)  # (a buffer changes next call)
                + written(fed[k], writes[k])  # each member's outputs, then the inputs it wrote
                for k, outs in enumerate(outputs)]

    def probe(self, r: int, judged: dict[int, tuple]) -> set[int]:
        """The members whose run ``r`` raises when fed alone, after the whole group's raised.

        A run exception that leaves the process sound (a kernel launch refused: a bmm batch
        past the 65535 grid limit) costs a probe per member, milliseconds; without it the pool
        bisects the batch, up to 2·log2(n) compiles of seconds each. Each pinned member gets
        the exception as its outcome and ``recheck``: the pool compiles it on its own, where a
        failure becomes a finding. A probe that poisons the process raises (a fatal batch)."""
        failing = set()
        for k in judged:
            try:
                self._run({k: judged[k]}, r)
            except Exception as exc:  # noqa: BLE001
                if symptom_of_exception(exc) != "exception":
                    raise
                m = self.members[k]
                env, seed = m.runs[r]
                m.outcome, m.recheck = blame.failure("run", exc, env=env, seed=seed), True
                failing.add(k)
        if len(failing) == len(judged):  # all or none alone: not pinned; the pool bisects
            for k in failing:
                self.members[k].outcome, self.members[k].recheck = None, False
            return set()
        return failing

    @staticmethod
    def _judge(m: _Member, r: int, outs, expected) -> None:
        _, eager, reference = expected
        verdict = compare_outputs(outs, eager, reference, min_eps=m.program.working_eps())
        m.checked += 1
        env, seed = m.runs[r]
        m.large += is_large(m.program, env)
        if verdict is not None:
            m.outcome = Outcome("compare", "mismatch", verdict["detail"], env=env, seed=seed,
                                verdict=verdict, runs_checked=m.checked)
