"""What Inductor assumed of a program's sizes, unchecked by AOTI, and the runs directed at breaking it."""

import os
from dataclasses import replace

import pytest

from fuzzaoti.check.assumption import Assumption
from fuzzaoti.compile.assumptions import broken, from_guards, of_member
from fuzzaoti.model.case import Case
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
from fuzzaoti.model.scale import fits
from fuzzaoti.workers import execute
from fuzzaoti.workers.directed import MAX_RUNS, breaking_envs
from fuzzaoti.workers.execute import check_batch
from fuzzaoti.workers.protocol import Job

CASCADE = os.path.join(os.path.dirname(__file__), "..", "fuzzaoti", "corpus", "known",
                       "aoti-cpu-sum-cascade-chosen-at-export-hint.json")


def _program(hint=48, low=2, high=None) -> Program:
    d = DimSpec("d0", low, high, hint)
    return Program((d,), (InputSpec("x0", "int8", ("d0", 4), Values("int", 1, 100)),),
                   (Node("t0", "neg", ("x0",)),), ("t0",)).validate()


def test_breaking_sizes_straddle_the_threshold_and_go_as_far_as_the_budget():
    program, budget = _program(), 64 << 20
    envs = [e["d0"] for e in breaking_envs(program, [Assumption("d0 <= 4096", "cpp.py")], budget)]
    assert envs[:2] == [4096, 4097]  # where it last holds, where it first breaks
    far = envs[2]
    assert far > 4097 and fits(program, {"d0": far}, budget) and not fits(program, {"d0": far + 1}, budget)


def test_breaking_sizes_below_the_hint_and_next_to_it():
    program = _program(hint=48, low=2)
    assert [e["d0"] for e in breaking_envs(program, [Assumption("d0 >= 5", "w")], 1 << 20)] == [5, 4]
    # a divisibility guard (an alignment Inductor relies on) breaks right next to the hint
    assert {"d0": 49} in breaking_envs(program, [Assumption("Eq(Mod(d0, 16), 0)", "w")], 1 << 20)


def test_no_run_where_the_range_never_breaks_the_guard_or_it_cannot_be_read():
    program = _program(high=100)
    assert breaking_envs(program, [Assumption("d0 <= 4096", "w")], 1 << 30) == []  # the range keeps it
    assert breaking_envs(program, [Assumption("__import__('os')", "w")], 1 << 30) == []
    assert Assumption("__import__('os')", "w").holds({"d0": 3}) is None


def test_guards_are_named_by_the_programs_dims_and_each_member_gets_its_own():
    import sympy

    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    program = Program(
        (DimSpec("p0_a", 2, None, 8), DimSpec("p1_b", 2, None, 6)),
        (InputSpec("p0_x", "float32", ("p0_a", 3)), InputSpec("p1_y", "float32", ("2*p1_b",))),
        (Node("p0_t", "neg", ("p0_x",)), Node("p1_t", "neg", ("p1_y",))), ("p0_t", "p1_t")).validate()
    exprs = {(0, 0): s0, (1, 0): 2 * s1}  # export's input sizes: a plain dim, a derived one
    assumed = from_guards([(sympy.Le(s0, 4096), "cpp.py:1", "f"), (sympy.Le(8 * s1, 2**31 - 1), "simd.py:2", "g")],
                          exprs, program)
    assert [a.guard for a in assumed] == ["p0_a <= 4096", "8*p1_b <= 2147483647"]
    assert of_member(assumed, "p1_") == (Assumption("8*b <= 2147483647", "simd.py:2", "g"),)
    assert broken(of_member(assumed, "p0_"), {"a": 5000}) == (Assumption("a <= 4096", "cpp.py:1", "f"),)
    assert broken(of_member(assumed, "p0_"), {"a": 5000})[0].text() == "a <= 4096 (cpp.py:1 in f)"
    assert broken(of_member(assumed, "p0_"), {"a": 4096}) == ()


def _assume(monkeypatch, *guards: str) -> None:
    """The fake backend's compile "assumes" ``guards`` of its first program's dim (``{d}``)."""
    from fuzzaoti.compile.backends.fake import FakeBackend

    prepare = FakeBackend.prepare

    def assuming(self, program, *args, **kwargs):
        assumed = tuple(Assumption(g.format(d=program.dims[0].name), "fake.py:1", "f") for g in guards)
        return replace(prepare(self, program, *args, **kwargs), assumptions=assumed)
    monkeypatch.setattr(FakeBackend, "prepare", assuming)


def test_a_member_gets_directed_runs_after_the_compile(monkeypatch):
    # the drawn run (d0 = 2) holds d0 <= 8; the directed ones (8, 9 and the largest in budget)
    # are checked after it, the second member's dim (p1_d0) is assumed nothing of
    _assume(monkeypatch, "{d} <= 8")
    runs = [{"env": {"d0": 2}, "seed": 0}]
    cases = (Case.from_run_dicts(_program(hint=4), runs), Case.from_run_dicts(_program(hint=4), runs))
    first, second = check_batch(Job("fake", "cpu", cases, 1 << 20), lambda stage: None).cases
    assert (first.symptom, first.runs_checked, first.runs_directed) == ("pass", 4, 3)
    assert (second.runs_checked, second.runs_directed) == (1, 0)


def test_a_failing_directed_run_names_the_assumption_it_broke(monkeypatch, fake_fault):
    # the fault raises from size 64 (fake.LARGE) on: only the far directed run reaches it
    _assume(monkeypatch, "{d} <= 8")
    fake_fault("neg:raise-large")
    case = Case.from_run_dicts(_program(hint=4), [{"env": {"d0": 2}, "seed": 0}])
    outcome = check_batch(Job("fake", "cpu", (case,), 1 << 20), lambda stage: None).batch
    assert outcome.symptom == "exception" and outcome.env["d0"] >= 64
    assert outcome.assumptions == (Assumption("d0 <= 8", "fake.py:1", "f"),)


def test_directed_runs_are_capped_and_never_given_to_an_excluded_member(monkeypatch):
    _assume(monkeypatch, *(f"{{d}} <= {2**k}" for k in range(4, 12)))
    runs = [{"env": {"d0": 2}, "seed": 0}]
    cases = (Case.from_run_dicts(_program(hint=4), runs), Case.from_run_dicts(_program(hint=4), runs))
    first, _ = check_batch(Job("fake", "cpu", cases, 1 << 20), lambda stage: None).cases
    assert first.runs_directed == MAX_RUNS
    stages = []  # an excluded member (fed its examples, never judged) runs nothing of its own
    check_batch(Job("fake", "cpu", cases, 1 << 20, exclude=(0,)), stages.append)
    assert stages and not any(s.member == 0 for s in stages)


def test_a_real_cpu_compile_notes_the_cascade_guard_and_its_directed_run_finds_the_bug():
    # the known cascade-sum bug, checked at small sizes only: AOTI's compile notes Inductor's
    # ``d0 <= 4096`` (need_use_acc_helper), the directed runs break it, and the far one is wrong.
    # Without the noted guard both drawn runs pass (they are the hint's sizes)
    import torch

    from fuzzaoti.corpus.known_bugs import expected_result
    from fuzzaoti.corpus.known_entry import load_entry

    data = load_entry(CASCADE)
    if expected_result(data, torch.__version__) != "fail":
        pytest.skip(f"not in the entry's torch range: {data.title}")
    small = [{"env": {"d0": 48}, "seed": 0}, {"env": {"d0": 100}, "seed": 1}]
    neg = _program(hint=5)
    cases = (Case.from_run_dicts(Program.from_dict(data.program), small), Case.from_run_dicts(neg, small))
    summed, negated = check_batch(Job("aoti", "cpu", cases, 512 << 20), lambda stage: None).cases
    assert summed.symptom == "mismatch" and summed.runs_directed >= 2
    assert summed.env["d0"] > 4096
    assert any(a.guard == "d0 <= 4096" and a.function == "need_use_acc_helper" for a in summed.assumptions)
    assert (negated.symptom, negated.runs_directed) == ("pass", 0)


def test_an_error_surfacing_after_a_lone_members_big_run_is_pinned_on_that_run(monkeypatch):
    # an illegal memory access may surface only when the big run's memory is released: the batch
    # fails as a whole, and for a lone member it is stored at the (directed) run that caused it
    _assume(monkeypatch, "{d} <= 8")
    monkeypatch.setattr(execute, "KEEP_BYTES", 0)
    released = []

    def release(device):
        released.append(device)
        if len(released) == 3:  # after the third big run: the drawn one, then 8, then 9
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
    monkeypatch.setattr(execute, "release_memory", release)
    case = Case.from_run_dicts(_program(hint=4), [{"env": {"d0": 2}, "seed": 0}])
    outcome = check_batch(Job("fake", "cpu", (case,), 1 << 20), lambda stage: None).batch
    assert outcome.symptom == "illegal_memory_access" and outcome.env == {"d0": 9}
    assert outcome.assumptions == (Assumption("d0 <= 8", "fake.py:1", "f"),)



def test_an_assumption_is_a_record_read_back_from_data_and_from_the_text_older_corpora_stored():
    from fuzzaoti.errors import CorpusError

    site = Assumption("8*d0 <= 2147483647", "torch/_inductor/codegen/simd.py:3000", "can_use_32bit_indexing")
    assert Assumption.from_data(site.to_data()) == site
    assert site.text() == "8*d0 <= 2147483647 (torch/_inductor/codegen/simd.py:3000 in can_use_32bit_indexing)"
    assert Assumption.from_data(site.text()) == site  # (what migration 014 reads)
    assert Assumption.from_data("Eq(Mod(d0, 4), 0) (torch/_inductor/ir.py:470 in is_aligned)").function == "is_aligned"
    for bad in ({"guard": 3}, {"guard": "d0 <= 8", "line": 3}, ["d0 <= 8"]):
        with pytest.raises(CorpusError):
            Assumption.from_data(bad)
