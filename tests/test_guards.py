"""fuzzaoti.check.guards: which of export's 'Constraints violated' claims are export's own bug."""

import pytest

from fuzzaoti.check.guards import refuted_guard
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program


def _program(high):
    return Program((DimSpec("d0", 1, 512, 12), DimSpec("d1", 1, high, 16)),
                   (InputSpec("x0", "float16", ("d0", "d1", 4, "d1")),),
                   (Node("t0", "flatten", ("x0",), (("start", 0), ("end", 1))),), ("t0",)).validate()


def _message(guard, dim="d1"):
    return (f"Constraints violated ({dim})! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
            f"  - Not all values of {dim} = L['x0'].size()[1] in the specified range {dim} <= 256 satisfy the "
            f"generated guard {guard}.")


TRUE_GUARD = "min(4*L['x0'].size()[1], 4*L['x0'].size()[1]*L['x0'].size()[1]) == (4*L['x0'].size()[1])"


@pytest.mark.parametrize("spelled", [TRUE_GUARD, TRUE_GUARD.replace("min(", "torch.sym_min(")])  # torch 2.15's
def test_a_guard_that_holds_on_the_whole_range_is_refuted(spelled):
    guard, how = refuted_guard(_message(spelled), _program(256))
    assert guard == "min(4*s0, 4*s0*s0) == (4*s0)"
    assert how == "holds for every d1 in [1, 256] (256 sizes tried)"


@pytest.mark.parametrize("guard,high", [
    ("L['x0'].size()[1] <= 100", 256),                 # fails from 101 on: the range is wrong
    ("L['x0'].size()[1] % 3 != 0", 256),               # fails at 3
    ("L['x0'].size()[1] < 2**31", None),               # unbounded: fails far out
    ("L['x0'].size()[1] != 1", None),                  # 0/1 specialisation: fails at the low end
    ("L['x0'].size()[1] % 65536 != 0", None),          # fails at a power of two far out
])
def test_a_guard_that_fails_somewhere_in_the_range_stands(guard, high):
    assert refuted_guard(_message(guard), _program(high)) is None


@pytest.mark.parametrize("guard", [
    "__import__('os').system('true') or True",
    "L['x0'].stride()[1] == 1",                        # not a size: not evaluated
    "2**L['x0'].size()[1] > 0",                        # a size as exponent
    "Eq(Mod(L['x0'].size()[1], 2), 0)",                # sympy functions are not evaluated
    "L['nope'].size()[0] > 0",
])
def test_guards_outside_the_whitelist_are_never_evaluated(guard):
    assert refuted_guard(_message(guard), _program(256)) is None


def test_a_member_of_a_merged_batch_is_read_by_its_prefix():
    merged = _message(TRUE_GUARD.replace("'x0'", "'p3_x0'"), dim="p3_d1")
    assert refuted_guard(merged, _program(256), prefix="p3_") is not None
    assert refuted_guard(merged, _program(256), prefix="p1_") is None


def _drop_beside_a_relu(guard, backend):
    """Export refused member 1 (the flatten program) of a merged batch with ``guard``, member 0 a
    relu: what ``drop_failing_members`` makes of it; the members for their flags."""
    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.compile import merge as batch
    from fuzzaoti.compile.backends import StageFailure
    from fuzzaoti.model.case import Case
    from fuzzaoti.workers.blame import drop_failing_members
    from fuzzaoti.workers.execute import _Member

    relu = Program((DimSpec("m", 2, 9, 3),), (InputSpec("x0", "float32", ("m",)),),
                   (Node("t0", "relu", ("x0",)),), ("t0",)).validate()
    flatten = _program(256)
    members = [_Member(Case.from_run_dicts(relu, [{"env": {"m": 4}, "seed": 0}])),
               _Member(Case.from_run_dicts(flatten, [{"env": {"d0": 3, "d1": 16}, "seed": 0}]))]
    outcome = Outcome("export", "invalid", "UserError: " + _message(guard.replace("'x0'", "'p1_x0'"), dim="p1_d1"))
    raised = StageFailure("export", Exception(outcome.message))
    return drop_failing_members(outcome, raised, batch.merge([relu, flatten]), members, backend, "cpu"), members


def test_a_refuted_guard_is_a_finding_only_if_the_member_fails_to_export_alone():
    from fuzzaoti.compile.backends.aoti import AotiBackend

    def drop(backend):
        dropped, members = _drop_beside_a_relu(TRUE_GUARD, backend)
        return dropped, members[1].outcome

    dropped, alone_fails = drop(AotiBackend())  # torch.export of the flatten member alone refuses it too
    if alone_fails.symptom == "invalid":
        pytest.xfail("export's flatten bug is fixed in this torch")
    assert dropped == {1} and alone_fails.symptom == "exception" and "valid range" in alone_fails.message

    class ExportsFine:
        @staticmethod
        def export(namespace, example):
            return None

    dropped, merged_only = drop(ExportsFine())
    assert dropped == {1} and merged_only.symptom == "invalid"
    assert merged_only.message.startswith("export refused this range only inside a merged batch")


@pytest.mark.parametrize("guard", [TRUE_GUARD, "L['x0'].size()[1] % 3 != 0"])  # refuted or not
def test_a_member_refused_only_inside_the_merge_is_checked_alone_never_called_invalid(guard):
    """A guard export builds from another member's sizes says nothing of this program: the
    member that exports alone is marked for the pool's recheck on its own. Without the alone
    export, an unrefuted guard made it invalid (a program no campaign would ever check)."""
    exported = []

    class ExportsFine:
        @staticmethod
        def export(namespace, example):
            exported.append([tuple(t.shape) for t in example])

    dropped, members = _drop_beside_a_relu(guard, ExportsFine())
    assert dropped == {1} and exported == [[(12, 16, 4, 16)]]  # its example: the hints
    assert members[1].recheck and not members[0].recheck and members[0].outcome is None
    assert members[1].outcome.message.startswith("export refused this range only inside a merged batch")
