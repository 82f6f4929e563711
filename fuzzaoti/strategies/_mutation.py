"""Core ops that write in place: into an input (the package must write it back to the caller's
tensor) or into an intermediate (later reads, and outputs that alias it, see the write).

The target is a fresh input, or the latest node when it owns its memory (no view, no cast: a
cast to the dtype it already has is the tensor itself, and a write into a view writes into its
base, which the oracle would not know to judge). A run judges every input the program writes
into after the call (``Program.mutated_inputs``), each call on its own copy. Duplicate indices
only where the write accumulates. ``MUTATION`` maps each op name to its function.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.model.program import Values
from fuzzaoti.model.shapes import is_view, replace_axis
from fuzzaoti.strategies._around import FILL_VALUES, accumulate, mask
from fuzzaoti.strategies._builder import FLOAT_DTYPES, INDEX_DTYPES, Builder
from fuzzaoti.strategies._core import window


def _target(b: Builder, rank: int) -> str:
    """What the op writes into: the latest node where it owns its memory, else a new input."""
    if b.nodes and b.draw(st.booleans()):
        last = b.nodes[-1]
        if len(b.shapes[last.name]) >= rank and not is_view(last.op) and last.op != "cast" and b.feedable(last.name):
            return last.name
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES))
    return b.add_input(dtype, tuple(b.size() for _ in range(rank)))


def _index_put(b: Builder) -> str:
    x = _target(b, 2)
    shape, dtype = b.shapes[x], b.dtypes[x]
    length = b.size()
    idx = b.index_input((length,), shape[0], negative=b.draw(st.booleans()), dtypes=("int64",))
    values = b.add_input(dtype, (length,) + shape[1:])
    return b.add_node("index_put_", (x, idx, values), shape, dtype)


def _scatter_add(b: Builder) -> str:
    x = _target(b, 2)
    shape, dtype = b.shapes[x], b.dtypes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    idx = b.add_input("int64", shape, Values("int", 0, shape[dim]))
    src = b.add_input(dtype, shape)
    return b.add_node("scatter_add_", (x, idx, src), shape, dtype, dim=dim)


def _masked_fill(b: Builder) -> str:
    x = _target(b, 1)
    shape = b.shapes[x]
    return b.add_node("masked_fill_", (x, mask(b, shape)), shape, b.dtypes[x], value=b.draw(st.sampled_from(FILL_VALUES)))


def _mul(b: Builder) -> str:
    x = _target(b, 1)
    shape, dtype = b.shapes[x], b.dtypes[x]
    lead = b.draw(st.integers(0, len(shape) - 1))  # the factor broadcast over the leading axes
    factor = b.add_input(dtype, shape[lead:])
    return b.add_node("mul_", (x, factor), shape, dtype)


def _narrow_write(b: Builder, op: str) -> str:
    """copy_ or add_ into a window of the target along one axis (a view of it, and so a write
    at a storage offset), two elements kept at the smallest size as ``narrow`` keeps them."""
    x = _target(b, 2)
    shape, dtype = b.shapes[x], b.dtypes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    start, trim, length = window(b, shape[dim])
    if not b.exportable(length):  # (export derives a size only from a Dim with a range)
        start = trim = 0
        length = shape[dim]
    src = b.add_input(dtype, replace_axis(shape, dim, length))
    return b.add_node(op, (x, src), shape, dtype, dim=dim, start=start, trim=trim)


MUTATION = {
    "index_put_": _index_put,
    "index_add_": lambda b: accumulate(b, "index_add_", _target(b, 2)),
    "scatter_add_": _scatter_add,
    "masked_fill_": _masked_fill,
    "mul_": _mul,
    "narrow_copy_": lambda b: _narrow_write(b, "narrow_copy_"),
    "narrow_add_": lambda b: _narrow_write(b, "narrow_add_"),
}
