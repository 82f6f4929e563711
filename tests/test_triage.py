from fuzzaoti.strategies import Case
from fuzzaoti.triage import workaround_cases


def test_workarounds_are_the_seed_remedies(five_op_program):
    case = Case(five_op_program, (((("b", 70000), ("n", 33)), 5),))
    remedies = dict(workaround_cases(case))
    bounded = remedies["bounded Dim max"].program.dim["b"]
    assert bounded.kind == "range" and bounded.max == 70000
    assert {i.dtype for i in remedies["int64 indices"].program.inputs if i.values.kind == "int"} == {"int64"}
    static = remedies["static shapes"].program
    assert static.dims == () and static.inputs[0].shape == (70000, 33, 4)
    assert static.inputs[2].values.high == 33
    assert "default inductor configs" not in remedies  # it has none to drop


def test_static_remedy_keeps_the_program_valid(five_op_program):
    from fuzzaoti.execute import check_batch

    case = Case(five_op_program, (((("b", 3), ("n", 7)), 1),))
    static = dict(workaround_cases(case))["static shapes"]
    job = {"backend": "eager", "device": "cpu", "cases": [{"program": static.program.to_json(), "runs": static.run_dicts()}]}
    assert check_batch(job, lambda stage: None)["cases"][0]["symptom"] == "pass"
