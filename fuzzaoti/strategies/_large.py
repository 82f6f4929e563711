"""Core ops of the large profile: every op family at the sizes where the seeds' bugs live.

Each family builds a program whose biggest tensor (or an op's operand, a view's base, an index
value) runs past 2**31 and 2**32 elements, or whose bmm batch passes 65535, once its big dim
(``_big_dims.big_axis``: bounded, unbounded, ``Dim.AUTO``/``DYNAMIC`` or derived, always
exported at a small hint) takes the sizes ``_shapes.runtime_shapes`` solves for. Cheap dtypes
(int8, fp16, bf16) keep one case within ``--max-bytes``: 2**31 int8 elements are 2 GiB.

* ``big_bmm`` / ``big_matmul`` / ``big_heads_bmm``: a batch past 65535 (dynamic, or static and
  chunked: the seeds' hand remedy), an output past 2**31 elements, a flattened ``batch*heads``;
* ``big_index_select``, ``big_gather``, ``big_take``, ``big_index``: a big source read at a few
  indices near its far end, or a small one read at a big index tensor;
* ``big_index_put``, ``big_scatter``: a few distinct rows of a big tensor written;
* ``big_slice``: ``narrow``, ``select`` (its last row: an offset past 2**31 for a few bytes) and
  a window whose start is read from data;
* ``big_cat``, ``big_pointwise``, ``big_reduction``, ``big_arange_index``; ``expanded_sum``: a
  reduction over a stride-0 view whose index space crosses 2**31 while its inputs stay small.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.model import sizes
from fuzzaoti.model.concrete import tensor_bytes
from fuzzaoti.model.ops import index_prefix
from fuzzaoti.model.program import Values
from fuzzaoti.model.shapes import drop_axis, replace_axis
from fuzzaoti.strategies._big_dims import big_axis
from fuzzaoti.strategies._core import ARANGE_MULTS, heads_bmm

CHEAP = ("int8", "float16", "bfloat16")
HALF = ("float16", "bfloat16")
WIDTHS = (1, 3, 8, 64, 1000)  # the static axis beside the big one


def _big_source(b, widths=WIDTHS, low: int = 2) -> tuple[str, int]:
    """A cheap-dtype input ``(A, c)`` or ``(c, A)`` whose axis ``A`` is big; returns its name and
    the big axis."""
    c = b.draw(st.sampled_from(widths))
    dtype = b.draw(st.sampled_from(CHEAP))
    axis = b.draw(st.integers(0, 1))
    big = big_axis(b, c, low)
    return b.add_input(dtype, (big, c) if axis == 0 else (c, big)), axis


def _materialized(b, view: str) -> str:
    """A pointwise op on a view: Inductor computes the view's addresses (a view of an input
    returned as is would only alias it)."""
    dtype = b.dtypes[view]
    return b.add_node(b.draw(st.sampled_from(("abs", "neg"))), (view,), b.shapes[view], dtype)


def big_bmm(b) -> str:
    """A bmm over a batch past 65535: dynamic, or static and split into chunks that are
    concatenated again (the seeds' hand remedy, itself a program worth compiling)."""
    chunked = b.draw(st.booleans())
    n, k, p = (b.draw(st.integers(1, b.profile.max_const)) for _ in range(3))
    dtype = b.draw(st.sampled_from(("float16", "float32", "bfloat16")))
    if chunked:  # a static batch cannot be shrunk to fit --max-bytes later: only sizes that fit now,
        # beside the inputs already drawn
        room = b.profile.max_bytes - b.min_bytes()
        fitting = [s for s in b.profile.big_sizes
                   if tensor_bytes(dtype, (s, n, k)) + tensor_bytes(dtype, (s, k, p)) <= room]
        chunked = bool(fitting)
    batch = b.draw(st.sampled_from(fitting)) if chunked else big_axis(b, n * p)
    a = b.add_input(dtype, (batch, n, k))
    mat2 = b.add_input(dtype, (batch, k, p))
    if chunked:
        size = b.draw(st.sampled_from((32768, 65535, 1000)))
        return b.add_node("bmm_chunked", (a, mat2), (batch, n, p), dtype, size=size)
    if b.draw(st.booleans()):
        bias = b.add_input(dtype, (batch, n, p))
        return b.add_node("baddbmm", (bias, a, mat2), (batch, n, p), dtype)
    return b.add_node("bmm", (a, mat2), (batch, n, p), dtype)


def big_matmul(b) -> str:
    """bmm / batched matmul / baddbmm whose fp16/bf16 output passes 2**31 elements: matrices up to
    128 x 128 over a big batch (a broadcast bias and a broadcast ``mat2`` keep the inputs small)."""
    op = b.draw(st.sampled_from(("bmm", "matmul", "baddbmm")))
    n, p = (b.draw(st.sampled_from((16, 32, 64, 128))) for _ in range(2))
    k = b.draw(st.integers(1, 8))
    dtype = b.draw(st.sampled_from(HALF))
    batch = big_axis(b, n * p)
    a = b.add_input(dtype, (batch, n, k))
    broadcast = op == "matmul" and b.draw(st.booleans())
    mat2 = b.add_input(dtype, (k, p) if broadcast else (batch, k, p))
    if op == "baddbmm":
        bias = b.add_input(dtype, (1, n, p))
        return b.add_node("baddbmm", (bias, a, mat2), (batch, n, p), dtype)
    return b.add_node(op, (a, mat2), (batch, n, p), dtype)


def big_heads_bmm(b) -> str:
    from fuzzaoti.model.program import DimSpec

    dims = []
    for high in (512, 256):
        dims.append(f"d{len(b.dims)}")
        b.dims.append(DimSpec(dims[-1], 1, high, b.draw(st.integers(2, 16)), "range"))
    return heads_bmm(b, dims[0], dims[1], dtypes=("float16", "float32", "bfloat16"))


def expanded_sum(b) -> str:
    """A sum over a stride-0 expanded view whose index space (rows x length) crosses 2**31 while
    the inputs stay small: exactly where 32-bit index arithmetic overflows."""
    rows, length = big_axis(b, 2**15), big_axis(b, 2**15)
    dtype = b.draw(st.sampled_from(("int8", "float16")))
    row = b.add_input(dtype, (1, length))
    if dtype == "int8":
        # eager sums int8 into int64 through a materialised int64 copy of the whole view (34 GB
        # at 2**32 elements); cast the small row instead: the view stays stride 0 and int8 in memory
        row = b.add_node("cast", (row,), (1, length), "float32", dtype="float32")
    sizer = b.add_input("int8", (rows,))  # only its size is used: the expanded view's row count
    view = b.add_node("expand_lead", (row, sizer), (rows, length), b.dtypes[row])
    # summing the identical rows of an fp16 view multiplies a value by the row count: inf in eager
    dim = b.draw(st.integers(0, 1)) if dtype == "int8" else 1
    kept = (length,) if dim == 0 else (rows,)
    return b.add_node("sum", (view,), kept, b.dtypes[row], dim=dim)


def big_pointwise(b) -> str:
    """A pointwise op over a big tensor: with a broadcast row, a scalar-like or a second big
    operand (``test_upper_bound_i64``'s int8 add), a unary op, or a cast to fp16."""
    x, axis = _big_source(b)
    dtype, shape = b.dtypes[x], b.shapes[x]
    kind = b.draw(st.sampled_from(("binary", "unary", "cast")))
    if kind == "binary":
        other_shape = b.draw(st.sampled_from((replace_axis(shape, axis, 1), (1,), shape)))
        other = b.add_input(dtype, other_shape)
        return b.add_node(b.draw(st.sampled_from(("add", "mul", "sub"))), (x, other), shape, dtype)
    if kind == "unary":
        ops = ("neg", "abs", "relu") + (("sigmoid", "sin") if dtype in HALF else ())
        return b.add_node(b.draw(st.sampled_from(ops)), (x,), shape, dtype)
    target = "float16" if dtype == "int8" else "float32"
    return b.add_node("cast", (x,), shape, target, dtype=target)


def big_reduction(b) -> str:
    """``amax`` over either axis of a big tensor (exact in every dtype), or a half-precision sum
    over its small axis (a sum of 2**31 fp16 values over the big one overflows in eager)."""
    x, axis = _big_source(b)
    dtype, shape = b.dtypes[x], b.shapes[x]
    if dtype in HALF and b.draw(st.booleans()):
        return b.add_node("sum", (x,), drop_axis(shape, 1 - axis), dtype, dim=1 - axis)
    dim = b.draw(st.integers(0, 1))
    return b.add_node("amax", (x,), drop_axis(shape, dim), dtype, dim=dim)


def big_index_select(b) -> str:
    """A big source read at a few indices (up to its far end), or a small one read at a big index."""
    if b.draw(st.booleans()):
        x, axis = _big_source(b)
        shape = b.shapes[x]
        length = b.draw(st.integers(1, 64))
        idx = b.add_input("int64", (length,), Values("int", 0, shape[axis]))
        return b.add_node("index_select", (x, idx), replace_axis(shape, axis, length), b.dtypes[x], dim=axis)
    c, n = b.draw(st.sampled_from((8, 64, 1000))), b.draw(st.integers(2, 64))
    x = b.add_input(b.draw(st.sampled_from(CHEAP)), (n, c))
    length = big_axis(b, c)
    idx = b.add_input("int64", (length,), Values("int", 0, n))
    return b.add_node("index_select", (x, idx), (length, c), b.dtypes[x], dim=0)


def big_gather(b) -> str:
    x, axis = _big_source(b)
    shape = b.shapes[x]
    idx_shape = replace_axis(shape, axis, b.draw(st.integers(1, 64)))
    idx = b.add_input("int64", idx_shape, Values("int", 0, shape[axis]))
    return b.add_node("gather", (x, idx), idx_shape, b.dtypes[x], dim=axis)


def big_take(b) -> str:
    x, _ = _big_source(b)
    flat = sizes.product(b.shapes[x])
    idx_shape = tuple(b.draw(st.integers(1, 32)) for _ in range(b.draw(st.integers(1, 2))))
    low = sizes.negate(flat) if b.draw(st.booleans()) else 0
    idx = b.add_input("int64", idx_shape, Values("int", low, flat))
    return b.add_node("take", (x, idx), idx_shape, b.dtypes[x])


def big_index(b) -> str:
    """``x[idx]`` / ``x[:, idx]`` into the big axis, with negative indices too."""
    x, axis = _big_source(b)
    shape = b.shapes[x]
    idx_shape = tuple(b.draw(st.integers(1, 32)) for _ in range(b.draw(st.integers(1, 2))))
    idx = b.index_input(idx_shape, shape[axis], negative=b.draw(st.booleans()), dtypes=("int64",))
    out = shape[:axis] + idx_shape + shape[axis + 1:]
    return b.add_node("index", (x, idx), out, b.dtypes[x], prefix=index_prefix(axis))


def _rows_written(b) -> tuple[str, str, int]:
    """A big ``(A, c)`` tensor and ``length`` distinct row indices into it."""
    length = b.draw(st.integers(1, 16))
    c = b.draw(st.sampled_from(WIDTHS))
    big = big_axis(b, c, low=length)
    x = b.add_input(b.draw(st.sampled_from(CHEAP)), (big, c))
    return x, big, length


def big_index_put(b) -> str:
    x, big, length = _rows_written(b)
    idx = b.add_input("int64", (length,), Values("distinct", 0, big))
    values = b.add_input(b.dtypes[x], (length, b.shapes[x][1]))
    return b.add_node("index_put", (x, idx, values), b.shapes[x], b.dtypes[x])


def big_scatter(b) -> str:
    x, big, length = _rows_written(b)
    shape = (length, b.shapes[x][1])
    idx = b.add_input("int64", shape, Values("distinct", 0, big))  # distinct down each column
    src = b.add_input(b.dtypes[x], shape)
    return b.add_node("scatter", (x, idx, src), b.shapes[x], b.dtypes[x], dim=0)


def big_slice(b) -> str:
    """``narrow`` with small static ends, ``select`` of a far row, or a window at an offset read
    from data (``.item()``): the view's base is big; a pointwise op computes its addresses."""
    kind = b.draw(st.sampled_from(("narrow", "select", "narrow_item")))
    start, trim = b.draw(st.integers(0, 3)), b.draw(st.integers(0, 3))
    length = b.draw(st.integers(1, 64))
    x, axis = _big_source(b, low={"narrow": start + trim + 2, "select": 2, "narrow_item": length}[kind])
    shape, dtype = b.shapes[x], b.dtypes[x]
    if kind == "select":
        index = b.draw(st.sampled_from((-1, -2, b.min_of(shape[axis]) - 1)))
        view = b.add_node("select", (x,), drop_axis(shape, axis), dtype, dim=axis, index=index)
    elif kind == "narrow":
        out = replace_axis(shape, axis, sizes.add(shape[axis], -(start + trim)))
        view = b.add_node("narrow", (x,), out, dtype, dim=axis, start=start, trim=trim)
    else:
        at = b.add_input("int64", (), Values("int", 0, sizes.add(shape[axis], 1 - length)))
        view = b.add_node("narrow_item", (x, at), replace_axis(shape, axis, length), dtype, dim=axis, length=length)
    return _materialized(b, view)


def big_cat(b) -> str:
    """A cat of two big tensors, or a split of a big one (a strided piece, materialized)."""
    x, axis = _big_source(b, widths=(3, 8, 64, 1000))
    shape, dtype = b.shapes[x], b.dtypes[x]
    if b.draw(st.booleans()):
        dim = b.draw(st.integers(0, 1))
        other = b.add_input(dtype, shape)
        return b.add_node("cat", (x, other), replace_axis(shape, dim, sizes.plus(shape[dim], shape[dim])), dtype, dim=dim)
    small = 1 - axis
    size = b.draw(st.integers(1, shape[small] - 1))
    piece = b.add_node("split", (x,), replace_axis(shape, small, size), dtype, size=size, dim=small)
    return _materialized(b, piece)


def big_arange_index(b) -> str:
    """``x[(arange(n) * mult + offset) % n]`` over a big ``n``: index arithmetic past 2**31 at
    every size, and offsets too once ``n`` is large (eager's int64 temporaries bound ``n``)."""

    x = b.add_input(b.draw(st.sampled_from(CHEAP)), (big_axis(b, 1),))
    mult = b.draw(st.sampled_from(ARANGE_MULTS))
    return b.add_node("arange_index", (x,), b.shapes[x], b.dtypes[x], mult=mult, offset=b.draw(st.integers(0, 5)))


LARGE_CORE = {
    "big_bmm": big_bmm, "big_matmul": big_matmul, "big_heads_bmm": big_heads_bmm, "expanded_sum": expanded_sum,
    "big_pointwise": big_pointwise, "big_reduction": big_reduction, "big_index_select": big_index_select,
    "big_gather": big_gather, "big_take": big_take, "big_index": big_index, "big_index_put": big_index_put,
    "big_scatter": big_scatter, "big_slice": big_slice, "big_cat": big_cat, "big_arange_index": big_arange_index,
}
