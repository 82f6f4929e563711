import os

import pytest

from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    # the tests that compile with real AOTI first (the order of the rest kept): they take 5 to
    # 130 s each, and under xdist a long one started last keeps one core busy while the other
    # idles
    items.sort(key=lambda item: item.get_closest_marker("aoti") is None)
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def bmm_index_program() -> Program:
    """bmm on a dynamic batch, then index_select with int64 indices, then relu."""
    return Program(
        dims=(DimSpec("b", 1, 64, 5), DimSpec("n", 2, None, 7)),
        inputs=(
            InputSpec("x0", "float32", ("b", "n", 3)),
            InputSpec("x1", "float32", ("b", 3, 4)),
            InputSpec("i0", "int64", (6,), Values("int", 0, "n")),
        ),
        nodes=(
            Node("t0", "bmm", ("x0", "x1")),
            Node("t1", "index_select", ("t0", "i0"), (("dim", 1),)),
            Node("t2", "relu", ("t1",)),
        ),
        outputs=("t2",),
    ).validate()


@pytest.fixture
def fake_fault(monkeypatch):
    """Set the fake backend's scripted fault for workers started in this test."""
    def set_fault(spec: str) -> None:
        monkeypatch.setenv("FUZZAOTI_FAKE_FAULT", spec)
    yield set_fault
    os.environ.pop("FUZZAOTI_FAKE_FAULT", None)


@pytest.fixture
def five_op_program() -> Program:
    """bmm → index_select → relu → affine → sum, with a half-precision input and a wide dim."""
    return Program(
        dims=(DimSpec("b", 2, None, 6, "auto"), DimSpec("n", 2, 40, 9)),
        inputs=(
            InputSpec("x0", "float16", ("b", "n", 4)),
            InputSpec("x1", "float16", ("b", 4, 5)),
            InputSpec("i0", "int32", (3,), Values("int", 0, "n")),
        ),
        nodes=(
            Node("t0", "bmm", ("x0", "x1")),
            Node("t1", "index_select", ("t0", "i0"), (("dim", 1),)),
            Node("t2", "relu", ("t1",)),
            Node("t3", "affine", ("t2",), (("scale", 2.0), ("shift", 1.0))),
            Node("t4", "sum", ("t3",), (("dim", 2),)),
        ),
        outputs=("t4", "t1"),
    ).validate()
