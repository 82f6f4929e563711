"""Canary faults: deliberate miscompilations injected into a real Inductor, inside the workers.

A canary proves on the user's own machine that the whole loop (generate, compile, check,
shrink, store, replay) catches a real miscompilation. Each one patches a genuine lowering or
codegen step of the installed Inductor; nothing is simulated.

Run any script under a canary with ``python -m fuzzaoti.compile.canaries NAME script.py [args]``.
"""

from __future__ import annotations

import runpy
import sys
from dataclasses import dataclass
from typing import Callable

from fuzzaoti import compat
from fuzzaoti.errors import UnknownName


@dataclass(frozen=True)
class Canary:
    name: str
    summary: str
    install: Callable[[], None]


def _patch_indirect_indexing(offset: Callable[[object, object], object]) -> None:
    proxy = compat.cse_proxy_class()
    original = proxy.indirect_indexing

    def indirect_indexing(self, var, size, check=True, wrap_neg=True):
        index = original(self, var, size, check, wrap_neg)
        return offset(index, size)

    proxy.indirect_indexing = indirect_indexing


def _install_index_shift() -> None:
    import sympy

    # Reads element idx+1 instead of idx, clamped so it stays in bounds: a silent wrong value.
    _patch_indirect_indexing(lambda index, size: sympy.Min(index + 1, size - 1))


def _install_index_wild() -> None:
    # Adds 2**40 elements to every gathered address: a segfault on CPU. A Triton kernel that
    # indexes in int32 gets 2**28 elements instead (times a row stride below 8, an address that
    # still fits its index type, gigabytes past the buffer): an illegal memory access on CUDA
    # (as scripts/bench_restart.py shows on an H100).
    def wild(index, size):
        return index + (2**28 if _kernel_index_dtype() == "tl.int32" else 2**40)

    _patch_indirect_indexing(wild)


def _kernel_index_dtype() -> str | None:
    """The index type of the kernel being generated (Triton's ``tl.int32``/``tl.int64``; None on CPU)."""
    from torch._inductor.virtualized import V

    return getattr(V.kernel, "index_dtype", None)


def _install_bmm_batch_rotate() -> None:
    aten = compat.aten()
    table = compat.lowerings()

    def rotate_batches(mat2):
        # mat2[1:] ++ mat2[:1] along the batch dim, built from Inductor's own lowerings.
        head = table[aten.slice.Tensor](mat2, 0, 0, 1)
        tail = table[aten.slice.Tensor](mat2, 0, 1, 2**62)
        return table[aten.cat.default]([tail, head], 0)

    for key in [k for k in table if getattr(k, "overloadpacket", None) is aten.bmm]:
        original = table[key]

        def bmm(mat1, mat2, *args, _original=original, **kwargs):
            return _original(mat1, rotate_batches(mat2), *args, **kwargs)

        table[key] = bmm


CANARIES: dict[str, Canary] = {
    c.name: c
    for c in [
        Canary("index-shift", "gathers/index loads read element idx+1 (clamped): wrong values",
               _install_index_shift),
        Canary("bmm-batch-rotate", "bmm multiplies batch i of mat1 with batch i+1 of mat2",
               _install_bmm_batch_rotate),
        Canary("index-wild", "gathers/index loads read far past the index (2**40 elements; 2**28 in an "
               "int32-indexed Triton kernel): a crash, an illegal memory access on CUDA",
               _install_index_wild),
    ]
}


def install(name: str | None) -> None:
    """Apply the named canary to this process's Inductor (no-op for ``None``)."""
    if name is None:
        return
    if name not in CANARIES:
        raise UnknownName(f"unknown canary {name!r}; choose from {', '.join(CANARIES)}")
    CANARIES[name].install()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m fuzzaoti.compile.canaries NAME script.py [args...]", file=sys.stderr)
        return 2
    install(argv[0])
    sys.argv = argv[1:]
    runpy.run_path(argv[1], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
