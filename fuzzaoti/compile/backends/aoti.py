"""AOTInductor: torch.export → aoti_compile_and_package → aoti_load_package."""

from __future__ import annotations

import json
import os

from fuzzaoti import compat
from fuzzaoti.compile import assumptions, merge, render
from fuzzaoti.coverage import record
from fuzzaoti.compile.backends.base import (Prepared, Progress, StageFailure, inductor_options, save_ranges,
                                            saved_ranges, stage)
from fuzzaoti.model.program import Program


class AotiBackend:
    name = "aoti"

    @staticmethod
    def export(namespace: dict, example: list):
        """torch.export of a rendered program (``Repro`` and its ``dynamic_shapes``) on ``example``:
        the first stage of ``prepare``, also run alone to pin a batch's export failure."""
        device = example[0].device if example else "cpu"
        return compat.export(render.instantiate(namespace, device), tuple(example),
                             namespace["dynamic_shapes"](compat.dim_class()))

    @staticmethod
    def load(path: str, program: Program, namespace: dict, device: str):
        """The loaded package, its constants swapped for new values where the program says so
        (``Program.swaps_state``): part of the load stage, as a user's update of weights is."""
        loaded = compat.aoti_load(path, device)
        if program.swaps_state:
            render.swap_constants(loaded, namespace, device)
        return loaded

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        """Export, compile and load ``program``; or only load it when ``workdir`` holds its
        package from an earlier check (one whose ranges were saved: it compiled and loaded).
        The sizes Inductor assumed while compiling (``compile.assumptions``) come with it."""
        path = os.path.join(workdir, f"{program.id}.pt2")
        saved = saved_ranges(path + ".ranges.json")
        if saved is None:
            ep = stage("export", progress, lambda: self.export(namespace, example))
            configs = inductor_options(program)
            # (recording lines only in a worker started to: WorkerConfig.coverage)
            with record.tracing(), compat.cpp_kernel_nests() as nests, compat.triton_kernel_sources() as triton:
                try:
                    path, guards = stage("compile", progress,
                                         lambda: compat.aoti_compile_noting_guards(ep, path, configs))
                except StageFailure as failure:
                    failure.kernels = kernel_members(nests, program)
                    raise
            assumed = assumptions.from_guards(guards, compat.input_size_exprs(ep), program)
            kernels = kernel_members(nests, program)
            decided = record.note_compile(path, triton, kernels)  # (in a worker started to record coverage)
        loaded = stage("load", progress, lambda: self.load(path, program, namespace, device))
        if saved is None:
            ranges, sizes, strides = compat.exported_ranges(ep), compat.exported_sizes(ep), compat.exported_strides(ep)
            assumptions.save(path + ".assumptions.json", assumed)
            with open(path + ".kernels.json", "w") as f:
                json.dump(kernels, f)
            save_ranges(path + ".ranges.json", ranges, sizes, strides)  # (last: the package is whole)
        else:
            (ranges, sizes, strides), assumed = saved, assumptions.load(path + ".assumptions.json")
            kernels, decided = _saved_kernels(path + ".kernels.json"), {}
        return Prepared(run=lambda *inputs: list(loaded(*inputs)), ranges=ranges, assumptions=assumed, sizes=sizes,
                        strides=strides, kernels=kernels, decisions=decided)


def kernel_members(nests: dict[str, list[list[list[str]]]], program: Program) -> dict[str, list[list[int]]]:
    """For each C++ kernel Inductor defined (``compat.cpp_kernel_nests``), the members of the
    merged ``program`` each of its loop nests computes nodes of (a kernel defined for several
    groups of nodes of one source: the members of all of them, nest by nest)."""
    count, source = merge.member_count(program), render.program_source(program).splitlines()
    found: dict[str, list[list[int]]] = {}
    for name, groups in nests.items():
        if len({len(group) for group in groups}) != 1:
            continue
        found[name] = [sorted(set().union(*(merge.traced_members(group[k], program, count, source=source)
                                             for group in groups))) for k in range(len(groups[0]))]
    return found


def _saved_kernels(path: str) -> dict[str, list[list[int]]]:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
