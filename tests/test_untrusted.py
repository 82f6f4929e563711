"""A corpus, a shard or a program file from someone else is data: it cannot run code or take the
machine. The loader refuses, in one line, anything fuzzaoti would not itself have made (a property
test mutates valid programs), and a program whose configs name a C++ compiler of its own is
refused by ``check``, ``replay``, ``corpus merge`` and the pytest plugin before anything runs."""

import ast
import glob
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fuzzaoti.cli import main
from fuzzaoti.compile import render
from fuzzaoti.corpus import Corpus
from fuzzaoti.errors import InvalidProgram
from fuzzaoti.findings.repro import file_case
from fuzzaoti.model.configs import ALLOWED_CONFIGS
from fuzzaoti.model.ops import EMBEDDING_BAG_MODES, HELPERS, OPS, SCATTER_REDUCTIONS
from fuzzaoti.model.dtypes import DTYPES
from fuzzaoti.model.program import VALUE_KINDS, Program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: valid program files to mutate: every known entry and test data file
BASES = [json.load(open(path)) for path in sorted(glob.glob(os.path.join(ROOT, "fuzzaoti/corpus/known/*.json"))
                                                  + glob.glob(os.path.join(ROOT, "tests/data/*.json")))]
#: Inductor options that name programs, paths or code: what a hostile program file would set
HOSTILE_CONFIGS = ["cpp.cxx", "cuda.cutlass_dir", "aot_inductor.output_path", "debug_dir",
                   "aot_inductor.package_cpp_only", "post_grad_custom_post_pass", "joint_custom_pre_pass",
                   "triton.cudagraphs", "compile_threads", "max_autotune_gemm_backends", "max_autotune", "__class__"]
_DEEP, _HUGE = "\x00deep\x00", "\x00huge\x00"  # placeholders for text a JSON encoder cannot write
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=2**62, max_value=2**80),
                    st.floats(), st.text(max_size=30), st.sampled_from(
                        ["__import__('os').system('touch x')", "x0); import os; (", "t0.__class__", "d0*d0",
                         "-d0", "float32", "cpp.cxx", "/tmp/x.sh", "\n", "", "relu", "index", ":, " * 7,
                         _DEEP, _HUGE]))
VALUES = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                                                         max_size=3), max_leaves=8)


def _paths(value, path=()):
    """Every path into a JSON value (the root included)."""
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from _paths(child, path + (key,))


def _at(value, path):
    for key in path:
        value = value[key]
    return value


@st.composite
def mutated(draw):
    """A valid program file's JSON, changed in one to four places: a value replaced (names,
    shapes, attrs, configs, values, runs, dtypes, ops), a key dropped or added, deep nesting and
    numbers of thousands of digits among the replacements; as text, with or without its runs."""
    data = json.loads(json.dumps(draw(st.sampled_from(BASES))))
    data = {"program": data["program"], "runs": data.get("runs", [])} if "program" in data else data
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(list(_paths(data))))
        kind = draw(st.sampled_from(["replace", "replace", "drop", "add", "configs", "op", "name"]))
        if kind == "configs":
            program = data.get("program", data) if isinstance(data, dict) else None
            if isinstance(program, dict):
                program["configs"] = draw(st.dictionaries(st.sampled_from(HOSTILE_CONFIGS + sorted(ALLOWED_CONFIGS)),
                                                          VALUES | st.sampled_from([True, "TRITON", 1]), max_size=3))
            continue
        if not path:
            data = draw(VALUES) if kind == "replace" else data
            continue
        parent, key = _at(data, path[:-1]), path[-1]
        if kind == "drop":
            del parent[key]
        elif kind == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(VALUES)
        elif kind == "op":
            parent[key] = draw(st.sampled_from(sorted(OPS)) | st.text(max_size=12))
        elif kind == "name":
            parent[key] = draw(st.text(max_size=12) | st.sampled_from(["__class__", "os", "x0.__dict__", "t0"]))
        else:
            parent[key] = draw(VALUES)
    text = json.dumps(data)
    return text.replace(json.dumps(_DEEP), "[" * 100_000 + "]" * 100_000).replace(json.dumps(_HUGE), "9" * 5000)


def _load(text: str):
    """The loader of a program file's text: its case (program and runs)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise InvalidProgram("not a JSON object")
    return file_case(data)


def _assert_harmless(program: Program) -> None:
    """The rendered source calls only torch and the ops' own code: no import, no dunder, no name
    but torch's, the module's and the program's own, no string but those names and the helpers'."""
    for key, value in program.configs:
        assert any(type(value) is type(v) and value == v for v in ALLOWED_CONFIGS[key]), (key, value)
    names = {"torch", "self", "Dim", "zip", "p", "q", "t", "lo", "hi", "v", *HELPERS, "super", "make_tensor", "swapped"}
    names |= {d.name for d in program.dims} | {i.name for i in program.leaves} | {n.name for n in program.nodes}
    words = names | set(DTYPES) | set(VALUE_KINDS) | {"cpu"}  # (make_tensor's dtype, value kind and device)
    words |= set(EMBEDDING_BAG_MODES) | set(SCATTER_REDUCTIONS)  # (the only string attrs an op takes)
    for node in ast.walk(ast.parse(render.program_source(program))):
        assert not isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Lambda, ast.Try,
                                     ast.With, ast.While, ast.Delete)), ast.dump(node)
        if isinstance(node, ast.Name):
            assert node.id in names, node.id
        if isinstance(node, ast.Attribute):  # (but the module's own super().__init__())
            assert not node.attr.startswith("__") or (node.attr == "__init__" and isinstance(node.value, ast.Call)
                                                      and getattr(node.value.func, "id", None) == "super"), node.attr
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert node.value in words or any(node.value in s for s in HELPERS.values()), node.value


#: a JSON object where an attr's string belongs (unhashable: ``{} in {"a"}`` raises TypeError)
_UNHASHABLE_ATTR = json.dumps({"version": 1, "dims": [{"name": "d0", "min": 2, "max": 9, "hint": 4, "kind": "range"}],
                               "inputs": [{"name": "x0", "dtype": "float32", "shape": ["d0", 3]},
                                          {"name": "x1", "dtype": "int64", "shape": [2],
                                           "values": {"kind": "int", "low": 0, "high": 3}}],
                               "nodes": [{"name": "t0", "op": "index", "args": ["x0", "x1"], "attrs": {"prefix": {}}}],
                               "outputs": ["t0"], "configs": {}})


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(mutated())
@example(_UNHASHABLE_ATTR)
def test_a_mutated_program_file_is_refused_in_one_line_or_is_harmless(text):
    try:
        case = _load(text)
    except InvalidProgram as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    except (ValueError, RecursionError):  # json.loads's own refusal (the CLI's reader turns it into one line)
        return
    _assert_harmless(case.program)


def test_the_programs_mutated_are_valid_as_given():
    assert len(BASES) >= 10  # (a mutation of an invalid base would prove nothing)
    for data in BASES:
        _assert_harmless(file_case(data).program)


# ---- a C++ compiler named by a program, through every door ---------------------------------------

@pytest.fixture
def hostile(tmp_path, bmm_index_program):
    """A script that writes a marker file if it is ever run, and a program naming it as ``cpp.cxx``."""
    marker, script = tmp_path / "ran", tmp_path / "cxx.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    script.chmod(0o755)
    data = {**bmm_index_program.to_dict(), "configs": {"cpp.cxx": str(script)}}
    return data, marker


def _refused(result, marker) -> str:
    """The one error line of a refused command (exit 2, the script never run)."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'cpp.cxx'" in lines[0], result.stderr
    assert not marker.exists()
    return lines[0]


def _hostile_corpus(path, data, valid_program: Program) -> str:
    """A corpus whose one finding's program was edited (as a hostile shard would be) to ``data``."""
    with Corpus.open(str(path), create=True) as corpus:
        cid = corpus.start_campaign("cpu", "aoti", None, 0, {}, {})
        corpus.record_failure(cid, "cpu", None, "run/crash/x", {"stage": "run", "symptom": "crash"},
                              valid_program.to_json(), [{"env": valid_program.hint_env(), "seed": 0}], {"torch": "x"})
    conn = sqlite3.connect(str(path))
    conn.execute("update findings set program = ?", [json.dumps(data)])
    conn.commit()
    conn.close()
    return str(path)


def test_check_refuses_a_program_naming_its_own_compiler(tmp_path, hostile):
    data, marker = hostile
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["check", "--device", "cpu", str(path), "--record", str(tmp_path / "r.db")])
    assert "is not one fuzzaoti draws" in _refused(result, marker)
    assert not (tmp_path / "r.db").exists()  # nothing written


def test_replay_refuses_a_stored_program_naming_its_own_compiler(tmp_path, hostile, bmm_index_program):
    data, marker = hostile
    db = _hostile_corpus(tmp_path / "c.db", data, bmm_index_program)
    _refused(CliRunner().invoke(main, ["replay", "1", "--corpus", db]), marker)
    with Corpus.open(db) as corpus:
        assert not list(corpus.db["replays"].rows)


def test_merge_refuses_a_shard_holding_such_a_program_and_writes_nothing(tmp_path, hostile, bmm_index_program):
    data, marker = hostile
    db = _hostile_corpus(tmp_path / "shard.db", data, bmm_index_program)
    result = CliRunner().invoke(main, ["corpus", "merge", db, "-o", str(tmp_path / "all.db")])
    assert "finding 1" in _refused(result, marker)
    assert not (tmp_path / "all.db").exists()


def test_the_pytest_plugin_refuses_such_a_corpus_before_collecting(tmp_path, hostile, bmm_index_program):
    data, marker = hostile
    db = _hostile_corpus(tmp_path / "c.db", data, bmm_index_program)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--fuzzaoti-corpus", db,
                           "--fuzzaoti-record"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "'cpp.cxx'" in done.stderr, done.stderr
    assert not marker.exists()
    with Corpus.open(db) as corpus:
        assert not list(corpus.db["replays"].rows)


# ---- sizes: weighed before anything is allocated ---------------------------------------------------

def _big_file(tmp_path, size: int, top: int | None = None) -> str:
    """An int8 relu over ``d0`` elements, checked at ``d0 = size``."""
    program = {"version": 1, "dims": [{"name": "d0", "min": 2, "max": top, "hint": 4, "kind": "range"}],
               "inputs": [{"name": "x0", "dtype": "int8", "shape": ["d0"], "values": {"kind": "normal"}}],
               "nodes": [{"name": "t0", "op": "relu", "args": ["x0"], "attrs": {}}], "outputs": ["t0"], "configs": {}}
    path = tmp_path / f"big-{size}.json"
    path.write_text(json.dumps({"program": program, "runs": [{"env": {"d0": size}, "seed": 0}]}))
    return str(path)


def test_check_refuses_a_run_over_the_budget_before_it_starts_a_worker(tmp_path):
    result = CliRunner().invoke(main, ["check", _big_file(tmp_path, 10**6), "--max-bytes", "100000"])
    assert result.exit_code == 2 and "over the budget of 100000" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "worker" not in result.output


def test_check_refuses_a_run_past_the_work_bound_whatever_the_budget(tmp_path):
    # 2**40 elements: no --max-bytes lets it through to the allocator
    result = CliRunner().invoke(main, ["check", _big_file(tmp_path, 2**40, 2**41), "--max-bytes", str(2**60)])
    assert result.exit_code == 2 and "elements, past the" in result.stderr, result.stderr


def test_a_run_outside_its_dims_range_is_refused_on_load(tmp_path):
    result = CliRunner().invoke(main, ["check", _big_file(tmp_path, 2**40)])  # no max: fuzzaoti feeds up to 2**34
    assert result.exit_code == 2 and "outside its range [2, 17179869184]" in result.stderr, result.stderr
