"""The known-bug list: matching findings are 'known', not 'new', and cost no shrink or triage."""

import glob
import json
import os

import pytest
from click.testing import CliRunner

from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus
from fuzzaoti.errors import KnownListError
from fuzzaoti.corpus.known_bugs import _BUILTIN_DIR, KnownList, builtin_bugs, read_user_file


def _fuzz(db, *extra):
    args = ["fuzz", "--backend", "fake", "--max-batches", "3", "--batch-size", "8", "--shrink-minutes", "0",
            "--corpus", db, *extra]
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_user_file_globs_and_notes(tmp_path):
    path = tmp_path / "known.txt"
    path.write_text("# a comment\n\ncompare/mismatch/values via *gather*  # pytorch#1 (fixed in 2.99)\n"
                    "compile/exception/KeyError: 'max'\n")
    bugs = read_user_file(str(path))
    assert [b.note for b in bugs] == ["pytorch#1 (fixed in 2.99)", "known.txt:4"]
    listed = KnownList(bugs)
    assert listed.match("compare/mismatch/values via bmm+gather").note.startswith("pytorch#1")
    assert listed.match("compare/mismatch/values via bmm") is None


def test_a_line_that_is_no_signature_pattern_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "known.txt"
    path.write_text("compare/mismatch/values\njust words\n")
    with pytest.raises(KnownListError, match=r"known.txt:2"):
        read_user_file(str(path))


def test_the_bugs_fuzzaoti_found_are_built_in():
    assert any("_process_derived_dim_roots" in b.pattern for b in builtin_bugs())


def test_an_entry_with_several_patterns_matches_each_form_of_its_bug():
    known = KnownList(builtin_bugs())
    for form in ("values", "nonfinite"):
        bug = known.match(f"compare/mismatch/{form} via arange_index+bmm")
        assert bug is not None and bug.source == "inductor-triton-int32-index-overflow.json"
    assert known.match("compare/mismatch/values via bmm") is None


def test_a_campaign_stores_matching_failures_as_known(tmp_path, fake_fault):
    fake_fault("*:wrong")  # (every program: whatever one Hypothesis release draws)
    db = str(tmp_path / "c.db")
    (tmp_path / "fuzzaoti-known.txt").write_text("compare/*via*  # upstream#42\n")  # found beside the corpus
    result = _fuzz(db)
    assert result.exit_code == 0, result.output
    assert "known finding" in result.output and "NEW finding" not in result.output
    with Corpus.open(db) as corpus:
        findings = list(corpus.findings())
        (campaign,) = corpus.campaigns()
    assert findings and all(f.status == "known" and f.known_note == "upstream#42" for f in findings)
    assert campaign.counts["new_findings"] == 0


def test_known_command_marks_stored_findings(tmp_path, fake_fault):
    fake_fault("*:wrong")
    db = str(tmp_path / "c.db")
    assert _fuzz(db).exit_code == 0
    with Corpus.open(db) as corpus:
        assert {f.status for f in corpus.findings()} == {"new"}
    listed = tmp_path / "mine.txt"
    listed.write_text("compare/mismatch/values via *  # upstream#7\ncompare/unchecked_index/*  # upstream#7\n")
    result = CliRunner().invoke(main, ["known", "--corpus", db, "--known", str(listed)], catch_exceptions=False)
    assert "newly marked known" in result.output
    with Corpus.open(db) as corpus:
        assert {f.status for f in corpus.findings()} == {"known"}
    shown = CliRunner().invoke(main, ["show", "1", "--corpus", db], catch_exceptions=False).output
    assert "known upstream: upstream#7" in shown


def test_a_missing_known_file_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit) as exc:
        main.main(["fuzz", "--backend", "fake", "--corpus", str(tmp_path / "c.db"), "--known",
                   str(tmp_path / "nope.txt")], prog_name="fuzzaoti")
    assert exc.value.code == 2
    assert not (tmp_path / "c.db").exists()


def test_every_builtin_pattern_matches_its_own_case():
    from fuzzaoti.corpus.known_entry import load_entry

    for path in glob.glob(os.path.join(_BUILTIN_DIR, "*.json")):
        data = load_entry(path)
        bugs = [b for b in builtin_bugs() if b.source == os.path.basename(path)]
        if data.patterns == ():  # kept as data only: its signature is shared by other causes
            assert not bugs, path
            continue
        assert any(b.matches(data.signature) for b in bugs), path


def test_every_builtin_entry_names_the_torch_range_it_fails_in():
    from fuzzaoti import compat
    from fuzzaoti.corpus.known_bugs import builtin_entries, expected_result

    for entry in builtin_entries():
        assert compat.release(entry.fails_from) >= (2, 11), entry.name
        if entry.fixed_in:
            assert compat.release(entry.fixed_in) > compat.release(entry.fails_from), entry.name
    tiling = {e.name: e for e in builtin_entries()}["inductor-tiling-derived-dim-assert"]  # fails 2.11, fixed in 2.13
    assert [expected_result(tiling, v) for v in ("2.10.0", "2.11.0+cu130", "2.12.1", "2.13.0+cpu")] == \
        ["unknown", "fail", "fail", "pass"]


def _results(texts):
    """Rung results from the text ``fuzzaoti triage`` prints for them."""
    from fuzzaoti.check.verdict import RungResult

    return {rung: RungResult.from_text(text) for rung, text in texts.items()}


def _family_finding(tmp_path, device="cuda", d0=2**28, inductor="passes", bounded="passes", aoti="FAILS (same bug)",
                    dtype="int8"):
    """A stored, triaged finding: the amax member of the int32-from-hint family (the H200's,
    seed 4120), its failing run at ``d0`` (2**28 rows of 8: 2**31 elements)."""
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values

    program = Program((DimSpec("d0", 3, 2**34, 3, "auto"),),
                      (InputSpec("x0", dtype, ("d0", 8), Values("int", -100, 100)),),
                      (Node("t0", "amax", ("x0",), (("dim", 0),)),), ("t0",)).validate()
    corpus = Corpus.open(str(tmp_path / f"c{d0}{device}{inductor}{bounded}{len(aoti)}{dtype}.db"), create=True)
    fid, _ = corpus.record_failure(None, device, None, "run/illegal_memory_access/AcceleratorError: x",
                                   {"stage": "run", "symptom": "illegal_memory_access"}, program.to_json(),
                                   [{"env": {"d0": 3}, "seed": 0}, {"env": {"d0": d0}, "seed": 1}], {})
    corpus.set_triage(fid, _results({"eager": "passes", "aot_eager": "passes", "inductor": inductor, "aoti": aoti}),
                      _results({"bounded Dim max": bounded, "static shapes": "passes"}))
    return corpus, fid


def test_a_triaged_finding_with_the_familys_evidence_is_marked_its_member(tmp_path):
    from fuzzaoti.corpus.known_bugs import mark_member

    corpus, fid = _family_finding(tmp_path)
    note = mark_member(corpus, fid, lambda line: None)
    assert note.startswith("same root cause as aoti-unbounded-dim-int32-indexing-from-hint")
    assert (corpus.finding(fid).status, corpus.finding(fid).known_note) == ("known", note)
    # each piece of evidence is needed: the device, the ladder, the remedy, the size past 2**31
    for changes in ({"device": "cpu"}, {"inductor": "FAILS (same bug)"}, {"bounded": "FAILS (same bug)"},
                    {"d0": 2**28 - 1}, {"aoti": "FAILS differently: run/exception/RuntimeError: x"}):
        corpus, fid = _family_finding(tmp_path, **changes)
        assert mark_member(corpus, fid, lambda line: None) is None, changes
        assert corpus.finding(fid).status == "new"


def test_a_wrapped_address_that_faults_on_one_run_and_reads_wrong_values_on_another_is_one_member(tmp_path):
    # the H100's sum -> relu of a bf16 (d, 64), session 21: wrong values from row 2**25 (2**31
    # elements) in the campaign, an illegal memory access when triage's AOTI rung ran it again
    from fuzzaoti.corpus.known_bugs import mark_member

    for aoti in ("FAILS differently: run/illegal_memory_access/AcceleratorError: CUDA error: an illegal memory "
                 "access was encountered", "FAILS differently: compare/mismatch/values via amax"):
        corpus, fid = _family_finding(tmp_path, aoti=aoti)
        assert mark_member(corpus, fid, lambda line: None) is not None, aoti



def test_a_cpu_int8_amax_that_inductor_gets_wrong_too_is_a_member_of_the_inactive_lanes_bug(tmp_path):
    # pytorch#191499's family: a wrong value on the CPU shares its signature with every other
    # wrong value of no matmul or indexing op, so the rule asks for the op and the dtype as well
    from fuzzaoti.corpus.known_bugs import mark_member

    corpus, fid = _family_finding(tmp_path, device="cpu", d0=40, inductor="FAILS (same bug)")
    note = mark_member(corpus, fid, lambda line: None)
    assert note.startswith("same root cause as inductor-cpu-int8-max-reduction-inactive-lanes"), note
    for changes in ({"dtype": "int32"}, {"inductor": "passes"}, {"device": "cuda", "d0": 40}):
        evidence = {"device": "cpu", "d0": 40, "inductor": "FAILS (same bug)", **changes}
        corpus, fid = _family_finding(tmp_path, **evidence)
        assert mark_member(corpus, fid, lambda line: None) is None, changes


def test_a_cuda_write_lost_to_the_aligned_copy_is_a_member_only_when_the_written_input_moved(tmp_path):
    # a wrong value shares its signature with every other one: the rule asks that the input it
    # writes into was aligned at export and not at the run (offset_at_run), on CUDA
    from fuzzaoti.corpus.known_bugs import mark_member
    from fuzzaoti.model.program import InputSpec, Node, Program

    def finding(layout, device="cuda", contiguous="passes"):
        program = Program((), (InputSpec("x0", "float32", (20,), layout=layout), InputSpec("x1", "float32", (20,))),
                          (Node("t0", "mul_", ("x0", "x1")),), ("t0",)).validate()
        corpus = Corpus.open(str(tmp_path / f"{layout}{device}{contiguous[:4]}.db"), create=True)
        fid, _ = corpus.record_failure(None, device, None, "compare/mismatch/values", {"stage": "compare",
                                       "symptom": "mismatch"}, program.to_json(), [{"env": {}, "seed": 0}], {})
        corpus.set_triage(fid, _results({"eager": "passes", "aot_eager": "passes", "inductor": "passes",
                                         "aoti": "FAILS (same bug)"}), _results({"contiguous inputs": contiguous}))
        return corpus, fid

    note = mark_member(*finding("offset_at_run"), lambda line: None)
    assert note.startswith("same root cause as aoti-cuda-misaligned-written-input-loses-write"), note
    for changes in ({"layout": "offset"}, {"device": "cpu"}, {"contiguous": "FAILS (same bug)"}):
        assert mark_member(*finding(**{"layout": "offset_at_run", **changes}), lambda line: None) is None, changes


def test_docs_bugs_md_is_generated_from_the_known_entries_and_current():
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(__file__), "..", "scripts", "known_bugs_doc.py")
    done = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_rung_results_are_records_read_back_from_data_and_from_the_text_older_corpora_stored():
    from fuzzaoti.check.verdict import RungResult, Verdict
    from fuzzaoti.errors import CorpusError

    results = [RungResult(Verdict.PASSES), RungResult(Verdict.FAILS_SAME),
               RungResult(Verdict.FAILS_DIFFERENTLY, "run/exception/RuntimeError: x (y)"),
               RungResult(Verdict.INVALID, "eager raised (a) b")]
    for result in results:
        assert RungResult.from_data(result.to_data()) == result
        assert RungResult.from_data(result.render()) == result  # what 'fuzzaoti triage' prints, and 012 stored
    for bad in ("FAILS", {"verdict": "fails"}, {"verdict": "passes", "why": "x"}, 3):
        with pytest.raises(CorpusError):
            RungResult.from_data(bad, "finding 1 triage 'aoti'")


def _entry_file(tmp_path, change):
    from fuzzaoti.corpus.known_bugs import _BUILTIN_DIR

    data = json.load(open(os.path.join(_BUILTIN_DIR, "aoti-unbounded-dim-int32-indexing-from-hint.json")))
    change(data)
    path = tmp_path / "entry.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize("change,named", [
    (lambda d: d.update(pattern="x/y"), "unknown key 'pattern'"),  # (one key per meaning: 'patterns')
    (lambda d: d.update(devices=["cuda"]), "unknown key 'devices'"),  # (the quarantine's: under 'quarantine')
    (lambda d: d.pop("fails_from"), "missing key 'fails_from'"),
    (lambda d: d.update(patterns="x/y"), "'patterns' must be a list"),
    (lambda d: d.update(device="gpu"), "'device' is cpu or cuda"),
    (lambda d: d["quarantine"].update(device=["cuda"]), "'quarantine': unknown key 'device'"),
    (lambda d: d["members"]["ladder"].update(aoti="FAILS (same bug)"), "'members' 'ladder' 'aoti'"),
    (lambda d: d["members"].update(reach={"elements": "2**31"}), "'members' 'reach'"),
])
def test_a_known_entry_with_a_wrong_key_or_value_is_refused_naming_its_file_and_key(tmp_path, change, named):
    from fuzzaoti.corpus.known_entry import load_entry
    from fuzzaoti.errors import KnownListError

    path = _entry_file(tmp_path, change)
    with pytest.raises(KnownListError) as refused:
        load_entry(path)
    assert str(refused.value).startswith(path) and named in str(refused.value), str(refused.value)
    assert load_entry(_entry_file(tmp_path, lambda d: None)).members.reach == {"elements": 2**31}  # (as shipped)


def test_a_members_rule_asks_for_a_rungs_verdict_by_kind_and_a_different_failure_by_its_signature():
    from fuzzaoti.check.verdict import RungResult, Verdict, Wanted

    want = Wanted.from_rule({"verdicts": ["fails_same", "fails_differently"], "differently": ["run/illegal_memory_access*"]},
                            "x")
    assert want.fits(RungResult(Verdict.FAILS_SAME))
    assert want.fits(RungResult(Verdict.FAILS_DIFFERENTLY, "run/illegal_memory_access/AcceleratorError: CUDA"))
    assert not want.fits(RungResult(Verdict.FAILS_DIFFERENTLY, "compare/mismatch/values via amax"))
    assert not want.fits(RungResult(Verdict.PASSES)) and not want.fits(None)
    assert Wanted.from_rule("passes", "x").fits(RungResult(Verdict.PASSES))


def test_a_known_case_that_fails_as_one_of_its_patterns_fails_as_expected():
    # a crash thrown in several threads prints its message or loses it: either is the bug
    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.findings.regression import AS_EXPECTED, FAILS_DIFFERENTLY, judge, known_subjects

    (subject,) = [s for s in known_subjects("2.15.0") if s.name == "inductor-cpu-parallel-bounds-check-aborts"]

    def crash(stderr):
        return judge(subject, Outcome("run", "crash", "worker died with signal SIGABRT", stderr=stderr)).kind

    assert crash("terminate called recursively\n") == AS_EXPECTED
    assert crash("terminate called after throwing an instance of 'c10::Error'\n"
                 "  what():  index out of bounds: 0 <= tmp7 < ks0\n") == AS_EXPECTED
    assert crash("Segmentation fault (core dumped)\n") == FAILS_DIFFERENTLY
