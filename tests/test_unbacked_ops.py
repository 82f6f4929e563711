"""The ops users export around bmm and indexing that ``strategies._around`` added last: topk
indices, embedding bags, one-hot, bucketize, and results of a length read from data
(``masked_select``, ``nonzero``, ``repeat_interleave``: unbacked sizes), each exported and
compiled for real on the CPU, as fixed programs (no draw of one Hypothesis release)."""

import pytest

from fuzzaoti.model.case import Case
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
from fuzzaoti.model.shapes import tensors
from fuzzaoti.workers.execute import check_batch
from fuzzaoti.workers.protocol import Job

D0 = (DimSpec("d0", 2, 64, 8),)
RUNS = [{"env": {"d0": n}, "seed": s} for s, n in enumerate((3, 17, 33))]


def _program(inputs, nodes) -> Program:
    return Program(D0, tuple(inputs), tuple(nodes), (nodes[-1].name,)).validate()


def _summed(node: Node) -> list[Node]:
    return [node, Node("t9", "sum", (node.name,), (("dim", 0),))]


PROGRAMS = {
    "topk_indices": _program([InputSpec("x0", "int64", ("d0", 6), Values("perm"))],
                             [Node("t0", "topk_indices", ("x0",), (("dim", 1), ("k", 3)))]),
    "embedding_bag": _program([InputSpec("w0", "float32", (10, "d0")),
                               InputSpec("i0", "int64", ("d0", 4), Values("int", 0, 10))],
                              [Node("t0", "embedding_bag", ("w0", "i0"), (("mode", "max"),))]),
    "one_hot": _program([InputSpec("i0", "int64", ("d0",), Values("int", 0, 5))],
                        [Node("t0", "one_hot", ("i0",), (("classes", 5),))]),
    "bucketize": _program([InputSpec("b0", "float32", (7,)), InputSpec("v0", "float32", ("d0", 3))],
                          [Node("t0", "bucketize", ("b0", "v0"), (("right", True),))]),
    "masked_select": _program([InputSpec("x0", "float32", ("d0", 5)), InputSpec("m0", "bool", ("d0", 5), Values("bool"))],
                              _summed(Node("t0", "masked_select", ("x0", "m0")))),
    "nonzero": _program([InputSpec("m0", "bool", ("d0", 3), Values("bool"))], _summed(Node("t0", "nonzero", ("m0",)))),
    "repeat_interleave": _program([InputSpec("x0", "float32", ("d0", 4)), InputSpec("r0", "int64", ("d0",), Values("int", 0, 4))],
                                  _summed(Node("t0", "repeat_interleave", ("x0", "r0")))),
}


def test_the_byte_model_bounds_each_result_of_a_length_read_from_data():
    shapes = {op: tensors(p, {"d0": 10})["t0"].shape for op, p in PROGRAMS.items()}
    assert shapes["masked_select"] == (50,) and shapes["nonzero"] == (30, 2)
    assert shapes["repeat_interleave"] == (30, 4) and shapes["one_hot"] == (10, 5)


@pytest.mark.aoti
def test_each_op_compiles_and_matches_eager_in_one_batch():
    cases = tuple(Case.from_run_dicts(p, RUNS) for p in PROGRAMS.values())
    result = check_batch(Job("aoti", "cpu", cases), lambda s: None)
    assert {op: o.symptom for op, o in zip(PROGRAMS, result.cases)} == dict.fromkeys(PROGRAMS, "pass"), \
        [o.message[:300] for o in result.cases]
    assert all(o.runs_checked == len(RUNS) for o in result.cases)
