"""Glue (views and layout changes between and after core ops) and epilogues (fusable
pointwise, cast, cat, split and reduction ops), each kind one small function."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.model import sizes
from fuzzaoti.strategies._builder import FLOAT_DTYPES, Builder

GLUE_OPS = ("reshape", "view", "permute", "transpose", "flatten", "unsqueeze", "chunk")


def glue(b: Builder, t: str, tries: int = 3) -> str:
    """A reshape/view/permute/transpose/flatten/unsqueeze/chunk of ``t`` that is valid at every
    runtime size: reshapes only regroup axes whose product stays affine in the dims (``(4, d, 2)
    -> (8, d)``), chunks only split an axis its chunk count divides. Draws another kind when one
    does not fit ``t``'s shape, and returns ``t`` itself after ``tries`` misses."""
    for _ in range(tries):
        out = _one_glue(b, t, b.draw(st.sampled_from(GLUE_OPS)))
        if out != t:
            return out
    return t


def _one_glue(b: Builder, t: str, kind: str) -> str:
    draw, shape, dtype = b.draw, b.shapes[t], b.dtypes[t]
    rank = len(shape)
    if kind == "permute" and rank >= 2:
        dims = tuple(draw(st.permutations(range(rank))))
        return b.add_node("permute", (t,), tuple(shape[i] for i in dims), dtype, dims=dims)
    if kind == "transpose" and rank >= 2:
        d0, d1 = sorted(draw(st.lists(st.integers(0, rank - 1), min_size=2, max_size=2, unique=True)))
        out = list(shape)
        out[d0], out[d1] = out[d1], out[d0]
        return b.add_node("transpose", (t,), tuple(out), dtype, d0=d0, d1=d1)
    if kind == "unsqueeze" and rank <= 3:
        dim = draw(st.integers(0, rank))
        return b.add_node("unsqueeze", (t,), shape[:dim] + (1,) + shape[dim:], dtype, dim=dim)
    if kind == "chunk":
        chunks = draw(st.sampled_from((2, 3, 4)))
        # a dynamic axis only where every size splits evenly; a static one any way torch splits it
        fits = [d for d in range(rank) if isinstance(shape[d], int) and shape[d] >= 2
                or sizes.content(shape[d]) % chunks == 0 and b.min_of(sizes.divide(shape[d], chunks)) >= 2]
        if not fits:
            return t
        dim = draw(st.sampled_from(fits))
        if isinstance(shape[dim], int):
            step = -(-shape[dim] // chunks)
            index = draw(st.integers(0, (shape[dim] - 1) // step))
            piece = min(step, shape[dim] - index * step)
        else:
            index, piece = draw(st.integers(0, chunks - 1)), sizes.divide(shape[dim], chunks)
        return b.add_node("chunk", (t,), shape[:dim] + (piece,) + shape[dim + 1:], dtype,
                          chunks=chunks, dim=dim, index=index)
    spans = [(i, j) for i in range(rank) for j in range(i + 1, rank + 1) if sizes.product(shape[i:j]) is not None]
    if kind == "flatten":
        spans = [(i, j) for i, j in spans if j - i >= 2]
        if spans:
            start, end = draw(st.sampled_from(spans))
            out = shape[:start] + (sizes.product(shape[start:end]),) + shape[end:]
            return b.add_node("flatten", (t,), out, dtype, start=start, end=end - 1)
        return t
    if kind in ("reshape", "view") and spans:
        start, end = draw(st.sampled_from(spans))
        total = sizes.product(shape[start:end])
        parts = [a for a in range(2, 17) if sizes.content(total) % a == 0
                 and b.min_of(sizes.divide(total, a)) >= 2]
        if parts:
            part = draw(st.sampled_from(parts))
            rest = sizes.divide(total, part)
            new, middle = ((part, -1), (part, rest)) if draw(st.booleans()) else ((-1, part), (rest, part))
        elif end - start >= 2:
            new, middle = (-1,), (total,)
        else:
            return t
        return b.add_node(kind, (t,), shape[:start] + middle + shape[end:], dtype, start=start, end=end, new=new)
    return t


# ---- epilogues -------------------------------------------------------------------------------
def epilogue(b: Builder, t: str) -> str:
    dtype, shape = b.dtypes[t], b.shapes[t]
    is_float = dtype in FLOAT_DTYPES
    kinds = ["unary", "binary", "affine", "cast", "cat", "glue", "glue"] + (["sum", "split"] if len(shape) > 1 else [])
    kind = b.draw(st.sampled_from(kinds))
    if kind == "glue":
        return glue(b, t)
    if kind == "unary":
        ops = ("relu", "neg", "abs", "sigmoid", "tanh", "sin") if is_float else ("neg", "abs")
        return b.add_node(b.draw(st.sampled_from(ops)), (t,), shape, dtype)
    if kind == "binary":
        # an axis whose size no input can declare is broadcast from size 1 instead
        other = b.add_input(dtype, tuple(s if b.exportable(s) else 1 for s in shape))
        return b.add_node(b.draw(st.sampled_from(("add", "sub", "mul"))), (t, other), shape, dtype)
    if kind == "affine" and is_float:
        scale = b.draw(st.sampled_from((0.5, 2.0, -1.5)))
        return b.add_node("affine", (t,), shape, dtype, scale=scale, shift=b.draw(st.sampled_from((1.0, -0.25))))
    if kind == "cat" and all(map(b.exportable, shape)):
        dim = b.draw(st.integers(0, len(shape) - 1))
        other = b.add_input(dtype, shape)
        return b.add_node("cat", (t, other), shape[:dim] + (sizes.plus(shape[dim], shape[dim]),) + shape[dim + 1:],
                          dtype, dim=dim)
    if kind == "split":
        dim = b.draw(st.integers(0, len(shape) - 1))
        room = b.min_of(shape[dim]) - 2  # the rest keeps >= 2 elements: a rest that can be 1 specialises
        if room >= 1:
            size = b.draw(st.integers(1, room))
            return b.add_node("split", (t,), shape[:dim] + (size,) + shape[dim + 1:], dtype, size=size, dim=dim)
    if kind == "sum":  # or amax, which keeps the dtype
        dim = b.draw(st.integers(0, len(shape) - 1))
        op = b.draw(st.sampled_from(("sum", "amax")))
        out_dtype = dtype if is_float or op == "amax" else "int64"
        return b.add_node(op, (t,), shape[:dim] + shape[dim + 1:], out_dtype, dim=dim)
    # integers (sums of int8 rows, products) can pass fp16's 65504: they are cast to wide floats only
    target = b.draw(st.sampled_from(("float32", "bfloat16") if not is_float else FLOAT_DTYPES + ("float64",)))
    return b.add_node("cast", (t,), shape, target, dtype=target)


def large_epilogue(b: Builder, t: str) -> str:
    """A unary pointwise op fused onto a large core op's result (no new tensor of its size)."""
    ops = ("neg", "abs") + (("relu", "sigmoid", "tanh") if b.dtypes[t] in FLOAT_DTYPES else ())
    return b.add_node(b.draw(st.sampled_from(ops)), (t,), b.shapes[t], b.dtypes[t])

