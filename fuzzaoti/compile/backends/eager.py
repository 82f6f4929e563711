"""The reference backend: the program's module run by eager PyTorch."""

from __future__ import annotations

from fuzzaoti.compile import render
from fuzzaoti.compile.backends.base import Prepared, Progress
from fuzzaoti.model.program import Program


class EagerBackend:
    name = "eager"

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        model = render.instantiate(namespace, device, program.swaps_state)
        return Prepared(run=lambda *inputs: list(model(*inputs)), ranges={})
