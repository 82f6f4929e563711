"""Concrete shape inference: every tensor of a Program at one runtime assignment of its dims.

The parent process plans runs without importing torch (a campaign draws thousands of runtime
shapes a minute), yet it must know how big each run gets: the bytes it materializes (the memory
budget) and how far its sizes, offsets and indices reach (the 2**31 and 65535 crossings the
seeds are about). So each whitelisted op has a rule here that gives its output's shape and dtype
from its arguments', and says whether the result is a *view* (no memory of its own, but its
addresses reach into its base).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping

from fuzzaoti.model import sizes
from fuzzaoti.model.dtypes import FLOAT_DTYPES
from fuzzaoti.model.program import Node, Program

Shape = tuple[int, ...]


@dataclass(frozen=True)
class TensorInfo:
    """One tensor at one runtime shape. ``base``: the numel of the storage a view reads (its own
    numel for a materialized tensor): the reach of its address arithmetic."""

    shape: Shape
    dtype: str
    view: bool
    base: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def replace_axis(shape: tuple, dim: int, size) -> tuple:
    """``shape`` with axis ``dim`` of ``size`` (ints here, or size expressions in the strategies)."""
    return shape[:dim] + (size,) + shape[dim + 1:]


def drop_axis(shape: tuple, dim: int) -> tuple:
    return shape[:dim] + shape[dim + 1:]


def _broadcast(a: Shape, b: Shape) -> Shape:
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    return tuple(x if y == 1 else y for x, y in zip(a, b))


def _reshape(shape: Shape, start: int, end: int, new) -> Shape:
    total = 1
    for s in shape[start:end]:
        total *= s
    known = 1
    for s in new:
        known *= s if s != -1 else 1
    return shape[:start] + tuple(total // known if s == -1 else s for s in new) + shape[end:]


def _chunk(shape: Shape, chunks: int, dim: int, index: int) -> Shape:
    step = -(-shape[dim] // chunks)
    return replace_axis(shape, dim, max(0, min(step, shape[dim] - index * step)))


def _matmul(a: Shape, m: Shape) -> Shape:
    return a[:-1] + (m[-1],)


REPEATS_MAX = 3  # the most times repeat_interleave repeats a row (its repeats are drawn in [0, 3])
#: ops whose result has a length read from data: their shape here is its bound
UNBACKED = frozenset({"narrow_to_item", "masked_select", "nonzero", "repeat_interleave"})

# op -> (shape rule over (arg shapes, attrs), is a view); dtypes follow the first arg unless _DTYPE says
_RULES: dict[str, tuple[Callable[[list[Shape], dict], Shape], bool]] = {
    "bmm": (lambda s, a: _matmul(s[0], s[1]), False),
    "baddbmm": (lambda s, a: _matmul(s[1], s[2]), False),  # its bias may broadcast
    "matmul": (lambda s, a: _matmul(s[0], s[1]), False),
    "bmm_chunked": (lambda s, a: _matmul(s[0], s[1]), False),
    "index_select": (lambda s, a: replace_axis(s[0], a["dim"], s[1][0]), False),
    "gather": (lambda s, a: s[1], False),
    "index": (lambda s, a: s[0][:a["prefix"].count(":")] + s[1] + s[0][a["prefix"].count(":") + 1:], False),
    "narrow": (lambda s, a: replace_axis(s[0], a["dim"], s[0][a["dim"]] - a["start"] - a["trim"]), True),
    "take": (lambda s, a: s[1], False),
    "narrow_item": (lambda s, a: replace_axis(s[0], a["dim"], a["length"]), True),
    "narrow_to_item": (lambda s, a: s[0], True),  # at most the whole axis: the bound planning needs
    "select": (lambda s, a: drop_axis(s[0], a["dim"]), True),
    "scatter": (lambda s, a: s[0], False),
    "index_put": (lambda s, a: s[0], False),
    "arange_index": (lambda s, a: s[0], False),
    "expand_batch": (lambda s, a: (s[1][0],) + s[0][1:], True),
    "expand_lead": (lambda s, a: (s[1][0],) + s[0][1:], True),
    "cat": (lambda s, a: replace_axis(s[0], a["dim"], s[0][a["dim"]] + s[1][a["dim"]]), False),
    "split": (lambda s, a: replace_axis(s[0], a["dim"], a["size"]), True),
    "transpose": (lambda s, a: _swap(s[0], a["d0"], a["d1"]), True),
    "permute": (lambda s, a: tuple(s[0][i] for i in a["dims"]), True),
    "unsqueeze": (lambda s, a: s[0][:a["dim"]] + (1,) + s[0][a["dim"]:], True),
    "flatten": (lambda s, a: _reshape(s[0], a["start"], a["end"] + 1, (-1,)), True),
    "reshape": (lambda s, a: _reshape(s[0], a["start"], a["end"], a["new"]), True),
    "view": (lambda s, a: _reshape(s[0], a["start"], a["end"], a["new"]), True),
    "unflatten_as": (lambda s, a: s[1][:2] + s[0][1:], True),
    "chunk": (lambda s, a: _chunk(s[0], a["chunks"], a["dim"], a["index"]), True),
    "sum": (lambda s, a: drop_axis(s[0], a["dim"]), False),
    "amax": (lambda s, a: drop_axis(s[0], a["dim"]), False),
    "var": (lambda s, a: drop_axis(s[0], a["dim"]), False),
    "cast": (lambda s, a: s[0], False),
    "affine": (lambda s, a: s[0], False),
    **{op: ((lambda s, a: s[0]), False) for op in ("index_add", "index_copy", "index_fill", "masked_fill",
                                                    "scatter_add", "scatter_reduce", "cumsum", "sort_values",
                                                    "sort_indices")},
    "where": (lambda s, a: _broadcast(_broadcast(s[0], s[1]), s[2]), False),
    "embedding": (lambda s, a: s[1] + s[0][1:], False),
    "searchsorted": (lambda s, a: s[1], False),
    "argmax": (lambda s, a: drop_axis(s[0], a["dim"]), False),
    "argmin": (lambda s, a: drop_axis(s[0], a["dim"]), False),
    "topk_values": (lambda s, a: replace_axis(s[0], a["dim"], a["k"]), False),
    "topk_indices": (lambda s, a: replace_axis(s[0], a["dim"], a["k"]), False),
    "embedding_bag": (lambda s, a: (s[1][0], s[0][1]), False),
    "one_hot": (lambda s, a: s[0] + (a["classes"],), False),
    "bucketize": (lambda s, a: s[1], False),
    # a size read from data, at most: the bound the byte budget plans with
    "masked_select": (lambda s, a: (math.prod(_broadcast(s[0], s[1])),), False),
    "nonzero": (lambda s, a: (math.prod(s[0]), len(s[0])), False),
    "repeat_interleave": (lambda s, a: (s[0][0] * REPEATS_MAX,) + s[0][1:], False),
    "mm": (lambda s, a: (s[0][0], s[1][1]), False),
    "addmm": (lambda s, a: (s[1][0], s[2][1]), False),
    "linear": (lambda s, a: s[0][:-1] + (s[1][0],), False),
    "sdpa": (lambda s, a: s[0][:-1] + (s[2][-1],), False),
    **{op: ((lambda s, a: s[0]), False) for op in ("relu", "neg", "abs", "sigmoid", "tanh", "sin", "clone")},
    # an in-place write is its target itself: no memory of its own (a view of its target)
    **{op: ((lambda s, a: s[0]), True) for op in ("index_put_", "index_add_", "scatter_add_", "masked_fill_",
                                                   "mul_", "narrow_copy_", "narrow_add_")},
    **{op: ((lambda s, a: _broadcast(s[0], s[1])), False) for op in ("add", "sub", "mul")},
}

#: ops whose view is a copy when their argument is not contiguous (a transposed or permuted view)
_COPY_IF_STRIDED = {"flatten", "reshape", "view"}
_STRIDED = {"transpose", "permute", "expand_batch", "expand_lead", "narrow", "narrow_item", "narrow_to_item",
            "select", "split", "chunk", "unflatten_as"}


def is_view(op: str) -> bool:
    """Does ``op``'s result share its first argument's memory (a view, or an in-place write)?"""
    return _RULES[op][1]


def _swap(shape: Shape, d0: int, d1: int) -> Shape:
    out = list(shape)
    out[d0], out[d1] = out[d1], out[d0]
    return tuple(out)


#: ops whose result is an index (int64) whatever they read
_INDEX_RESULT = {"argmax", "argmin", "sort_indices", "searchsorted", "topk_indices", "one_hot", "bucketize",
                 "nonzero"}
#: ops whose result dtype is their second argument's (a bias or a mask comes first)
_SECOND_ARG_DTYPE = {"baddbmm", "addmm", "where"}


def _dtype(node: Node, arg_dtypes: list[str]) -> str:
    if node.op == "cast":
        return node.attr["dtype"]
    if node.op in _INDEX_RESULT or node.op in ("sum", "cumsum") and arg_dtypes[0] not in FLOAT_DTYPES:
        return "int64"  # (an integer sum or cumsum widens to int64, as eager does)
    if node.op in _SECOND_ARG_DTYPE:
        return arg_dtypes[1]
    return arg_dtypes[0]


def tensors(program: Program, env: Mapping[str, int]) -> dict[str, TensorInfo]:
    """Every input and node of ``program`` at ``env``, by name, in program order."""
    out: dict[str, TensorInfo] = {}
    for spec in program.inputs:
        shape = tuple(sizes.evaluate(s, env) for s in spec.shape)
        out[spec.name] = TensorInfo(shape, spec.dtype, False, math.prod(shape))
    for t in program.state:
        out[t.name] = TensorInfo(tuple(t.shape), t.dtype, False, math.prod(t.shape))
    strided = {spec.name for spec in program.inputs if spec.layout in ("transposed", "expanded", "channels_last")}
    for node in program.nodes:
        args = [out[a] for a in node.args]
        rule, is_view = _RULES[node.op]
        shape = rule([a.shape for a in args], node.attr)
        if node.op in _COPY_IF_STRIDED and node.args[0] in strided:
            is_view = False
        if is_view and (node.op in _STRIDED or node.args[0] in strided):
            strided.add(node.name)
        base = max([math.prod(shape)] + [a.base for a in args[:1]]) if is_view else math.prod(shape)
        out[node.name] = TensorInfo(shape, _dtype(node, [a.dtype for a in args]), is_view, base)
    return out
