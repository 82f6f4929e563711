"""The shrinker keeps the bug and drops everything else (fake backend here; real AOTI in test_aoti)."""

from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.findings.shrink import shrink, size_key
from fuzzaoti.check.signature import signature
from fuzzaoti.model.case import Case
from fuzzaoti.workers.worker import WorkerConfig


def _shrink_five_op(fake_fault, five_op_program, fault):
    """Shrink the five-op program failing with the fake backend's ``fault``: (case, target, result, stats)."""
    fake_fault(fault)
    case = Case(five_op_program, (((("b", 17), ("n", 33)), 5),))
    pool = WorkerPool(WorkerConfig(backend="fake"))
    try:
        (outcome,) = pool.check([case])
        target = signature(outcome, case.program)
        return case, target, shrink(case, target, pool.check, budget_s=120), pool.stats
    finally:
        pool.close()


def test_shrinks_a_five_op_failure_to_the_guilty_op(fake_fault, five_op_program):
    case, _, result, _ = _shrink_five_op(fake_fault, five_op_program, "bmm:wrong")
    small = result.case.program
    assert [n.op for n in small.nodes] == ["bmm"]
    assert {i.dtype for i in small.inputs} == {"float32"}
    assert all(d.kind == "range" and d.max is not None for d in small.dims)
    assert dict(result.case.runs[0][0]) == {"b": 2, "n": 2}
    assert signature(result.outcome, small) == "compare/mismatch/values via bmm"
    assert size_key(result.case) < size_key(case)


def test_a_passing_case_does_not_shrink(fake_fault, five_op_program):
    fake_fault("nothing:wrong")
    case = Case(five_op_program, (((("b", 3), ("n", 5)), 1),))
    pool = WorkerPool(WorkerConfig(backend="fake"))
    try:
        result = shrink(case, "compare/mismatch/values via bmm", pool.check, budget_s=60)
    finally:
        pool.close()
    assert result.case == case and result.outcome.passed


def test_a_bug_that_fails_whole_compiles_shrinks_one_candidate_per_compile(fake_fault, five_op_program):
    # a run-time exception fails the merged batch of every candidate that keeps it: while most
    # candidates keep the bug, each is compiled alone instead of bisecting batches
    _, target, result, stats = _shrink_five_op(fake_fault, five_op_program, "bmm:raise")
    assert [n.op for n in result.case.program.nodes] == ["bmm"]
    assert signature(result.outcome, result.case.program) == target
    assert stats.bisections == 0
    assert stats.compiles == 1 + result.candidates_checked


def test_a_failure_past_2_31_elements_shrinks_only_to_shapes_past_it():
    # a bug that needs 2**31 elements must not be "shrunk" into a smaller size class: the shape
    # candidates keep the failing run's classes, the least of them just past the crossing
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
    from fuzzaoti.model.scale import reach, size_classes
    from fuzzaoti.findings.shrink import _shape_candidates
    from fuzzaoti.model.case import Case

    program = Program((DimSpec("d0", 2, None, 4),), (InputSpec("x0", "int8", ("d0", 8), Values("int", -100, 100)),),
                      (Node("t0", "neg", ("x0",)),), ("t0",)).validate()
    env = {"d0": 3 * 2**28 + 5}  # 3 * 2**31 elements, and more
    (candidate,) = _shape_candidates(Case(program, (((("d0", env["d0"]),), 0),)))
    sizes = [dict(e)["d0"] for e, _ in candidate.runs]
    assert sizes and all(size_classes(reach(program, {"d0": n})) == ("elements>=2^31", "elements>=2^32") for n in sizes)
    assert min(sizes) == 2**29  # just past 2**32 elements: the smallest shape of its class


def test_a_round_compiled_one_by_one_stops_at_its_first_chunk_with_a_keeper(fake_fault, five_op_program):
    # the candidates are sorted smallest first, so the first chunk holding a candidate that keeps
    # a whole-batch failure holds the round's winner: checking the rest costs compiles, not size
    fake_fault("bmm:raise")
    case = Case(five_op_program, (((("b", 17), ("n", 33)), 5),))
    pool = WorkerPool(WorkerConfig(backend="fake"))
    try:
        (outcome,) = pool.check([case])
        target = signature(outcome, case.program)
        whole = shrink(case, target, pool.check, budget_s=120, alone_chunk=10**6)
        chunked = shrink(case, target, pool.check, budget_s=120, alone_chunk=2)
    finally:
        pool.close()
    assert chunked.case == whole.case and signature(chunked.outcome, chunked.case.program) == target
    assert chunked.candidates_checked < whole.candidates_checked / 2, (chunked, whole)
