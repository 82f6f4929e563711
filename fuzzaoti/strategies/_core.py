"""The core ops of the small profile: batched matmuls and the int64-indexing family.

Each is one small function of the builder, drawing its operands so that the op is valid at
every runtime size in the declared ranges (index values are declared in terms of the dims they
index). ``CORE`` maps each op name to its function.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.model import sizes
from fuzzaoti.model.ops import index_prefix
from fuzzaoti.model.program import Values
from fuzzaoti.strategies._builder import FLOAT_DTYPES, INDEX_DTYPES, Builder

CORE_OPS = ("bmm", "matmul", "baddbmm", "heads_bmm", "index_select", "gather", "index", "narrow", "take", "select",
            "narrow_item", "narrow_to_item",
            "scatter", "index_put", "arange_index",
            # the ops around them (``strategies._around``)
            "index_add", "index_copy", "index_fill", "masked_fill", "where", "scatter_add", "scatter_reduce",
            "embedding", "searchsorted", "argmax", "argmin", "sort_indices", "cumsum", "sort_values",
            "topk_values", "mm", "addmm", "linear", "sdpa", "topk_indices", "embedding_bag", "one_hot", "bucketize",
            "masked_select", "nonzero", "repeat_interleave",
            # in-place writes into an input or an intermediate (``strategies._mutation``)
            "index_put_", "index_add_", "scatter_add_", "masked_fill_", "mul_", "narrow_copy_", "narrow_add_")


def _matmul(b: Builder, op: str) -> str:
    """bmm / batched matmul / baddbmm, with transposed, stride-0 (expanded) or broadcast operands."""
    batch, n, k, p = b.size(), b.size(), b.size(), b.size()
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES))
    broadcast = op == "matmul" and b.draw(st.booleans())
    mat2 = b.add_input(dtype, (k, p) if broadcast else (batch, k, p))
    expanded = not broadcast and b.draw(st.booleans())  # one batch of mat1, expanded to all (stride 0)
    transpose_a = b.draw(st.booleans())
    lead = 1 if expanded else batch
    a = b.add_input(dtype, (lead, k, n) if transpose_a else (lead, n, k))
    if transpose_a:
        a = b.add_node("transpose", (a,), (lead, n, k), dtype, d0=1, d1=2)
    if expanded:
        a = b.add_node("expand_batch", (a, mat2), (batch, n, k), dtype)
    if op == "baddbmm":
        bias = b.add_input(dtype, (batch, n, p))
        return b.add_node("baddbmm", (bias, a, mat2), (batch, n, p), dtype)
    return b.add_node(op, (a, mat2), (batch, n, p), dtype)


def heads_bmm(b: Builder, batch: sizes.Size, heads: sizes.Size, dtypes=FLOAT_DTYPES) -> str:
    """Attention-style: (batch, heads, n, k) @ (batch, heads, k, p) as a bmm over the flattened
    ``batch*heads`` axis, split back afterwards: the merged batch is a product of two dynamic
    sizes (the seeds' large-batch bmm), which no input can declare, only a view can make."""
    n, k, p = b.size(), b.size(), b.size()
    dtype = b.draw(st.sampled_from(dtypes))
    q = b.add_input(dtype, (batch, heads, n, k))
    kv = b.add_input(dtype, (batch, heads, k, p))
    merged = f"({batch})*({heads})"  # not affine: only these three nodes ever carry it
    q3 = b.add_node("flatten", (q,), (merged, n, k), dtype, start=0, end=1)
    kv3 = b.add_node("flatten", (kv,), (merged, k, p), dtype, start=0, end=1)
    out = b.add_node("bmm", (q3, kv3), (merged, n, p), dtype)
    return b.add_node("unflatten_as", (out, q), (batch, heads, n, p), dtype)


def source(b: Builder, rank: int) -> str:
    """The tensor an indexing op reads: a fresh input, or the latest node when there is one."""
    last = b.nodes[-1].name if b.nodes else None  # (its shape must be one inputs can be drawn to match)
    if last is not None and len(b.shapes[last]) >= rank and b.feedable(last) and b.draw(st.booleans()):
        return last
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES))
    return b.add_input(dtype, tuple(b.size() for _ in range(rank)))


def _index_select(b: Builder) -> str:
    x = source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    length = b.size()
    idx = b.index_input((length,), shape[dim], negative=False)
    out = shape[:dim] + (length,) + shape[dim + 1:]
    return b.add_node("index_select", (x, idx), out, b.dtypes[x], dim=dim)


def _gather(b: Builder) -> str:
    x = source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    length = b.size()
    idx_shape = shape[:dim] + (length,) + shape[dim + 1:]
    idx = b.index_input(idx_shape, shape[dim], negative=False)
    return b.add_node("gather", (x, idx), idx_shape, b.dtypes[x], dim=dim)


def _index(b: Builder) -> str:
    x = source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, min(len(shape) - 1, 2)))
    idx_shape = tuple(b.size() for _ in range(b.draw(st.integers(1, 2))))
    idx = b.index_input(idx_shape, shape[dim], negative=b.draw(st.booleans()))
    out = shape[:dim] + idx_shape + shape[dim + 1:]
    return b.add_node("index", (x, idx), out, b.dtypes[x], prefix=index_prefix(dim))


def window(b: Builder, size: sizes.Size) -> tuple[int, int, sizes.Size]:
    """``(start, trim, length)`` of a window into an axis of ``size``: ``length = size - start - trim``."""
    # keep two elements at the smallest size: a length that can reach 1 makes export specialise
    room = b.min_of(size) - 2
    start = b.draw(st.integers(0, max(room, 0)))
    trim = b.draw(st.integers(0, max(room - start, 0)))
    return start, trim, sizes.add(size, -(start + trim))


def _narrow(b: Builder) -> str:
    x = source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    start, trim, length = window(b, shape[dim])
    out = shape[:dim] + (length,) + shape[dim + 1:]
    return b.add_node("narrow", (x,), out, b.dtypes[x], dim=dim, start=start, trim=trim)


def _take(b: Builder) -> str:
    size = b.size()
    x = b.add_input(b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES)), (size,))
    idx_shape = tuple(b.size() for _ in range(b.draw(st.integers(1, 2))))
    idx = b.index_input(idx_shape, size, negative=b.draw(st.booleans()), dtypes=("int64",))
    return b.add_node("take", (x, idx), idx_shape, b.dtypes[x])


def _select(b: Builder) -> str:
    x = source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    index = b.draw(st.sampled_from((0, -1, b.min_of(shape[dim]) - 1)))
    return b.add_node("select", (x,), shape[:dim] + shape[dim + 1:], b.dtypes[x], dim=dim, index=index)


def _narrow_item(b: Builder) -> str:
    """A fixed-length window whose start is read from data (``.item()``): an unbacked offset."""
    x = source(b, 1)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    length = b.draw(st.integers(1, max(1, b.min_of(shape[dim]))))
    start = b.add_input("int64", (), Values("int", 0, sizes.add(shape[dim], 1 - length)))
    return b.add_node("narrow_item", (x, start), shape[:dim] + (length,) + shape[dim + 1:], b.dtypes[x],
                      dim=dim, length=length)


def _narrow_to_item(b: Builder) -> str:
    """A prefix whose length is read from data, summed over: the reduction runs over an unbacked
    size (u0) and the result's shape is static again."""
    x = source(b, 2)
    shape, dtype = b.shapes[x], b.dtypes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    length = b.add_input("int64", (), Values("int", 1, sizes.add(shape[dim], 1)))
    rest = shape[:dim] + shape[dim + 1:]
    prefix = b.add_node("narrow_to_item", (x, length), shape[:dim] + ("u",) + shape[dim + 1:], dtype, dim=dim)
    return b.add_node("sum", (prefix,), rest, dtype if dtype in FLOAT_DTYPES else "int64", dim=dim)


def _scatter(b: Builder) -> str:
    """scatter along the last dim with a permutation per row: no duplicate targets, so the
    result does not depend on the order writes land in."""
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES))
    shape = (b.size(), b.size())
    x = b.add_input(dtype, shape)
    idx = b.add_input("int64", shape, Values("perm"))
    src = b.add_input(dtype, shape)
    return b.add_node("scatter", (x, idx, src), shape, dtype, dim=1)


def _index_put(b: Builder) -> str:
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES))
    shape = (b.size(), b.size())
    x = b.add_input(dtype, shape)
    idx = b.add_input("int64", shape[:1], Values("perm"))  # a permutation of the rows: unique
    values = b.add_input(dtype, shape)
    return b.add_node("index_put", (x, idx, values), shape, dtype)


#: multipliers of the arange index: past 2**31 (a literal int32 cannot hold), and below it but
#: past 2**31 once multiplied by 2 or 3 (only the product overflows int32: silent wrong indices)
ARANGE_MULTS = (2**31 + 1, 2**31 + 7, 2**31 + 12345, 2**30 + 3, 1_000_000_007)


def _arange_index(b: Builder) -> str:
    x = source(b, 1)
    mult = b.draw(st.sampled_from(ARANGE_MULTS))
    offset = b.draw(st.integers(0, 5))
    return b.add_node("arange_index", (x,), b.shapes[x], b.dtypes[x], mult=mult, offset=offset)


CORE = {
    "bmm": lambda b: _matmul(b, "bmm"),
    "matmul": lambda b: _matmul(b, "matmul"),
    "baddbmm": lambda b: _matmul(b, "baddbmm"),
    "heads_bmm": lambda b: heads_bmm(b, b.size(), b.size()),
    "take": _take,
    "narrow_item": _narrow_item,
    "narrow_to_item": _narrow_to_item,
    "select": _select,
    "scatter": _scatter,
    "index_put": _index_put,
    "arange_index": _arange_index,
    "index_select": _index_select,
    "gather": _gather,
    "index": _index,
    "narrow": _narrow,
}

