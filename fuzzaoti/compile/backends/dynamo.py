"""``torch.compile`` backends for the triage ladder: which stage of the stack introduced a bug?

``aot_eager`` traces through AOTAutograd but runs eager kernels; ``inductor`` is the JIT
Inductor with dynamic shapes. A bug that AOTI shows and both of these do not is AOTI's own.
"""

from __future__ import annotations

from fuzzaoti.compile import render
from fuzzaoti.compile.backends.base import Prepared, Progress, inductor_options
from fuzzaoti.model.program import Program


class _DynamoBackend:
    name = ""
    compiler = ""

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        import torch

        progress("compile")
        torch._dynamo.reset()
        # Inductor gets the program's configs (max_autotune, native_matmul...), as AOTI does:
        # otherwise a bug of a config looks like AOTI's own on the ladder
        options = inductor_options(program) if self.compiler == "inductor" else {}
        model = render.instantiate(namespace, device, program.swaps_state)
        compiled = torch.compile(model, backend=self.compiler, dynamic=True, fullgraph=True, options=options or None)
        return Prepared(run=lambda *inputs: list(compiled(*inputs)), ranges={})


class AotEagerBackend(_DynamoBackend):
    name = "aot_eager"
    compiler = "aot_eager"


class InductorBackend(_DynamoBackend):
    name = "inductor"
    compiler = "inductor"
