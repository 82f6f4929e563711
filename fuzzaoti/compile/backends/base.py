"""The backend protocol: turn a Program into something callable on runtime inputs.

A backend does its work in named stages (export, compile, load) and reports each through
``progress`` before starting it, so a crash inside a stage is attributed to that stage by the
worker's parent. A failure inside a stage is raised as ``StageFailure``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from fuzzaoti import compat
from fuzzaoti.check import guards
from fuzzaoti.model.program import Program

Progress = Callable[[str], None]

#: Timing budget of max_autotune's benchmarking, in ms of warm-up and of measured runs per
#: choice (Inductor's defaults: 25 and 100). A fuzzer checks kernels, it does not pick the
#: fastest one: at the defaults, timing the ~11 Triton choices of every GEMM took 3.2 s on the
#: H200, a cost paid per bmm that batching programs into one module cannot share. Every choice
#: is still compiled and run; the winner is drawn from noisier timings.
AUTOTUNE_BUDGET = {"inductor_default_autotune_warmup": 1, "inductor_default_autotune_rep": 5}


def inductor_options(program: Program) -> dict[str, Any]:
    """The Inductor options a program is compiled with: its own configs that this torch knows,
    plus, when it autotunes, the fuzzing timing budget."""
    options = dict(program.configs)
    if options.get("max_autotune"):
        options = {**AUTOTUNE_BUDGET, **options}
    return compat.supported_configs(options)


class StageFailure(Exception):
    """An exception raised inside a backend stage, tagged with that stage."""

    def __init__(self, stage: str, error: BaseException):
        super().__init__(f"{stage}: {type(error).__name__}: {error}")
        self.stage = stage
        self.error = error
        # of a compile: the C++ kernels defined by then, as ``Prepared.kernels`` (whose code an
        # error in a kernel's source is, ``workers.faults.compile_error_member``)
        self.kernels: Mapping[str, list[list[int]]] = {}


Ranges = Mapping[tuple[int, int], tuple[int, int | None]]
Sizes = Mapping[tuple[int, int], str]


@dataclass
class Prepared:
    """A compiled program: call it with input tensors; ``accepts`` says which runtime sizes it
    may legally be fed (inside the ranges export decided, one size for the axes export gave one
    symbol: ``sizes``, and the strides export recorded: ``strides``), so no undefined input is
    ever run."""

    run: Callable[..., Any]
    ranges: Ranges
    assumptions: tuple = ()  # ``compile.assumptions.Assumption``s: size guards the package never checks
    sizes: Sizes = field(default_factory=dict)  # each symbolic axis's expression (``compat.exported_sizes``)
    strides: Sizes = field(default_factory=dict)  # each input axis's stride (``compat.exported_strides``)
    # each C++ kernel's loop nests as the members whose nodes they compute (``aoti.kernel_members``)
    kernels: Mapping[str, list[list[int]]] = field(default_factory=dict)
    # each member's decision combinations, where its compile recorded them (``coverage.decisions``)
    decisions: Mapping[int, list[str]] = field(default_factory=dict)

    def accepts(self, shapes: list[tuple[int, ...]], offset: int = 0,
                strides: list[tuple[int, ...]] | None = None) -> bool:
        """True if inputs of these shapes (and ``strides``), fed from input ``offset`` on, are in
        range, give every symbol one value (an axis of ``s3 + 1`` one more than an axis of
        ``s3``) and have export's strides on every axis longer than 1 (an input whose layout
        export fixed to the example's numbers, a gapped one, cannot change sizes)."""
        def fed(index: int) -> bool:
            return offset <= index < offset + len(shapes)

        for (index, axis), (lo, hi) in self.ranges.items():
            size = shapes[index - offset][axis] if fed(index) else None
            if size is not None and (size < lo or (hi is not None and size > hi)):
                return False
        values: dict[str, int] = {}
        mine = [(shapes[index - offset][axis], expr) for (index, axis), expr in self.sizes.items() if fed(index)]
        for size, expr in mine:
            if expr.isidentifier() and values.setdefault(expr, size) != size:
                return False
        if not all(expr.isidentifier() or guards.evaluate(f"({expr}) == {size}", values) is not False
                   for size, expr in mine):
            return False
        return strides is None or all(
            shapes[index - offset][axis] <= 1
            or guards.evaluate(f"({expr}) == {strides[index - offset][axis]}", values) is not False
            for (index, axis), expr in self.strides.items() if fed(index))


def save_ranges(path: str, ranges: Ranges, sizes: Sizes, strides: Sizes) -> None:
    """Write a package's input ranges and size expressions beside it, last (by a rename): a
    package whose ranges are there compiled and loaded, and can be loaded again without
    exporting (``saved_ranges``)."""
    with open(path + ".tmp", "w") as f:
        json.dump({"ranges": [[index, axis, lo, hi] for (index, axis), (lo, hi) in ranges.items()],
                   "sizes": [[index, axis, expr] for (index, axis), expr in sizes.items()],
                   "strides": [[index, axis, expr] for (index, axis), expr in strides.items()]}, f)
    os.replace(path + ".tmp", path)


def saved_ranges(path: str) -> tuple[Ranges, Sizes, Sizes] | None:
    """The ranges, size and stride expressions ``save_ranges`` wrote, or None if there are none."""
    try:
        with open(path) as f:
            saved = json.load(f)
    except FileNotFoundError:
        return None
    return ({(index, axis): (lo, hi) for index, axis, lo, hi in saved["ranges"]},
            {(index, axis): expr for index, axis, expr in saved["sizes"]},
            {(index, axis): expr for index, axis, expr in saved.get("strides", [])})


class Backend(Protocol):
    name: str

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        """Export/compile/load ``program`` (``namespace`` holds its rendered source) in
        ``workdir``; a backend that finds its compiled package of ``program`` there already
        may load it instead (a group checked again after its worker died in a run)."""
        ...

    # A backend that starts with torch.export may also offer ``export(namespace, example)``,
    # that stage alone: a batch whose export failed is then retried member by member.


def stage(name: str, progress: Progress, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` as stage ``name``: announce it, and tag any exception with the stage."""
    progress(name)
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - every failure of the compiler is data here
        raise StageFailure(name, exc) from exc
