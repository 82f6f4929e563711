"""A fast test double: eager execution plus scripted faults, for unit tests of the pipeline.

``FUZZAOTI_FAKE_FAULT=<op>:<mode>`` makes every program that uses ``<op>`` misbehave, where
mode is ``wrong`` (one output element off by one), ``raise`` (an exception at run),
``crash`` (the worker aborts), or ``hang`` (the run never returns). Never the only proof:
real AOTI is tested for real in tests marked ``aoti``.
"""

from __future__ import annotations

import os
import time

from fuzzaoti.backends.base import Prepared, Progress
from fuzzaoti.program import Program


class FakeBackend:
    name = "fake"

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        progress("compile")
        model = namespace["Repro"]()
        op, _, mode = os.environ.get("FUZZAOTI_FAKE_FAULT", ":").partition(":")
        faulty = op in program.ops

        def run(*inputs):
            outputs = list(model(*inputs))
            if not faulty:
                return outputs
            if mode == "raise":
                raise RuntimeError(f"fake backend fault in {op} at 0x{id(outputs):x}")
            if mode == "crash":
                os.abort()
            if mode == "hang":
                time.sleep(3600)
            first = outputs[0].clone()
            first.view(-1)[:1] += 1
            return [first] + outputs[1:]

        return Prepared(run=run, ranges={})
