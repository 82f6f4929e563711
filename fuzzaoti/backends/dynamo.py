"""``torch.compile`` backends for the triage ladder: which stage of the stack introduced a bug?

``aot_eager`` traces through AOTAutograd but runs eager kernels; ``inductor`` is the JIT
Inductor with dynamic shapes. A bug that AOTI shows and both of these do not is AOTI's own.
"""

from __future__ import annotations

from fuzzaoti.backends.base import Prepared, Progress
from fuzzaoti.program import Program


class _DynamoBackend:
    name = ""
    compiler = ""

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        import torch

        progress("compile")
        torch._dynamo.reset()
        compiled = torch.compile(namespace["Repro"](), backend=self.compiler, dynamic=True, fullgraph=True)
        return Prepared(run=lambda *inputs: list(compiled(*inputs)), ranges={})


class AotEagerBackend(_DynamoBackend):
    name = "aot_eager"
    compiler = "aot_eager"


class InductorBackend(_DynamoBackend):
    name = "inductor"
    compiler = "inductor"
