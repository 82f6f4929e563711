from fuzzaoti.model.case import Case
from fuzzaoti.model.program import DimSpec
from fuzzaoti.findings.triage import workaround_cases


def test_workarounds_are_the_seed_remedies(five_op_program):
    case = Case(five_op_program, (((("b", 70000), ("n", 33)), 5),))
    remedies = dict(workaround_cases(case))
    bounded = remedies["bounded Dim max"].program.dim["b"]
    assert bounded.kind == "range" and bounded.max == 70000
    hinted = remedies["exported at the failing size"].program
    assert (hinted.dim["b"].hint, hinted.dim["n"].hint) == (70000, 33) and hinted.dim["b"].max == five_op_program.dim["b"].max
    from_one = five_op_program.with_(dims=(DimSpec("b", 1, None, 6, "auto"), five_op_program.dim["n"]))
    at_one = dict(workaround_cases(Case(from_one, (((("b", 1), ("n", 2)), 5),))))
    assert at_one["exported at the failing size"].program.dim["b"].hint == 2  # export specializes a size of 1
    assert {i.dtype for i in remedies["int64 indices"].program.inputs if i.values.kind == "int"} == {"int64"}
    static = remedies["static shapes"].program
    assert static.dims == () and static.inputs[0].shape == (70000, 33, 4)
    assert static.inputs[2].values.high == 33
    assert "default inductor configs" not in remedies  # it has none to drop
    # every run stays in the bounded range, not only the first (a max below a later run's size
    # made the case invalid in the worker: a harness failure on a GPU campaign)
    two = Case(five_op_program, (((("b", 54), ("n", 33)), 5), ((("b", 128), ("n", 33)), 6)))
    assert dict(workaround_cases(two))["bounded Dim max"].program.dim["b"].max == 128
    Case.from_run_dicts(dict(workaround_cases(two))["bounded Dim max"].program, two.run_dicts())
    chunked = remedies["chunked bmm (static)"].program
    assert [(n.op, n.attr) for n in chunked.nodes if "bmm" in n.op] == [("bmm_chunked", {"size": 32768})]


def test_static_and_chunked_remedies_keep_the_program_valid(five_op_program):
    from fuzzaoti.workers.execute import check_batch
    from fuzzaoti.workers.protocol import Job

    case = Case(five_op_program, (((("b", 3), ("n", 7)), 1),))
    remedies = dict(workaround_cases(case))
    for name in ("static shapes", "chunked bmm (static)"):
        fixed = remedies[name]
        assert check_batch(Job("eager", "cpu", (fixed,)), lambda stage: None).cases[0].symptom == "pass", name
    assert [n.attr for n in remedies["chunked bmm (static)"].program.nodes if n.op == "bmm_chunked"] == [{"size": 2}]


def test_families_group_findings_with_the_same_shrunk_cause_and_remedies(bmm_index_program):
    import json

    from fuzzaoti.corpus.finding import Finding
    from fuzzaoti.findings.families import families

    def finding(fid, program, cured, broke=()):
        remedies = {"int32 indices": "passes" if cured else "FAILS (same bug)", "static shapes": "FAILS (same bug)"}
        return Finding.from_row({
            "id": fid, "signature": "compare/mismatch/x", "device": "cuda", "canary": "", "status": "new",
            "stage": "compare", "symptom": "mismatch", "hits": 1, "program": program.to_json(),
            "runs": json.dumps([{"env": {"b": 2, "n": 3}, "seed": 0}]), "workarounds": json.dumps(remedies),
            "assumptions": json.dumps(list(broke))})

    relu_free = bmm_index_program.with_(nodes=bmm_index_program.nodes[:2], outputs=("t1",))
    site = "8*n <= 2147483647 (torch/_inductor/codegen/simd.py:3000 in can_use_32bit_indexing)"
    other = "Eq(Mod(n, 4), 0) (torch/_inductor/ir.py:470 in is_aligned)"
    groups = families([finding(1, bmm_index_program, True), finding(2, relu_free, True),
                       finding(3, bmm_index_program, False), finding(4, bmm_index_program, True, [site]),
                       finding(5, relu_free, True, [site.replace("8*n", "4*n")]),
                       finding(6, bmm_index_program, True, [other])])
    assert [[f.id for f in members] for members in groups.values()] == [[1, 2], [3], [4, 5], [6]]
    assert "via bmm+index_select; passes with: int32 indices" in next(iter(groups))
    assert list(groups)[2].endswith("breaks Inductor's guards of can_use_32bit_indexing")


def test_each_rung_is_printed_as_soon_as_it_has_its_verdict(tmp_path, five_op_program):
    # a rung is a compile (a minute on a GPU): a triage cut by a 150 s limit on the H100 had
    # printed nothing of the rungs it had done, since every line came after the last check
    from types import SimpleNamespace

    from fuzzaoti.corpus import Corpus
    from fuzzaoti.findings.triage import LADDER, triage_finding

    events = []

    def check(cases, backend=None):
        events.append(f"check {backend or 'aoti'}" if len(cases) == 1 else "check workarounds")
        return [SimpleNamespace(passed=True)] * len(cases)

    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        fid, _ = corpus.record_failure(None, "cpu", None, "compare/mismatch/values via bmm",
                                       {"stage": "compare", "symptom": "mismatch"}, five_op_program.to_json(),
                                       [{"env": {"b": 70000, "n": 33}, "seed": 5}], {})
        triage_finding(corpus, fid, check, lambda line: events.append(line.split()[1]))
    rungs = [event for rung in LADDER for event in (f"check {rung}", rung)]
    assert events[:len(rungs)] == rungs, events
    assert events[len(rungs):len(rungs) + 3] == ["checking", "check workarounds", "bounded"], events
