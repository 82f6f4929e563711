"""Program + runtime assignment of dims → the concrete input specs that ``inputs`` consumes."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from fuzzaoti.model import sizes
from fuzzaoti.model.dtypes import ITEMSIZE
from fuzzaoti.model.program import Program


def input_specs(program: Program, env: Mapping[str, int]) -> list[dict[str, Any]]:
    """Plain-data input descriptions with every size evaluated at ``env``."""
    specs = []
    for spec in program.inputs:
        v = spec.values
        specs.append(
            {
                "dtype": spec.dtype,
                "shape": [sizes.evaluate(s, env) for s in spec.shape],
                "kind": v.kind,
                "low": None if v.low is None else sizes.evaluate(v.low, env),
                "high": None if v.high is None else sizes.evaluate(v.high, env),
            }
        )
    return specs


def tensor_bytes(dtype: str, shape: Iterable[int]) -> int:
    """Bytes of a contiguous tensor of ``dtype`` and concrete ``shape``."""
    numel = 1
    for n in shape:
        numel *= n
    return numel * ITEMSIZE.get(dtype, 1)


def input_bytes(program: Program, env: Mapping[str, int]) -> int:
    """Bytes the inputs occupy at ``env``."""
    return sum(tensor_bytes(spec["dtype"], spec["shape"]) for spec in input_specs(program, env))
