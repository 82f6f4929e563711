"""Glue (views and layout changes between and after core ops) and epilogues (fusable
pointwise, cast, cat, split and reduction ops), each kind one small function."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.model import regroup, sizes
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
    out = _GLUE[kind](b, t, b.shapes[t], b.dtypes[t])
    return t if out is None else out


# Each glue kind: the new tensor's name, or None where ``t``'s shape does not admit it.
def _permute(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
    if len(shape) < 2:
        return None
    dims = tuple(b.draw(st.permutations(range(len(shape)))))
    return b.add_node("permute", (t,), tuple(shape[i] for i in dims), dtype, dims=dims)


def _transpose(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
    if len(shape) < 2:
        return None
    d0, d1 = sorted(b.draw(st.lists(st.integers(0, len(shape) - 1), min_size=2, max_size=2, unique=True)))
    out = list(shape)
    out[d0], out[d1] = out[d1], out[d0]
    return b.add_node("transpose", (t,), tuple(out), dtype, d0=d0, d1=d1)


def _unsqueeze(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
    if len(shape) > 3:
        return None
    dim = b.draw(st.integers(0, len(shape)))
    return b.add_node("unsqueeze", (t,), shape[:dim] + (1,) + shape[dim:], dtype, dim=dim)


def _chunk(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
    chunks = b.draw(st.sampled_from((2, 3, 4)))
    # a dynamic axis only where every size splits evenly; a static one any way torch splits it
    fits = [d for d in range(len(shape)) if isinstance(shape[d], int) and shape[d] >= 2
            or sizes.content(shape[d]) % chunks == 0 and b.min_of(sizes.divide(shape[d], chunks)) >= 2]
    if not fits:
        return None
    dim = b.draw(st.sampled_from(fits))
    if isinstance(shape[dim], int):
        step = -(-shape[dim] // chunks)
        index = b.draw(st.integers(0, (shape[dim] - 1) // step))
        piece = min(step, shape[dim] - index * step)
    else:
        index, piece = b.draw(st.integers(0, chunks - 1)), sizes.divide(shape[dim], chunks)
    return b.add_node("chunk", (t,), shape[:dim] + (piece,) + shape[dim + 1:], dtype,
                      chunks=chunks, dim=dim, index=index)


def _spans(shape: tuple) -> list[tuple[int, int]]:
    """Axis ranges ``[i, j)`` whose product stays affine in the dims: those a view can regroup."""
    return [(i, j) for i in range(len(shape)) for j in range(i + 1, len(shape) + 1)
            if sizes.product(shape[i:j]) is not None]


def _flatten(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
    spans = [(i, j) for i, j in _spans(shape) if j - i >= 2]
    if not spans:
        return None
    start, end = b.draw(st.sampled_from(spans))
    out = shape[:start] + (sizes.product(shape[start:end]),) + shape[end:]
    return b.add_node("flatten", (t,), out, dtype, start=start, end=end - 1)


def _regroup(kind: str):
    """``reshape`` or ``view``: one span of axes regrouped into two (or merged into one), in a
    way export traces without guarding a dim's value (``fuzzaoti.model.regroup``)."""
    def regroup_span(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
        spans = _spans(shape)
        if not spans:
            return None
        start, end = b.draw(st.sampled_from(spans))
        total = sizes.product(shape[start:end])
        parts = [a for a in range(2, 17) if sizes.content(total) % a == 0 and b.min_of(sizes.divide(total, a)) >= 2]
        # (new sizes, the axes they make): each part split off either end, else a merge
        ways = ([((a, -1), (a, sizes.divide(total, a))) for a in parts]
                + [((-1, a), (sizes.divide(total, a), a)) for a in parts] if parts
                else [((-1,), (total,))] if end - start >= 2 else [])
        ranges = {d.name: (d.min, d.max) for d in b.dims}
        ways = [w for w in ways if regroup.traced_alike(shape, shape[:start] + w[1] + shape[end:], ranges)]
        if not ways:  # export would guard a dim's value (d % 2 != 0) and refuse the range
            return None
        new, middle = b.draw(st.sampled_from(ways))
        return b.add_node(kind, (t,), shape[:start] + middle + shape[end:], dtype, start=start, end=end, new=new)
    return regroup_span


_GLUE = {"reshape": _regroup("reshape"), "view": _regroup("view"), "permute": _permute, "transpose": _transpose,
         "flatten": _flatten, "unsqueeze": _unsqueeze, "chunk": _chunk}
assert tuple(_GLUE) == GLUE_OPS


# ---- epilogues -------------------------------------------------------------------------------
def epilogue(b: Builder, t: str) -> str:
    """A fusable op after ``t``: glue, pointwise, cat, split, a reduction, or a cast (what an
    epilogue that does not fit ``t`` becomes)."""
    kinds = ["unary", "binary", "affine", "cast"] + (["cat", "glue", "glue"] if b.shapes[t] else [])  # (0-d: a sum)
    kinds += ["sum", "split"] if len(b.shapes[t]) > 1 else []
    out = _EPILOGUES[b.draw(st.sampled_from(kinds))](b, t, b.shapes[t], b.dtypes[t])
    return _cast(b, t, b.shapes[t], b.dtypes[t]) if out is None else out


def _unary(b: Builder, t: str, shape: tuple, dtype: str) -> str:
    ops = ("relu", "neg", "abs", "sigmoid", "tanh", "sin") if dtype in FLOAT_DTYPES else ("neg", "abs")
    return b.add_node(b.draw(st.sampled_from(ops)), (t,), shape, dtype)


def _binary(b: Builder, t: str, shape: tuple, dtype: str) -> str:
    # an axis whose size no input can declare is broadcast from size 1 instead
    other = b.add_input(dtype, tuple(s if b.exportable(s) else 1 for s in shape))
    return b.add_node(b.draw(st.sampled_from(("add", "sub", "mul"))), (t, other), shape, dtype)


def _affine(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
    if dtype not in FLOAT_DTYPES:
        return None
    scale = b.draw(st.sampled_from((0.5, 2.0, -1.5)))
    return b.add_node("affine", (t,), shape, dtype, scale=scale, shift=b.draw(st.sampled_from((1.0, -0.25))))


def _cat(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
    if not all(map(b.exportable, shape)):
        return None
    dim = b.draw(st.integers(0, len(shape) - 1))
    other = b.add_input(dtype, shape)
    return b.add_node("cat", (t, other), shape[:dim] + (sizes.plus(shape[dim], shape[dim]),) + shape[dim + 1:],
                      dtype, dim=dim)


def _split(b: Builder, t: str, shape: tuple, dtype: str) -> str | None:
    dim = b.draw(st.integers(0, len(shape) - 1))
    room = b.min_of(shape[dim]) - 2  # the rest keeps >= 2 elements: a rest that can be 1 specialises
    if room < 1:
        return None
    size = b.draw(st.integers(1, room))
    return b.add_node("split", (t,), shape[:dim] + (size,) + shape[dim + 1:], dtype, size=size, dim=dim)


def _reduce(b: Builder, t: str, shape: tuple, dtype: str) -> str:
    """sum; amax, which keeps the dtype; or a float's var (a Welford reduction: 'fuzzaoti coverage
    --function need_use_acc_helper' showed no campaign reaching Inductor's welford_reduce)."""
    dim = b.draw(st.integers(0, len(shape) - 1))
    op = b.draw(st.sampled_from(("sum", "amax") + (("var",) if dtype in FLOAT_DTYPES else ())))
    out_dtype = dtype if dtype in FLOAT_DTYPES or op == "amax" else "int64"
    return b.add_node(op, (t,), shape[:dim] + shape[dim + 1:], out_dtype, dim=dim)


def _cast(b: Builder, t: str, shape: tuple, dtype: str) -> str:
    # integers (sums of int8 rows, products) can pass fp16's 65504: they are cast to wide floats only
    wide = ("float32", "bfloat16") if dtype not in FLOAT_DTYPES else FLOAT_DTYPES + ("float64",)
    target = b.draw(st.sampled_from(wide))
    return b.add_node("cast", (t,), shape, target, dtype=target)


_EPILOGUES = {"glue": lambda b, t, shape, dtype: glue(b, t), "unary": _unary, "binary": _binary, "affine": _affine,
              "cast": _cast, "cat": _cat, "split": _split, "sum": _reduce}


def large_epilogue(b: Builder, t: str) -> str:
    """A unary pointwise op fused onto a large core op's result (no new tensor of its size)."""
    ops = ("neg", "abs") + (("relu", "sigmoid", "tanh") if b.dtypes[t] in FLOAT_DTYPES else ())
    return b.add_node(b.draw(st.sampled_from(ops)), (t,), b.shapes[t], b.dtypes[t])

