import json
from dataclasses import replace

import pytest

from fuzzaoti.errors import InvalidProgram
from fuzzaoti.model.program import SCHEMA_VERSION, Program


def test_json_round_trip(bmm_index_program):
    text = bmm_index_program.to_json()
    again = Program.from_json(text)
    assert again == bmm_index_program
    assert again.id == bmm_index_program.id


def _mutated(program, mutate):
    data = program.to_dict()
    mutate(data)
    return json.dumps(data)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d.update(version=SCHEMA_VERSION + 1), "schema version"),
    (lambda d: d["nodes"][0].update(op="system"), "unknown op"),
    (lambda d: d["nodes"][0].update(args=["x0", "nope"]), "undefined tensor"),
    (lambda d: d["inputs"][0].update(shape=["zz", 3]), "undeclared dim"),
    (lambda d: d["inputs"][0].update(dtype="complex32"), "unknown dtype"),
    (lambda d: d["dims"][0].update(max=0), "max"),
    (lambda d: d["dims"][0].update(hint=1000), "hint"),
    (lambda d: d.update(outputs=[]), "no outputs"),
    (lambda d: d["nodes"][1]["attrs"].update(dim="0; import os"), "bad index_select attr"),
    (lambda d: d["nodes"][0].update(name="__import__"), "identifier"),
    (lambda d: d.pop("dims"), "malformed"),
])
def test_validation_names_the_problem(bmm_index_program, mutate, message):
    with pytest.raises(InvalidProgram, match=message):
        Program.from_json(_mutated(bmm_index_program, mutate))


def test_not_json():
    with pytest.raises(InvalidProgram, match="not valid JSON"):
        Program.from_json("{nope")


def test_autotuning_programs_compile_with_the_fuzzing_timing_budget(five_op_program):
    from fuzzaoti import compat
    from fuzzaoti.compile.backends.base import AUTOTUNE_BUDGET, inductor_options

    assert inductor_options(five_op_program) == {}
    tuned = replace(five_op_program, configs=(("max_autotune", True), ("max_autotune_gemm_backends", "TRITON")))
    options = inductor_options(tuned)
    assert options["max_autotune"] is True and options["max_autotune_gemm_backends"] == "TRITON"
    assert {k: options[k] for k in AUTOTUNE_BUDGET if k in options} == {
        k: v for k, v in AUTOTUNE_BUDGET.items() if compat.config_supported(k)}


def test_an_older_program_version_is_upgraded_step_by_step(bmm_index_program, monkeypatch):
    # when version 2 comes, version-1 corpora must still read: from_dict runs each UPGRADES step
    from fuzzaoti.model import program as program_module

    def one_to_two(data):  # say version 2 renamed "outputs" to "results"
        data["results"] = data.pop("outputs")
        return data

    def two_to_three(data):  # and version 3 renamed it back
        data["outputs"] = data.pop("results")
        return data

    monkeypatch.setattr(program_module, "SCHEMA_VERSION", 3)
    monkeypatch.setattr(program_module, "UPGRADES", {1: one_to_two, 2: two_to_three})
    old = bmm_index_program.to_dict()
    assert old["version"] == 1
    upgraded = program_module.upgrade(old)
    assert upgraded["version"] == 3 and upgraded["outputs"] == old["outputs"] and "results" not in upgraded
    assert Program.from_dict(old).outputs == bmm_index_program.outputs
    with pytest.raises(InvalidProgram, match="newer than this fuzzaoti reads"):
        program_module.upgrade(dict(old, version=4))
    with pytest.raises(InvalidProgram, match="not a version"):
        program_module.upgrade({k: v for k, v in old.items() if k != "version"})
