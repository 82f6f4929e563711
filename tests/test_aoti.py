"""Real torch.export + AOTInductor compiles on CPU (slow: about a minute each test)."""

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzaoti.check.signature import signature
from fuzzaoti.cli import main
from fuzzaoti.corpus.known_bugs import KnownList, builtin_bugs
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.strategies import cases, programs
from fuzzaoti.workers.worker import WorkerConfig

pytestmark = pytest.mark.aoti


def test_a_batch_of_generated_programs_compiles_and_matches_eager():
    drawn = []

    @settings(max_examples=1, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(cases(programs(), runs=2), min_size=12, max_size=12, unique_by=lambda c: c.program.id))
    def draw(batch):
        drawn.extend(batch)

    draw()
    pool = WorkerPool(WorkerConfig(backend="aoti"))
    try:
        outcomes = pool.check(drawn)
    finally:
        pool.close()
    # a bug on the known list (by signature, as a campaign names it) is no failure of the
    # generator: these draws meet the derived-dim .item() bug on torch 2.13, say
    known = KnownList(builtin_bugs())
    failures = [(o.stage, o.symptom, o.message[:200]) for c, o in zip(drawn, outcomes)
                if o.symptom != "pass" and known.match(signature(o, c.program)) is None]
    assert not failures, failures
    assert sum(o.runs_checked for o in outcomes) >= len(drawn)


def test_canary_campaign_finds_stores_and_replays(tmp_path):
    db = str(tmp_path / "c.db")
    runner = CliRunner()
    # 16 programs: seed 0's first 8 hold no bmm whose batch reaches 2 at a drawn shape
    result = runner.invoke(main, ["fuzz", "--inject", "bmm-batch-rotate", "--max-batches", "1",
                                  "--batch-size", "16", "--shrink-minutes", "0", "--no-triage", "--corpus", db],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "NEW finding 1" in result.output
    listing = runner.invoke(main, ["list", "--corpus", db]).output
    assert "canary=bmm-batch-rotate" in listing and "compare/mismatch" in listing
    with_canary = runner.invoke(main, ["replay", "1", "--inject", "bmm-batch-rotate", "--corpus", db])
    assert with_canary.exit_code == 1, with_canary.output
    assert "STILL FAILS" in with_canary.output
    without = runner.invoke(main, ["replay", "1", "--corpus", db])
    assert without.exit_code == 0, without.output
    assert "passes" in without.output
    # the report's standalone repro (torch only): nonzero with the canary, zero without it
    assert runner.invoke(main, ["report", "1", "--corpus", db, "--dir", str(tmp_path)]).exit_code == 0
    repro = str(tmp_path / "repro-1.py")
    env = {**os.environ, "PYTHONPATH": ""}
    with_canary = subprocess.run([sys.executable, "-m", "fuzzaoti.compile.canaries", "bmm-batch-rotate", repro],
                                 capture_output=True, text=True, env=env)
    assert with_canary.returncode == 1, with_canary.stdout + with_canary.stderr[-2000:]
    clean = subprocess.run([sys.executable, repro], capture_output=True, text=True, cwd=str(tmp_path))
    assert clean.returncode == 0, clean.stdout + clean.stderr[-2000:]


def test_a_compiled_cast_that_rounds_the_other_way_is_no_finding():
    """The quickstart's CPU campaign (seed 0, torch 2.13) reported this 6-op program: baddbmm, mul, a
    cast to fp16, sin. AOTI's float32 value of one element landed on the other side of an fp16
    rounding boundary, and sin carried the unit of the cast's magnitude (near 5) into an output
    near 0.2. Against a reference that rounds at the cast as eager does, ``check`` FAILS it
    (1 wrong element); against the wide reference (``oracle.reference_outputs``) it passes."""
    data = os.path.join(os.path.dirname(__file__), "data", "false-alarm-cast-rounding-flip.json")
    result = CliRunner().invoke(main, ["check", data], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "passes" in result.output


def test_a_welford_var_compiles_and_matches_eager_over_a_dim_of_size_1_too():
    """var, the generator's Welford reduction, over an fp16 dim of 300001 rows (a float sum of as
    many would need Inductor's cascade) and over a dim of size 1: with correction=0 the latter
    is 0, not the NaN that makes a case invalid rather than checked."""
    data = os.path.join(os.path.dirname(__file__), "data", "welford-var-fp16-and-a-size-1-dim.json")
    result = CliRunner().invoke(main, ["check", data], catch_exceptions=False)
    assert result.exit_code == 0 and "passes" in result.output, result.output


def test_a_run_that_breaks_an_equality_export_decided_is_skipped_not_a_finding():
    """This sdpa fails at run ('Q/K/V should have the same head size') where its sizes break what
    export decided: its value head size d3 (a named Dim) and query head size d1 (Dim.DYNAMIC) were
    equal at export, the CPU flash kernel needs them equal, and export gave both axes one symbol;
    no range says so. The exported program itself refuses d3 != d1 ('Guard failed'), so that run
    is outside the program, skipped; the run that keeps them equal is checked and passes."""
    from fuzzaoti.findings.check_files import check_files, read_case_file

    case = read_case_file(os.path.join(os.path.dirname(__file__), "data", "sdpa-value-head-size-made-equal-by-export.json"))
    ((_, outcome, verdict),) = check_files([case], "cpu", None, "aoti")
    assert (outcome.symptom, outcome.runs_checked, outcome.runs_skipped) == ("pass", 1, 1), verdict
    assert verdict == "passes (1 run(s) skipped: outside the sizes export decided)"


@pytest.mark.gpu
def test_cuda_canary_campaign(tmp_path):
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(main, ["fuzz", "--device", "cuda", "--inject", "index-shift", "--max-batches", "1",
                                       "--batch-size", "8", "--shrink-minutes", "0", "--no-triage", "--corpus", db],
                                catch_exceptions=False)
    assert result.exit_code == 0 and "NEW finding" in result.output, result.output


@pytest.fixture
def rotated_five_op_case(five_op_program):
    """The five-op program failing under the bmm-batch-rotate canary: (case, pool, target signature)."""
    from fuzzaoti.check.signature import signature
    from fuzzaoti.model.case import Case

    case = Case(five_op_program, (((("b", 5), ("n", 12)), 3),))
    pool = WorkerPool(WorkerConfig(backend="aoti", canary="bmm-batch-rotate"))
    try:
        (outcome,) = pool.check([case])
        assert outcome.symptom == "mismatch", outcome.message
        yield case, pool, signature(outcome, case.program)
    finally:
        pool.close()


def test_real_canary_failure_in_five_ops_shrinks_to_at_most_two(rotated_five_op_case):
    """Issue acceptance: a canary failure in a 5-op program shrinks to <= 2 ops, same signature."""
    from fuzzaoti.findings.shrink import shrink
    from fuzzaoti.check.signature import same_bug, signature

    case, pool, target = rotated_five_op_case
    result = shrink(case, target, pool.check, budget_s=600)
    assert len(result.case.program.nodes) <= 2
    assert same_bug(signature(result.outcome, result.case.program), target)


def test_segfaulting_canary_comes_back_as_a_crash(bmm_index_program):
    """index-wild makes the generated kernel read far out of bounds: the worker dies, we carry on."""
    from fuzzaoti.model.case import Case

    case = Case(bmm_index_program, (((("b", 3), ("n", 9)), 1),))
    pool = WorkerPool(WorkerConfig(backend="aoti", canary="index-wild"))
    try:
        (outcome,) = pool.check([case])
    finally:
        pool.close()
    assert (outcome.stage, outcome.symptom) == ("run", "crash"), outcome.message
    assert "SIGSEGV" in outcome.message or "SIGBUS" in outcome.message


def test_a_worker_dying_in_one_members_kernel_code_pins_that_member_and_its_run(bmm_index_program):
    """index-wild in a batch of two: the fault is placed in a loop nest of the bmm-and-index
    member's nodes (``workers.faults``), fed its own run, so the death is that member's finding
    with no further compile; the relu member beside it is not blamed."""
    from fuzzaoti.model.case import Case
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program
    from fuzzaoti.workers.protocol import Job
    from fuzzaoti.workers.worker import Worker

    relu = Program((DimSpec("m", 2, 9, 3),), (InputSpec("x0", "float32", ("m",)),),
                   (Node("t0", "relu", ("x0",)),), ("t0",)).validate()
    wild = Case(bmm_index_program, (((("b", 3), ("n", 9)), 1),))
    worker = Worker(WorkerConfig(backend="aoti", canary="index-wild"))
    try:
        result = worker.check(Job("aoti", "cpu", (Case(relu, (((("m", 4),), 0),)), wild)))
    finally:
        worker.close()
    assert (result.batch.stage, result.batch.symptom) == ("run", "crash"), result.batch.message
    assert (result.suspect, result.faulted, result.pinned) == (1, True, True), result.batch.message
    assert (result.batch.env, result.batch.seed) == ({"b": 3, "n": 9}, 1)
    assert "the fault was in kernel cpp_" in result.batch.message and "member 1's nodes" in result.batch.message


def test_a_kernel_that_does_not_compile_is_blamed_on_the_member_whose_loop_nest_holds_the_error(monkeypatch):
    """C++ relu made undeclared, in a batch of a tanh program and a relu program of other
    sizes: g++'s error line is in the relu member's loop nest, so that member is the suspect
    the pool compiles alone first (``faults.compile_error_member``), not the batch in halves."""
    import torch
    from torch._inductor.codegen import cpp

    from fuzzaoti.model.case import Case
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program
    from fuzzaoti.workers.execute import check_batch
    from fuzzaoti.workers.protocol import Job

    for overrides in (cpp.CppOverrides, cpp.CppVecOverrides):
        monkeypatch.setattr(overrides, "relu", staticmethod(lambda x: f"fuzzaoti_undeclared({x})"))

    def pointwise(op: str, low: int) -> Case:
        program = Program((DimSpec("m", low, 64, low + 1),), (InputSpec("x0", "float32", ("m",)),),
                          (Node("t0", op, ("x0",)),), ("t0",)).validate()
        return Case(program, (((("m", low + 2),), 0),))

    with torch._inductor.config.patch(fx_graph_cache=False):  # (no graph compiled before with the real relu)
        result = check_batch(Job("aoti", "cpu", (pointwise("tanh", 2), pointwise("relu", 5))), lambda stage: None)
    assert (result.batch.stage, result.suspect) == ("compile", 1), result.batch.message[:3000]
    assert "fuzzaoti_undeclared" in result.batch.message


def test_triage_ladder_places_a_canary_in_inductor_not_in_export(rotated_five_op_case):
    from fuzzaoti.check.verdict import RungResult, Verdict
    from fuzzaoti.findings.triage import ladder, workarounds

    case, pool, target = rotated_five_op_case
    rungs = ladder(case, target, pool.check)
    remedies = workarounds(case, target, pool.check)
    # the canary patches an Inductor lowering: eager and aot_eager are clean, Inductor and AOTI are not
    passes, same = RungResult(Verdict.PASSES), RungResult(Verdict.FAILS_SAME)
    assert rungs == {"eager": passes, "aot_eager": passes, "inductor": same, "aoti": same}
    assert set(remedies) == {"bounded Dim max", "exported at the failing size", "int64 indices", "static shapes",
                             "chunked bmm (static)"}
    assert remedies["exported at the failing size"] == same  # a canary is no size's
    assert remedies["bounded Dim max"] == same
    assert remedies["chunked bmm (static)"] == same  # chunks of 3 and 2: each still rotated


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA device")
def test_the_seeds_upper_bound_i64_case_is_checked_past_2_31_on_the_gpu():
    """PyTorch's disabled test_upper_bound_i64: an int8 ``x + y`` exported at 2**18 elements with
    ``Dim(max=2**33)``, run at 3 * 2**30. fuzzaoti checks it element by element on the device
    (no host copy) and counts it as a run past a crossing; a pass or a mismatch, never an OOM."""
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
    from fuzzaoti.model.case import Case

    program = Program((DimSpec("d0", 1, 2**33, 2**18),),
                      (InputSpec("x0", "int8", ("d0",), Values("int", -100, 100)),
                       InputSpec("x1", "int8", (1,), Values("int", -100, 100))),
                      (Node("t0", "add", ("x0", "x1")),), ("t0",)).validate()
    pool = WorkerPool(WorkerConfig(device="cuda", backend="aoti"))
    try:
        (outcome,) = pool.check([Case(program, (((("d0", 2**18),), 0), ((("d0", 3 * 2**30),), 1)))])
    finally:
        pool.close()
    assert outcome.symptom in ("pass", "mismatch", "illegal_memory_access"), (outcome.symptom, outcome.message[:500])
    assert outcome.runs_oom == 0 and outcome.runs_over_budget == 0
    if outcome.passed:
        assert (outcome.runs_checked, outcome.runs_large) == (2, 1)


def test_a_package_compiled_in_a_workdir_is_loaded_again_without_a_compile(bmm_index_program, tmp_path):
    # the pool reloads a failed group's package for the rest of its members (pool._split)
    import torch

    from fuzzaoti.compile import render
    from fuzzaoti.compile.backends import get_backend
    from fuzzaoti.model.concrete import input_specs
    from fuzzaoti.model.inputs import make_inputs

    example = make_inputs(input_specs(bmm_index_program, bmm_index_program.hint_env()), 0, "cpu")
    inputs = make_inputs(input_specs(bmm_index_program, {"b": 9, "n": 30}), 1, "cpu")
    prepared = []
    for _ in range(2):
        stages = []
        backend = get_backend("aoti")
        prepared.append((backend.prepare(bmm_index_program, render.load_program(bmm_index_program), example,
                                         "cpu", str(tmp_path), stages.append), stages))
    (first, compiled), (again, reloaded) = prepared
    assert compiled == ["export", "compile", "load"] and reloaded == ["load"]
    assert again.ranges == first.ranges and again.ranges[(0, 0)] == (1, 64)
    assert again.sizes == first.sizes and first.sizes[(0, 0)] == first.sizes[(1, 0)]  # x0 and x1 share b
    assert all(torch.equal(a, b) for a, b in zip(first.run(*inputs), again.run(*inputs)))
