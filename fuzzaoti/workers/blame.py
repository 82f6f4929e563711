"""When a merged compile fails as a whole: which member is to blame, and what it failed with.

A batch is many programs merged into one module, so one member's export error, Inductor
assert or failing run fails them all. These rules name the member when the failure's
traceback or message points into its code (its input/node name prefix), drop members that
export alone shows are rejected by export itself, and turn exceptions into Outcomes.
(``members`` are execute's per-case states: a program, a ``suspect`` flag, an outcome.)
"""

from __future__ import annotations

import traceback
from dataclasses import replace
from typing import Any, Callable

from fuzzaoti.check.guards import refuted_guard
from fuzzaoti.compile import merge as batch
from fuzzaoti.compile.assumptions import broken
from fuzzaoti.compile import render
from fuzzaoti.compile.backends.base import StageFailure
from fuzzaoti.check.outcome import Outcome, symptom_of_exception
from fuzzaoti.model.program import Program
from fuzzaoti.workers import faults


def frames(error: BaseException) -> tuple[str, ...]:
    """Innermost code locations of the root cause as ``file:function`` (no line numbers)."""
    while (error.__cause__ or error.__context__) is not None:
        error = error.__cause__ or error.__context__
    frames = traceback.extract_tb(error.__traceback__)[-4:]
    return tuple(f"{f.filename.rsplit('/', 1)[-1]}:{f.name}" for f in frames)


def failure(stage: str, error: BaseException, **extra: Any) -> Outcome:
    symptom = "invalid" if rejected_spec(stage, error) else symptom_of_exception(error)
    trace = "".join(traceback.format_exception(error))[-6000:]
    message = f"{type(error).__name__}: {error}"[:4000] + "\n\n" + trace
    return Outcome(stage=stage, symptom=symptom, message=message,
                   error_type=type(error).__name__, frames=frames(error), **extra)


def blamed_member(outcome: Outcome, merged: Program, count: int) -> int | None:
    """The member whose code the failure came from, when its traceback (or Inductor's
    "Original traceback" of the failing node) ends in a line of the merged module that names
    one member (``merge.traced_members``). None if unknown."""
    if count < 2:
        return None
    owners = batch.traced_members([outcome.message], merged, count, innermost=True)
    return owners.pop() if owners else None


def drop_failing_members(outcome: Outcome, raised: StageFailure, merged: Program, members: list, backend,
                          device: str) -> set[int]:
    """Members of a batch that failed as a whole (``outcome``: what ``raised`` says) which can be
    pinned without bisecting it: their outcomes are set and the caller retries the rest. Export
    names the members whose ranges it refused; a traceback can end in one member's code; and
    when an export failed for neither reason, a backend that can export alone exports each
    member alone (an export costs a second, a compile many). A refused member that exports alone is refused only by the merge
    (a guard built from another member's sizes): it is marked ``recheck``, for the pool to
    check on its own, never invalid. Any other failing member is only marked the suspect,
    which the pool checks alone first: the one a traceback ends in, or the one whose loop nest
    holds a C++ error in a kernel that did not compile (``raised.kernels``, ``faults``)."""
    rejected = rejected_members(outcome, len(members))
    blamed = blamed_member(outcome, merged, len(members))
    if blamed is None and len(members) > 1:
        blamed = faults.compile_error_member(outcome.message, raised.kernels)
    if not rejected and outcome.symptom == "invalid" and blamed is not None:
        rejected = {blamed}  # export refused the code of one member (a data-dependent guard)
    export = getattr(backend, "export", None)
    for k in rejected:
        if export is None:
            wrong = export_wrong(outcome, members[k].program, batch.prefix(k))
            members[k].outcome = wrong or Outcome("export", "invalid", outcome.message)
            continue
        alone = export_alone(members[k], export, device)  # invalid, export's bug, or None: it exports
        if alone is None:  # the merge made the guard (another member's sizes): no verdict on this
            # program, which the pool checks on its own (``recheck``)
            message = "export refused this range only inside a merged batch; alone it exports\n\n" + outcome.message
            alone, members[k].recheck = Outcome("export", "invalid", message), True
        members[k].outcome = alone
    if not rejected and raised.stage == "export" and export is not None:
        rejected = fail_export_alone(members, export, device)
    if not rejected and blamed is not None:
        members[blamed].suspect = True
    return rejected


def fail_export_alone(members: list, export: Callable[[dict, list], Any], device: str) -> set[int]:
    """Export each member on its own, no compile; those that fail get that as their outcome."""
    failed = set()
    for k, m in enumerate(members):
        outcome = export_alone(m, export, device)
        if outcome is not None:
            m.outcome = outcome
            failed.add(k)
    return failed


def export_alone(member, export: Callable[[dict, list], Any], device: str) -> Outcome | None:
    """How exporting ``member`` on its own fails (export's bug when the guard it claims holds
    on the whole range), or None if it exports. A member whose range export refused only
    inside a merged program is no finding: the merge, not the program, made the guard."""
    try:
        export(render.load_program(member.program), member.example_inputs(device))
    except Exception as exc:  # noqa: BLE001
        outcome = failure("export", exc)
        return export_wrong(outcome, member.program, "") or outcome
    return None


def rejected_members(outcome: Outcome, count: int) -> set[int]:
    """Members of a merged program whose dynamic shapes export refused, by their name prefix."""
    if outcome.symptom != "invalid" or count == 1:
        return set()
    head = outcome.message.split("\n\n", 1)[0]
    return {k for k in range(count) if batch.prefix(k) in head}


def export_wrong(outcome: Outcome, program: Program, prefix: str) -> Outcome | None:
    """Export's rejection of a member's declared range (its names carry ``prefix`` in the merged
    program), when the guard it says the range violates holds on the whole range: export's
    bug, not the program's (``fuzzaoti.check.guards``)."""
    if outcome.symptom != "invalid":
        return None
    refuted = refuted_guard(outcome.message.split("\n\n", 1)[0], program, prefix)
    if refuted is None:
        return None
    guard, how = refuted
    message = f"UserError: Constraints violated by a valid range: {guard}\n{how}\n\n{outcome.message}"
    return Outcome("export", "exception", message, error_type="UserError", frames=outcome.frames)


def rejected_spec(stage: str, error: BaseException) -> bool:
    """torch.export refusing the program as written, not torch failing: the declared dynamic
    shapes are wrong (``Constraints violated``), or a size read from data needs more
    ``torch._check`` hints than the program gives (a data-dependent guard: the user's job)."""
    if stage != "export":
        return False
    name = type(error).__name__
    return (name == "UserError" and "Constraints violated" in str(error)) or name == "GuardOnDataDependentSymNode"


def on_run(outcome: Outcome, m) -> Outcome:
    """A lone member's batch failure (``m``: an ``execute._Member``) with the run it failed in,
    also where the error surfaced after that run (``failed_run``), and the assumptions of
    Inductor that run broke."""
    if outcome.env is None and m.failed_run is not None:
        outcome = replace(outcome, env=m.runs[m.failed_run][0], seed=m.runs[m.failed_run][1])
    return replace(outcome, assumptions=broken(m.assumed, outcome.env))
