import os
import shutil
import tempfile

import pytest

from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


# Where Debian's ccache puts its compiler links (g++ -> ccache): first on PATH, every C++ compile
# AOTI starts goes through ccache.
CCACHE_LINKS = "/usr/lib/ccache"
_CCACHE_OWNER = "FUZZAOTI_TEST_CCACHE_OWNER"


def pytest_configure(config):
    # One ccache shared by every process of this run (xdist workers, fuzzaoti's workers, the
    # suites the plugin tests start), made empty and removed with it: the suite compiles some
    # programs many times (the plugin's canary test one program 7 times), and an identical
    # wrapper compile (4.5 of a CPU compile's 5.5 s of g++) is then a cache hit; an AOTI test
    # took 16 s instead of 26 with it warm. Inductor's precompiled header needs the sloppiness
    # below, or ccache declines every compile that uses it. Without ccache the suite is the same.
    if os.environ.get("CCACHE_DIR") and os.environ.get(_CCACHE_OWNER):
        return  # (a worker of this run: the controller set it up)
    if not (os.path.isdir(CCACHE_LINKS) and shutil.which("ccache")):
        return
    os.environ["CCACHE_DIR"] = tempfile.mkdtemp(prefix="fuzzaoti-tests-ccache-")
    os.environ[_CCACHE_OWNER] = str(os.getpid())
    os.environ["CCACHE_SLOPPINESS"] = "pch_defines,time_macros,include_file_mtime,include_file_ctime"
    os.environ["PATH"] = CCACHE_LINKS + os.pathsep + os.environ.get("PATH", "")


def pytest_unconfigure(config):
    if os.environ.get(_CCACHE_OWNER) == str(os.getpid()):
        shutil.rmtree(os.environ.pop("CCACHE_DIR"), ignore_errors=True)


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
