"""Indices eager rejects, fed on purpose (``Values`` kind ``oob``): a run eager refuses is
checked by the compiled model refusing it too; a compiled model that returns outputs there is a
finding of its own symptom, ``unchecked_index``, never a wrong value nor an invalid program."""

import subprocess
import sys

import pytest
import torch

from fuzzaoti.check.signature import signature
from fuzzaoti.compile.render import repro_script
from fuzzaoti.model.case import Case
from fuzzaoti.model.inputs import make_tensor
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
from fuzzaoti.workers.execute import check_batch
from fuzzaoti.workers.protocol import Job



def _side(seed: int, k: int = 1) -> str:
    """Where run seed ``seed`` puts input ``k``'s rejected index: ``past`` the end or ``before`` the start."""
    return "past" if make_tensor("int64", (3,), "oob", 0, 8, seed * 1000 + k, "cpu")[-1] == 8 else "before"


PAST = [{"env": {"d0": n}, "seed": s} for n, s in zip((5, 9), [s for s in range(100) if _side(s) == "past"])]
BEFORE = [{"env": {"d0": n}, "seed": s} for n, s in zip((5, 9), [s for s in range(100) if _side(s) == "before"])]
RUNS = PAST


def _take(kind="oob", negative=False) -> Program:
    """index_select of rows of x0 (d0, 4) by x1 (3,), then a relu."""
    low = "-d0" if negative else 0
    return Program((DimSpec("d0", 2, 64, 8),),
                   (InputSpec("x0", "float32", ("d0", 4)), InputSpec("x1", "int64", (3,), Values(kind, low, "d0"))),
                   (Node("t0", "index_select", ("x0", "x1"), (("dim", 0),)), Node("t1", "relu", ("t0",))),
                   ("t1",)).validate()


def test_an_oob_index_is_in_range_but_its_last_element_past_the_end_or_before_the_start():
    drawn = [make_tensor("int64", (3,), "oob", -8, 8, seed, "cpu") for seed in range(40)]
    assert {int(t[-1]) for t in drawn} == {8, -9}  # each side, by a coin of the tensor's own seed
    assert all(((t[:-1] >= -8) & (t[:-1] < 8)).all() for t in drawn)
    assert _take().rejects_indices and not _take("int").rejects_indices


def test_a_compiled_model_that_refuses_as_eager_does_passes(fake_fault):
    (outcome,) = check_batch(Job("fake", "cpu", (Case.from_run_dicts(_take(), RUNS),)), lambda s: None).cases
    assert (outcome.symptom, outcome.runs_checked) == ("pass", 2), outcome.message


def test_a_compiled_model_that_returns_where_eager_raised_is_an_unchecked_index(fake_fault):
    fake_fault("index_select:lenient")
    cases = (Case.from_run_dicts(_take("int"), RUNS), Case.from_run_dicts(_take(), RUNS))  # one batch
    result = check_batch(Job("fake", "cpu", cases), lambda s: None)
    assert result.batch is None and result.cases[0].symptom == "pass"  # its neighbour is judged as ever
    outcome = result.cases[1]
    assert (outcome.stage, outcome.symptom) == ("compare", "unchecked_index"), outcome.message
    assert outcome.message.startswith("eager raised IndexError") and outcome.env == {"d0": 5}
    assert signature(outcome, _take()).startswith("compare/unchecked_index/eager raised IndexError")
    assert signature(outcome, _take()).endswith(" via index_select")


@pytest.mark.aoti
def test_real_aoti_refuses_an_index_past_the_end_as_eager_does(tmp_path):
    cases = (Case.from_run_dicts(_take(), RUNS), Case.from_run_dicts(_take(negative=True), RUNS))
    result = check_batch(Job("aoti", "cpu", cases), lambda s: None)
    assert [(o.symptom, o.runs_checked) for o in result.cases] == [("pass", 2)] * 2, \
        [o.message[:300] for o in result.cases]
    script = tmp_path / "repro.py"
    script.write_text(repro_script(_take(), "cpu", [({"d0": 5}, 0)]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "raises as eager does" in done.stdout, done.stdout + done.stderr[-2000:]


def test_a_rejected_index_is_validated_as_an_int_one():
    from fuzzaoti.errors import InvalidProgram

    bad = _take().to_dict()
    bad["inputs"][1]["values"]["high"] = None
    with pytest.raises(InvalidProgram, match="int values need low and high"):
        Program.from_dict(bad)
    assert torch.equal(make_tensor("int64", (3,), "oob", 0, 8, 4, "cpu"), make_tensor("int64", (3,), "oob", 0, 8, 4, "cpu"))


def test_show_names_an_input_s_layout_its_rejected_index_and_the_module_state(tmp_path):
    from click.testing import CliRunner

    from fuzzaoti.cli import main
    from fuzzaoti.corpus.store import Corpus
    from fuzzaoti.model.program import StateSpec

    program = _take().with_(inputs=(InputSpec("x0", "float32", ("d0", 4), layout="offset_at_run"),
                                    _take().inputs[1]),
                            state=(StateSpec("w0", "float32", (4,), kind="parameter"),)).validate()
    db = str(tmp_path / "c.db")
    corpus = Corpus.open(db, create=True)
    corpus.record_failure(None, "cpu", None, "compare/unchecked_index/x", {"stage": "compare",
                          "symptom": "unchecked_index"}, program.to_json(), PAST[:1], {})
    shown = CliRunner().invoke(main, ["show", "1", "--corpus", db], catch_exceptions=False).output
    assert "x0:float32['d0', 4] (offset_at_run)" in shown and "x1:int64[3] (an index eager rejects)" in shown
    assert "module state: w0:float32[4] parameter" in shown


def test_an_index_only_dead_code_reads_is_no_rejected_index():
    # Inductor drops an embedding_bag whose result no output uses, and its bounds check with
    # it: a campaign reported that as an unchecked index. Such a program is invalid instead.
    dead = _take().with_(nodes=_take().nodes + (Node("t2", "neg", ("x0",)),), outputs=("t2",)).validate()
    assert not dead.rejects_indices and "x1" not in dead.live()
    (outcome,) = check_batch(Job("fake", "cpu", (Case.from_run_dicts(dead, PAST),)), lambda s: None).cases
    assert (outcome.stage, outcome.symptom) == ("eager", "invalid"), outcome.message
    written = Program((DimSpec("d0", 2, 64, 8),),  # a write into an input shows, even unreturned
                      (InputSpec("x0", "float32", ("d0", 4)), InputSpec("x1", "int64", (3,), Values("oob", 0, "d0")),
                       InputSpec("x2", "float32", (3, 4))),
                      (Node("t0", "index_put_", ("x0", "x1", "x2")), Node("t1", "neg", ("x2",))), ("t1",))
    assert written.validate().rejects_indices
