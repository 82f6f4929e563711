"""Program + runtime assignment of dims → the concrete input specs that ``inputs`` consumes."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from fuzzaoti.model import sizes
from fuzzaoti.model.dtypes import ITEMSIZE
from fuzzaoti.model.program import Program


def input_specs(program: Program, env: Mapping[str, int], example: bool = False) -> list[dict[str, Any]]:
    """Plain-data input descriptions with every size evaluated at ``env``: of a run, or of
    export's ``example`` (where an ``offset_at_run`` input is contiguous and an ``oob`` index in
    range: the batch's other members run it)."""
    specs = []
    for spec in program.inputs:
        v = spec.values
        specs.append(
            {
                "dtype": spec.dtype,
                "shape": [sizes.evaluate(s, env) for s in spec.shape],
                "kind": "int" if example and v.kind == "oob" else v.kind,  # (an example is in range)
                "low": None if v.low is None else sizes.evaluate(v.low, env),
                "high": None if v.high is None else sizes.evaluate(v.high, env),
                "layout": at_export(spec.layout) if example else at_run(spec.layout),
            }
        )
    return specs


def tensor_bytes(dtype: str, shape: Iterable[int]) -> int:
    """Bytes of a contiguous tensor of ``dtype`` and concrete ``shape``."""
    numel = 1
    for n in shape:
        numel *= n
    return numel * ITEMSIZE.get(dtype, 1)


def at_run(layout: str) -> str:
    """The layout an input of ``layout`` has at a run (``Program.LAYOUTS``)."""
    return "offset" if layout == "offset_at_run" else layout


def at_export(layout: str) -> str:
    """The layout an input of ``layout`` has in export's example (``Program.LAYOUTS``)."""
    return "contiguous" if layout == "offset_at_run" else layout


OFFSET = 3  # poison elements on each side of an ``offset`` input (``inputs.OFFSET``)


def storage_elements(shape: Iterable[int], layout: str) -> int:
    """Elements of the storage an input of ``shape`` and ``layout`` occupies (its byte budget)."""
    shape, layout = list(shape), at_run(layout)
    n = math.prod(shape)
    if layout == "offset":
        return n + 2 * OFFSET
    if layout == "expanded" and shape and shape[0] > 0:
        return n // shape[0]
    return n


def input_bytes(program: Program, env: Mapping[str, int]) -> int:
    """Bytes the inputs' storages occupy at ``env`` (an ``offset`` input's poison included)."""
    return sum(storage_elements(spec["shape"], spec["layout"]) * ITEMSIZE.get(spec["dtype"], 1)
               for spec in input_specs(program, env))
