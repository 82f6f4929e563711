"""Compiler coverage: the Inductor lines compiles ran (fuzzaoti/coverage/), stored and reported."""

import importlib.util
import re
import textwrap
from collections import Counter

import pytest
from click.testing import CliRunner

from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus
from fuzzaoti.corpus.merge import merge_corpora
from fuzzaoti.coverage import record, report


@pytest.fixture
def inductor_like(tmp_path, monkeypatch):
    """A module whose path has torch/_inductor/ in it, as the tracer's filter wants, and
    recording switched on for the test only."""
    path = tmp_path / "torch" / "_inductor" / "lowering_like.py"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent("""\
        X = 1

        def lower(n):
            if n > 3:
                return "big"
            return "small"
    """))
    spec = importlib.util.spec_from_file_location("lowering_like", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(record, "_enabled", True)
    monkeypatch.setattr(record, "_seen", set())
    monkeypatch.setattr(record, "_new", set())
    return module


def test_tracing_records_the_function_lines_that_ran_and_reports_each_once(inductor_like):
    with record.tracing():
        inductor_like.lower(1)
    assert record.take() == {"torch/_inductor/lowering_like.py": [3, 4, 6]}  # not line 5: n was small
    with record.tracing():
        inductor_like.lower(1)
        inductor_like.lower(9)
    assert record.take() == {"torch/_inductor/lowering_like.py": [5]}  # only what is new to the process
    assert record.take() == {}


def test_tracing_records_nothing_unless_enabled(inductor_like):
    record.enable(False)
    with record.tracing():
        inductor_like.lower(9)
    assert record.take() == {}


def test_module_and_class_bodies_are_not_functions():
    code = compile("class A:\n    def f(self):\n        return 1\n", "m.py", "exec")
    cls_body = next(c for c in code.co_consts if hasattr(c, "co_lines"))
    method = next(c for c in cls_body.co_consts if hasattr(c, "co_lines"))
    assert not record.is_function(code) and not record.is_function(cls_body) and record.is_function(method)


def test_reached_keeps_each_line_once_across_workers():
    reached = record.Reached()
    reached.add({"torch/_inductor/ir.py": [10, 11]})
    reached.add({"torch/_inductor/ir.py": [11, 12], "torch/_inductor/graph.py": [5]})
    assert sorted(reached.take()) == [("torch/_inductor/graph.py", 5), ("torch/_inductor/ir.py", 10),
                                      ("torch/_inductor/ir.py", 11), ("torch/_inductor/ir.py", 12)]
    reached.add({"torch/_inductor/ir.py": [10]})
    assert reached.take() == [] and len(reached) == 4


def test_growth_counts_lines_by_minute_up_to_the_last():
    lines = report.Lines.of([("a.py", 1, 10.0), ("a.py", 2, 70.0), ("b.py", 1, 400.0)])
    assert lines.growth() == [(1, 1), (2, 2), (5, 2), (400 / 60, 3)]
    assert report.ranges([7, 1, 2, 3, 9, 10]) == "1-3, 7, 9-10"


def test_executable_lines_are_the_installed_torchs_function_lines():
    import inspect

    import torch._inductor.codegen.simd as simd

    code = report.executable_lines("torch/_inductor/codegen/simd.py")
    function = next(f for f in vars(simd).values() if inspect.isfunction(f) and f.__module__ == simd.__name__)
    last = max(n for _, _, n in function.__code__.co_lines() if n is not None)
    assert last in code and 1 not in code  # a function's line; not the module docstring's
    assert report.executable_lines("torch/_inductor/no_such_file.py") is None


def test_a_functions_lines_show_which_were_never_reached():
    import inspect

    import torch._inductor.codegen.simd as simd

    function = next(f for f in vars(simd).values() if inspect.isfunction(f) and f.__module__ == simd.__name__
                    and len({n for _, _, n in f.__code__.co_lines() if n}) > 2)
    own = sorted({n for _, _, n in function.__code__.co_lines() if n is not None})
    lines = report.Lines.of([("torch/_inductor/codegen/simd.py", own[0], 1.0)])
    out = report.functions(lines, function.__qualname__)
    assert (f"torch/_inductor/codegen/simd.py:{function.__code__.co_firstlineno} {function.__qualname__}: "
            f"1 of {len(own)} lines reached; not reached: {report.ranges(own[1:])}") in out
    assert report.functions(lines, "no_such_function_anywhere") == [
        "no function of torch/_inductor has 'no_such_function_anywhere' in its name"]


def test_against_shows_the_lines_each_campaign_reached_alone():
    mine = report.Lines.of([("torch/_inductor/ir.py", n, 1.0) for n in (1, 2, 3)])
    theirs = report.Lines.of([("torch/_inductor/ir.py", n, 1.0) for n in (2, 3, 4, 5)])
    out = report.against(mine, theirs, "A", "B")
    assert out[0] == "1 lines reached by A alone, in 1 files" and out[1].endswith("torch/_inductor/ir.py: 1")
    assert "2 lines reached by B alone" in out[2] and out[3].endswith(": 4-5")


def test_lines_are_stored_once_and_merged_under_the_targets_campaign_id(tmp_path):
    shard, target = str(tmp_path / "shard.db"), str(tmp_path / "all.db")
    with Corpus.open(target, create=True) as corpus:  # a target that already has a campaign of its own
        corpus.start_campaign("cpu", "aoti", None, 0, {}, {})
    with Corpus.open(shard, create=True) as corpus:
        cid = corpus.start_campaign("cpu", "aoti", None, 0, {}, {})
        corpus.add_lines(cid, [("torch/_inductor/ir.py", 10), ("torch/_inductor/ir.py", 11)], 5.0)
        corpus.add_lines(cid, [("torch/_inductor/ir.py", 10)], 50.0)  # reached again: keeps its 5 s
        assert sorted(corpus.compiler_lines(cid)) == [("torch/_inductor/ir.py", 10, 5.0), ("torch/_inductor/ir.py", 11, 5.0)]
        corpus.add_decisions(cid, {"cpp reduction vec=float tail": 2}, 5.0)
        corpus.add_decisions(cid, {"cpp reduction vec=float tail": 1, "extern bmm": 1}, 50.0)  # counted on
        assert corpus.compiler_decisions(cid) == [("cpp reduction vec=float tail", 5.0, 3), ("extern bmm", 50.0, 1)]
    merge_corpora([shard], target, echo=lambda _: None)
    merge_corpora([shard], target, echo=lambda _: None)  # again: nothing doubles
    with Corpus.open(target) as corpus:
        assert corpus.campaigns_with_lines() == [2]
        assert len(corpus.compiler_lines(2)) == 2
        assert corpus.compiler_decisions(2) == [("cpp reduction vec=float tail", 5.0, 3), ("extern bmm", 50.0, 1)]


def test_coverage_command_errors_are_one_line(tmp_path):
    db = str(tmp_path / "c.db")
    runner = CliRunner()
    assert runner.invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "1", "--corpus", db]).exit_code == 0
    result = runner.invoke(main, ["coverage", "--corpus", db])
    assert result.exit_code == 2 and "recorded coverage (run 'fuzzaoti fuzz --coverage')" in result.output
    assert runner.invoke(main, ["coverage", "--corpus", db, "--campaign", "9"]).exit_code == 2
    assert runner.invoke(main, ["coverage", "--corpus", str(tmp_path / "none.db")]).exit_code == 2


@pytest.mark.aoti
def test_a_campaign_with_coverage_stores_the_cpp_codegen_lines_its_compile_ran(tmp_path):
    db = str(tmp_path / "c.db")
    runner = CliRunner()
    # --guided records coverage as --coverage does, and learns from the batch's programs
    result = runner.invoke(main, ["fuzz", "--guided", "--max-batches", "1", "--batch-size", "4", "--shrink-minutes",
                                  "0", "--no-triage", "--corpus", db], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert re.search(r"guided: \d+ seeds, mutants \d+% of draws; 0 of 0 mutant programs took a new combination, "
                     r"\d+ of [1-4] fresh programs", result.output), result.output
    assert "decision combinations taken ('fuzzaoti coverage --campaign 1')" in result.output
    with Corpus.open(db) as corpus:
        files = {f for f, _, _ in corpus.compiler_lines(1)}
        decided = [d for d, _, _ in corpus.compiler_decisions(1)]
    assert "torch/_inductor/codegen/cpp.py" in files and "torch/_inductor/graph.py" in files
    assert any(d.startswith("cpp ") for d in decided), decided  # each C++ loop nest's combination
    summary = runner.invoke(main, ["coverage", "--corpus", db])
    assert summary.exit_code == 0 and "torch/_inductor/codegen/cpp.py" in summary.output, summary.output
    assert "decision combinations taken by" in summary.output and "cpp:" in summary.output, summary.output
    stats = runner.invoke(main, ["stats", "--corpus", db])
    assert "decisions by kernels" in stats.output, stats.output
    one = runner.invoke(main, ["coverage", "--corpus", db, "--file", "codegen/cpp.py"])
    assert "reached: " in one.output and "not reached: " in one.output


@pytest.mark.gpu
def test_a_cuda_campaign_with_coverage_stores_the_triton_codegen_lines(tmp_path):
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(main, ["fuzz", "--device", "cuda", "--coverage", "--max-batches", "1", "--batch-size",
                                       "4", "--shrink-minutes", "0", "--no-triage", "--configs", "default",
                                       "--corpus", db], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with Corpus.open(db) as corpus:
        files = {f for f, _, _ in corpus.compiler_lines(1)}
        decided = [d for d, _, _ in corpus.compiler_decisions(1)]
    assert "torch/_inductor/codegen/triton.py" in files and "torch/_inductor/codegen/simd.py" in files
    assert any(d.startswith("triton ") for d in decided), decided  # read from the wrapper's comments


_CPP_KERNEL = '''#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  cpp_fused_index_select_sum_0(const float* in_ptr0, const int64_t* in_ptr1, float* out_ptr0,
                       const int64_t ks0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); x0+=static_cast<int64_t>(16L))
        {
            float tmp_acc0 = 0;
            if(C10_LIKELY(x0 < static_cast<int64_t>(16L)))
            {
                auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + x0, static_cast<int64_t>(16));
            }
            if(C10_UNLIKELY(x0 >= static_cast<int64_t>(16L)))
            {
                tmp_acc0_vec = sum_masked_reduce(tmp_acc0_vec, tmp0, static_cast<int64_t>(ks0 - 16L));
            }
        }
    }
    #pragma omp parallel num_threads(2)
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
            {
                auto tmp0 = in_ptr1[static_cast<int64_t>(x0)];
                TORCH_CHECK((0 <= tmp0) && (tmp0 < ks0), "index out of bounds: 0 <= tmp0 < ks0");
                out_ptr0[x0] = in_ptr0[tmp0];
            }
        }
        #pragma omp single
        {
            {
                for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
                {
                    out_ptr0[x0] = atomic_add(&out_ptr0[x0], 1.0f);
                }
            }
        }
    }
}
'''


def test_each_cpp_loop_nest_is_one_combination_of_its_decisions():
    from fuzzaoti.coverage import decisions

    wrapper = "aoti_torch_cpu_bmm_out(buf0, arg0_1, arg1_1); aoti_torch_get_data_ptr(x); " \
              "aoti_torch_proxy_executor_call_function(proxy_executor, 0, 1, int_array, 3, tensor_args);"
    # (Inductor keeps one OpenMP region open across the nests of one thread count: a nest in it
    # is parallel under ``omp for``, not under ``omp single``)
    assert decisions.of_code(wrapper, decisions.cpp_combinations(_CPP_KERNEL)) == ["cpp reduction vec=float tail", "cpp pointwise scalar omp check",
                                                       "cpp pointwise scalar atomic", "extern bmm", "extern proxy"]
    assert decisions.histogram(Counter({"cpp reduction vec=float tail": 2, "cpp pointwise scalar omp check": 1})) == \
        Counter({"cpp:reduction": 2, "cpp:vec=float": 2, "cpp:tail": 2, "cpp:pointwise": 1, "cpp:scalar": 1,
                 "cpp:omp": 1, "cpp:check": 1})


def test_each_members_combinations_are_those_of_the_loop_nests_computing_its_nodes():
    # the guided campaign learns which program of a merged batch took a combination from this
    from fuzzaoti.coverage import decisions

    assert decisions.by_member(decisions.cpp_combinations(_CPP_KERNEL), {"cpp_fused_index_select_sum_0": [[1], [0, 2], [2]]}) == {
        1: ["cpp reduction vec=float tail"], 0: ["cpp pointwise scalar omp check"],
        2: ["cpp pointwise scalar omp check", "cpp pointwise scalar atomic"]}
    # a kernel whose recorded nests do not line up with its code is left out, not guessed at
    assert decisions.by_member(decisions.cpp_combinations(_CPP_KERNEL), {"cpp_fused_index_select_sum_0": [[1]]}) == {}


def test_a_triton_kernels_combination_names_its_heuristic_hint_and_index_width():
    from fuzzaoti.coverage import decisions

    source = ("@triton_heuristics.persistent_reduction(\n    size_hints={'x': 64, 'r0_': 128},\n"
              "    reduction_hint=ReductionHint.INNER,\n)\n@triton.jit\ndef triton_per_fused_sum_0(in_ptr0, out_ptr0):\n"
              "    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK\n"
              "    tl.device_assert((0 <= tmp4) & (tmp4 < 7), 'index out of bounds')\n")
    assert decisions.triton_kernel(source) == "triton persistent_reduction inner int64 assert"
    # an int64 tensor's load is no 64-bit indexing, nor the metadata's atomic_add_found an atomic
    pointwise = ("@triton_heuristics.pointwise(\n    inductor_meta={'atomic_add_found': False},\n)\n"
                 "def k(in_ptr0):\n    xoffset = tl.program_id(0) * XBLOCK\n    tmp0 = tl.load(in_ptr0 + x0).to(tl.int64)\n")
    assert decisions.triton_kernel(pointwise) == "triton pointwise int32"


def test_a_malformed_decisions_row_in_a_corpus_is_a_one_line_error(tmp_path):
    import sqlite3

    db = str(tmp_path / "c.db")
    with Corpus.open(db, create=True) as corpus:
        cid = corpus.start_campaign("cpu", "aoti", None, 0, {}, {})
        corpus.add_lines(cid, [("torch/_inductor/ir.py", 10)], 5.0)
        corpus.add_decisions(cid, {"cpp pointwise scalar": 1}, 5.0)
    with sqlite3.connect(db) as conn:
        conn.execute("update compiler_decisions set kernels = 'many'")
    result = CliRunner().invoke(main, ["stats", "--corpus", db])
    assert result.exit_code == 2 and "compiler_decisions of campaign 1 holds a malformed row" in result.output
    assert "Traceback" not in result.output
