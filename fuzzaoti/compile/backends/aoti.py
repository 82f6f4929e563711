"""AOTInductor: torch.export → aoti_compile_and_package → aoti_load_package."""

from __future__ import annotations

import os

from fuzzaoti import compat
from fuzzaoti.compile.backends.base import Prepared, Progress, inductor_options, stage
from fuzzaoti.model.program import Program


class AotiBackend:
    name = "aoti"

    @staticmethod
    def export(namespace: dict, example: list):
        """torch.export of a rendered program (``Repro`` and its ``dynamic_shapes``) on ``example``:
        the first stage of ``prepare``, also run alone to pin a batch's export failure."""
        return compat.export(namespace["Repro"](), tuple(example), namespace["dynamic_shapes"](compat.dim_class()))

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        ep = stage("export", progress, lambda: self.export(namespace, example))
        configs = inductor_options(program)
        path = os.path.join(workdir, f"{program.id}.pt2")
        path = stage("compile", progress, lambda: compat.aoti_compile(ep, path, configs))
        loaded = stage("load", progress, lambda: compat.aoti_load(path, device))
        return Prepared(run=lambda *inputs: list(loaded(*inputs)), ranges=compat.exported_ranges(ep))
