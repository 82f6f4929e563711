"""Core ops users export around bmm and indexing: accumulating, copying and filling index ops,
masks, embeddings and bags, one-hot, searchsorted and bucketize, arg-reductions, scans and sorts,
2-D matmuls and attention, and results of a length read from data.

Each draws operands valid at every runtime size in the declared ranges, and whose result is
unique wherever eager's is: duplicate indices are drawn freely for the ops that accumulate
(``index_add``, ``scatter_add``, ``scatter_reduce``), never for ``index_copy`` (a permutation of
the rows); argmax, argmin, sort and topk indices read rows of distinct values (a permutation
input). ``masked_select``, ``nonzero`` and ``repeat_interleave`` give results whose length is read
from data (an unbacked size).
``AROUND`` maps each op name to its function, as ``_core.CORE`` does.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.model.ops import EMBEDDING_BAG_MODES, SCATTER_REDUCTIONS
from fuzzaoti.model.program import Values
from fuzzaoti.model.shapes import REPEATS_MAX, drop_axis, replace_axis
from fuzzaoti.strategies._builder import FLOAT_DTYPES, INDEX_DTYPES, Builder
from fuzzaoti.strategies._core import source

#: the fill values of index_fill and masked_fill: ints, which every dtype drawn holds
FILL_VALUES = (0, -1, 7, 100)


def accumulate(b: Builder, op: str, x: str | None = None) -> str:
    """index_add, index_add_ (into ``x``) along any dim, or index_copy (its indices a permutation
    of the rows: no duplicates); ``x`` None: ``source``'s."""
    x = source(b, 2) if x is None else x
    shape, dtype = b.shapes[x], b.dtypes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    if op == "index_copy":
        idx = b.add_input("int64", (shape[dim],), Values("perm"))
        length = shape[dim]
    else:
        length = b.size()
        idx = b.index_input((length,), shape[dim], negative=False)
    src = b.add_input(dtype, replace_axis(shape, dim, length))
    return b.add_node(op, (x, idx, src), shape, dtype, dim=dim)


def _index_fill(b: Builder) -> str:
    x = source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    idx = b.index_input((b.size(),), shape[dim], negative=b.draw(st.booleans()), dtypes=("int64",))
    return b.add_node("index_fill", (x, idx), shape, b.dtypes[x], dim=dim, value=b.draw(st.sampled_from(FILL_VALUES)))


def mask(b: Builder, shape: tuple) -> str:
    """A bool mask of ``shape``, or of its trailing axes (broadcast over the leading ones)."""
    lead = b.draw(st.integers(0, len(shape) - 1))
    return b.add_input("bool", shape[lead:], Values("bool"))


def _masked_fill(b: Builder) -> str:
    x = source(b, 1)
    shape = b.shapes[x]
    return b.add_node("masked_fill", (x, mask(b, shape)), shape, b.dtypes[x], value=b.draw(st.sampled_from(FILL_VALUES)))


def _where(b: Builder) -> str:
    x = source(b, 1)
    shape, dtype = b.shapes[x], b.dtypes[x]
    cond = mask(b, shape)
    other = b.add_input(dtype, shape)
    return b.add_node("where", (cond, x, other), shape, dtype)


def _scatter(b: Builder, op: str) -> str:
    """scatter_add or scatter_reduce along either axis of a 2-D tensor, duplicate targets drawn
    freely (the reductions are order-free up to float rounding); ``prod`` over floats only."""
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES))
    shape = (b.size(), b.size())
    dim = b.draw(st.integers(0, 1))
    x = b.add_input(dtype, shape)
    idx = b.add_input("int64", shape, Values("int", 0, shape[dim]))
    src = b.add_input(dtype, shape)
    if op == "scatter_add":
        return b.add_node(op, (x, idx, src), shape, dtype, dim=dim)
    reductions = SCATTER_REDUCTIONS if dtype in FLOAT_DTYPES else tuple(r for r in SCATTER_REDUCTIONS if r != "prod")
    return b.add_node(op, (x, idx, src), shape, dtype, dim=dim, reduce=b.draw(st.sampled_from(reductions)),
                      include_self=b.draw(st.booleans()))


def _embedding(b: Builder) -> str:
    rows, width = b.size(), b.size()
    weight = b.add_input(b.draw(st.sampled_from(FLOAT_DTYPES)), (rows, width))
    idx_shape = tuple(b.size() for _ in range(b.draw(st.integers(1, 2))))
    idx = b.index_input(idx_shape, rows, negative=False)
    return b.add_node("embedding", (weight, idx), idx_shape + (width,), b.dtypes[weight])


def _searchsorted(b: Builder) -> str:
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES))
    boundaries = b.add_input(dtype, (b.size(),))
    values_shape = tuple(b.size() for _ in range(b.draw(st.integers(1, 2))))
    values = b.add_input(dtype, values_shape)
    return b.add_node("searchsorted", (boundaries, values), values_shape, "int64")


def _distinct_rows(b: Builder) -> str:
    """A 2-D tensor whose rows hold distinct values (a permutation each), as int64 or cast to a
    float (exact in every float dtype: a row is at most a few hundred long)."""
    x = b.add_input("int64", (b.size(), b.size()), Values("perm"))
    if b.draw(st.booleans()):
        x = b.add_node("cast", (x,), b.shapes[x], "float32", dtype=b.draw(st.sampled_from(FLOAT_DTYPES)))
    return x


def _arg(b: Builder, op: str) -> str:
    x = _distinct_rows(b)
    return b.add_node(op, (x,), drop_axis(b.shapes[x], 1), "int64", dim=1)


def _sort_indices(b: Builder) -> str:
    x = _distinct_rows(b)
    return b.add_node("sort_indices", (x,), b.shapes[x], "int64", dim=1)


def _cumsum(b: Builder) -> str:
    x = source(b, 1)
    shape, dtype = b.shapes[x], b.dtypes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    return b.add_node("cumsum", (x,), shape, dtype if dtype in FLOAT_DTYPES else "int64", dim=dim)


def _sort_values(b: Builder) -> str:
    x = source(b, 1)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    return b.add_node("sort_values", (x,), shape, b.dtypes[x], dim=dim, descending=b.draw(st.booleans()))


def _topk_values(b: Builder) -> str:
    x = source(b, 1)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    k = b.draw(st.integers(1, max(1, b.min_of(shape[dim]))))
    return b.add_node("topk_values", (x,), replace_axis(shape, dim, k), b.dtypes[x], dim=dim, k=k)


def _topk_indices(b: Builder) -> str:
    """topk indices along rows of distinct values: no ties, so the indices are eager's."""
    x = _distinct_rows(b)
    k = b.draw(st.integers(1, max(1, b.min_of(b.shapes[x][1]))))
    return b.add_node("topk_indices", (x,), replace_axis(b.shapes[x], 1, k), "int64", dim=1, k=k)


def _embedding_bag(b: Builder) -> str:
    """A bag of ``length`` rows per output row, summed, averaged or maxed (a max of values:
    unique even where two rows tie)."""
    rows, width, bags, length = b.size(), b.size(), b.size(), b.size()
    weight = b.add_input(b.draw(st.sampled_from(FLOAT_DTYPES)), (rows, width))
    idx = b.index_input((bags, length), rows, negative=False, dtypes=("int64",))
    return b.add_node("embedding_bag", (weight, idx), (bags, width), b.dtypes[weight],
                      mode=b.draw(st.sampled_from(EMBEDDING_BAG_MODES)))


def _one_hot(b: Builder) -> str:
    classes = b.draw(st.integers(1, 16))
    idx = b.add_input("int64", tuple(b.size() for _ in range(b.draw(st.integers(1, 2)))), Values("int", 0, classes))
    return b.add_node("one_hot", (idx,), b.shapes[idx] + (classes,), "int64", classes=classes)


def _bucketize(b: Builder) -> str:
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES))
    boundaries = b.add_input(dtype, (b.size(),))
    values_shape = tuple(b.size() for _ in range(b.draw(st.integers(1, 2))))
    values = b.add_input(dtype, values_shape)
    return b.add_node("bucketize", (boundaries, values), values_shape, "int64", right=b.draw(st.booleans()))


def _summed(b: Builder, t: str) -> str:
    """``t``, whose axis 0 has a length read from data, summed over that axis: a result of a
    static shape again, which later ops can take (as ``_core._narrow_to_item`` does)."""
    dtype = b.dtypes[t]
    return b.add_node("sum", (t,), b.shapes[t][1:], dtype if dtype in FLOAT_DTYPES else "int64", dim=0)


def _masked_select(b: Builder) -> str:
    """The elements of ``x`` where a mask holds: a 1-D result of a length read from data."""
    x = source(b, 1)
    return _summed(b, b.add_node("masked_select", (x, mask(b, b.shapes[x])), ("u",), b.dtypes[x]))


def _nonzero(b: Builder) -> str:
    m = b.add_input("bool", tuple(b.size() for _ in range(b.draw(st.integers(1, 3)))), Values("bool"))
    return _summed(b, b.add_node("nonzero", (m,), ("u", len(b.shapes[m])), "int64"))


def _repeat_interleave(b: Builder) -> str:
    """Each row of ``x`` repeated 0 to ``REPEATS_MAX`` times, as its repeats tensor says."""
    x = source(b, 1)
    shape = b.shapes[x]
    repeats = b.add_input("int64", shape[:1], Values("int", 0, REPEATS_MAX + 1), index=False)
    return _summed(b, b.add_node("repeat_interleave", (x, repeats), ("u",) + shape[1:], b.dtypes[x]))


def _mm(b: Builder, op: str) -> str:
    """mm; addmm with a bias of every shape that broadcasts (0-d, a row, a column of one, the
    whole result); linear over a 2-D or 3-D input with its weight (out, in) and bias."""
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES))
    n, k, p = b.size(), b.size(), b.size()
    if op == "linear":
        lead = (b.size(),) * b.draw(st.integers(0, 1))
        x = b.add_input(dtype, lead + (n, k))
        weight, bias = b.add_input(dtype, (p, k)), b.add_input(dtype, (p,))
        return b.add_node("linear", (x, weight, bias), lead + (n, p), dtype)
    a, m = b.add_input(dtype, (n, k)), b.add_input(dtype, (k, p))
    if op == "mm":
        return b.add_node("mm", (a, m), (n, p), dtype)
    bias = b.add_input(dtype, b.draw(st.sampled_from(((), (p,), (1, p), (n, 1), (n, p)))))
    return b.add_node("addmm", (bias, a, m), (n, p), dtype)


def _sdpa(b: Builder) -> str:
    """scaled_dot_product_attention over (batch, heads, length, width) with keys and values of
    another length and a value width of their own: the batched matmul users ship most."""
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES))
    batch, heads, length, source_length, width, v_width = (b.size() for _ in range(6))
    q = b.add_input(dtype, (batch, heads, length, width))
    k = b.add_input(dtype, (batch, heads, source_length, width))
    v = b.add_input(dtype, (batch, heads, source_length, v_width))
    return b.add_node("sdpa", (q, k, v), (batch, heads, length, v_width), dtype)


AROUND = {
    "index_add": lambda b: accumulate(b, "index_add"),
    "index_copy": lambda b: accumulate(b, "index_copy"),
    "index_fill": _index_fill,
    "masked_fill": _masked_fill,
    "where": _where,
    "scatter_add": lambda b: _scatter(b, "scatter_add"),
    "scatter_reduce": lambda b: _scatter(b, "scatter_reduce"),
    "embedding": _embedding,
    "searchsorted": _searchsorted,
    "argmax": lambda b: _arg(b, "argmax"),
    "argmin": lambda b: _arg(b, "argmin"),
    "sort_indices": _sort_indices,
    "cumsum": _cumsum,
    "sort_values": _sort_values,
    "topk_values": _topk_values,
    "mm": lambda b: _mm(b, "mm"),
    "addmm": lambda b: _mm(b, "addmm"),
    "linear": lambda b: _mm(b, "linear"),
    "sdpa": _sdpa,
    "topk_indices": _topk_indices,
    "embedding_bag": _embedding_bag,
    "one_hot": _one_hot,
    "bucketize": _bucketize,
    "masked_select": _masked_select,
    "nonzero": _nonzero,
    "repeat_interleave": _repeat_interleave,
}
