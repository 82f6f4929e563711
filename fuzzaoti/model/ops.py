"""The whitelist of ops a Program may use, and how each renders as torch source.

Adding an op means adding one ``OpSpec`` here (and teaching ``fuzzaoti.strategies`` to
generate it validly). Rendering is plain string formatting over checked attributes, so a
Program from an untrusted corpus can only ever produce calls to these ops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fuzzaoti.errors import InvalidProgram, short_repr
from fuzzaoti.model.dtypes import DTYPES


# Helpers some op templates call; fuzzaoti.compile.render puts the source of those a program uses
# above its module (so repros and the worker run the same code).
HELPERS = {
    "_item_in": (
        "def _item_in(t, lo, hi):\n"
        "    \"\"\"A size read from data: t.item(), with the bounds torch.export needs to use it.\"\"\"\n"
        "    v = t.item()\n"
        "    torch._check(v >= lo)\n"
        "    torch._check(v <= hi)\n"
        "    return v\n"
    ),
}


@dataclass(frozen=True)
class OpSpec:
    """``template`` is formatted with the args as ``a0, a1, ...`` and the attrs by name."""

    name: str
    family: str  # "matmul", "indexing", "pointwise", "reduction", "glue", "mutation"
    arity: int
    template: str
    attrs: dict[str, Callable[[object], bool]]
    mutates: bool = False  # writes into its first argument in place; its result is that tensor

    def check(self, node) -> None:
        if len(node.args) != self.arity:
            raise InvalidProgram(f"node {node.name!r}: {self.name} takes {self.arity} tensor args")
        given = node.attr
        if set(given) != set(self.attrs):
            raise InvalidProgram(
                f"node {node.name!r}: {self.name} needs attrs {sorted(self.attrs)}, got {short_repr(sorted(given))}"
            )
        for key, ok in self.attrs.items():
            if not _holds(ok, given[key]):
                raise InvalidProgram(f"node {node.name!r}: bad {self.name} attr {key}={short_repr(given[key])}")

    def render(self, node) -> str:
        fields = {f"a{k}": arg for k, arg in enumerate(node.args)}
        fields.update(node.attr)
        return self.template.format(**fields)


def _holds(check: Callable[[object], bool], value: object) -> bool:
    """``check(value)``, False where the value is not even of a type it can look at (a JSON
    object where a string belongs is unhashable: ``{...} in {"a", "b"}`` raises)."""
    try:
        return bool(check(value))
    except TypeError:
        return False


def is_int(v: object) -> bool:
    """An int and not a bool (JSON's ``true`` is an int to Python)."""
    return isinstance(v, int) and not isinstance(v, bool)


def _nonneg(v: object) -> bool:
    return is_int(v) and v >= 0


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e6


def _ints(v: object) -> bool:
    return isinstance(v, (list, tuple)) and 0 < len(v) <= 8 and all(map(is_int, v))


def _permutation(v: object) -> bool:
    return _ints(v) and sorted(v) == list(range(len(v)))


def _new_sizes(v: object) -> bool:
    """Sizes for a reshape of some axes: positive ints and exactly one -1 (the dynamic rest)."""
    return _ints(v) and list(v).count(-1) == 1 and all(x > 0 or x == -1 for x in v)


EMBEDDING_BAG_MODES = ("sum", "mean", "max")


def _dtype(v: object) -> bool:
    return v in DTYPES


def _index_prefix(dim: int) -> str:
    return ":, " * dim


_SPECS = [
    OpSpec("bmm", "matmul", 2, "torch.bmm({a0}, {a1})", {}),
    OpSpec("baddbmm", "matmul", 3, "torch.baddbmm({a0}, {a1}, {a2})", {}),
    OpSpec("matmul", "matmul", 2, "torch.matmul({a0}, {a1})", {}),
    # the seeds' hand remedy for huge batches: bmm over batch chunks of ``size``, concatenated
    # (a Python loop over chunks: export fixes the batch, so it is used with static batches)
    OpSpec("bmm_chunked", "matmul", 2,
           "torch.cat([torch.bmm(p, q) for p, q in zip({a0}.split({size}), {a1}.split({size}))])",
           {"size": lambda v: is_int(v) and v >= 1}),
    OpSpec("index_select", "indexing", 2, "torch.index_select({a0}, {dim}, {a1})", {"dim": _nonneg}),
    OpSpec("gather", "indexing", 2, "torch.gather({a0}, {dim}, {a1})", {"dim": _nonneg}),
    OpSpec("index", "indexing", 2, "{a0}[{prefix}{a1}]", {"prefix": lambda v: v in {_index_prefix(d) for d in range(6)}}),
    OpSpec(
        "narrow",
        "indexing",
        1,
        "{a0}.narrow({dim}, {start}, {a0}.size({dim}) - {start} - {trim})",
        {"dim": _nonneg, "start": _nonneg, "trim": _nonneg},
    ),
    OpSpec("take", "indexing", 2, "torch.take({a0}, {a1})", {}),
    # sizes from data: a1 is an int64 scalar read with .item() and bounded by torch._check
    # (_item_in, emitted by fuzzaoti.compile.render), so export sees an unbacked symbol (u0) with a range
    OpSpec("narrow_item", "indexing", 2,
           "{a0}.narrow({dim}, _item_in({a1}, 0, {a0}.size({dim}) - {length}), {length})",
           {"dim": _nonneg, "length": lambda v: is_int(v) and v >= 1}),
    OpSpec("narrow_to_item", "indexing", 2, "{a0}.narrow({dim}, 0, _item_in({a1}, 1, {a0}.size({dim})))",
           {"dim": _nonneg}),
    OpSpec("select", "indexing", 1, "{a0}.select({dim}, {index})", {"dim": _nonneg, "index": is_int}),
    OpSpec("scatter", "indexing", 3, "torch.scatter({a0}, {dim}, {a1}, {a2})", {"dim": _nonneg}),
    OpSpec("index_put", "indexing", 3, "torch.index_put({a0}, ({a1},), {a2})", {}),
    OpSpec(
        "arange_index",
        "indexing",
        1,
        # index arithmetic whose intermediate values pass 2**31: needs int64 all the way
        "{a0}[(torch.arange({a0}.size(0), device={a0}.device) * {mult} + {offset}) % {a0}.size(0)]",
        {"mult": _nonneg, "offset": _nonneg},
    ),
    OpSpec("expand_batch", "glue", 2, "{a0}.expand({a1}.size(0), -1, -1)", {}),
    # a stride-0 view whose leading dim takes the size of another tensor's first dim
    OpSpec("expand_lead", "glue", 2, "{a0}.expand({a1}.size(0), *{a0}.shape[1:])", {}),
    OpSpec("cat", "glue", 2, "torch.cat([{a0}, {a1}], {dim})", {"dim": _nonneg}),
    # two pieces whatever the size: a split into size-many pieces would specialise the dim
    OpSpec("split", "glue", 1, "torch.split({a0}, [{size}, {a0}.size({dim}) - {size}], {dim})[0]",
           {"size": _nonneg, "dim": _nonneg}),
    OpSpec("transpose", "glue", 1, "{a0}.transpose({d0}, {d1})", {"d0": _nonneg, "d1": _nonneg}),
    OpSpec("permute", "glue", 1, "{a0}.permute({dims})", {"dims": _permutation}),
    OpSpec("unsqueeze", "glue", 1, "{a0}.unsqueeze({dim})", {"dim": _nonneg}),
    OpSpec("flatten", "glue", 1, "{a0}.flatten({start}, {end})", {"start": _nonneg, "end": _nonneg}),
    # axes start..end-1 become ``new`` (one -1): a reshape that moves elements across a dynamic
    # axis makes Inductor index with FloorDiv/ModularIndexing over symbolic sizes
    OpSpec("reshape", "glue", 1, "{a0}.reshape(*{a0}.shape[:{start}], *{new}, *{a0}.shape[{end}:])",
           {"start": _nonneg, "end": _nonneg, "new": _new_sizes}),
    OpSpec("view", "glue", 1, "{a0}.contiguous().view(*{a0}.shape[:{start}], *{new}, *{a0}.shape[{end}:])",
           {"start": _nonneg, "end": _nonneg, "new": _new_sizes}),
    # undo a flatten(0, 1) of ``a1``: the merged batch splits back into a1's two leading sizes
    OpSpec("unflatten_as", "glue", 2, "{a0}.unflatten(0, {a1}.shape[:2])", {}),
    OpSpec("chunk", "glue", 1, "torch.chunk({a0}, {chunks}, {dim})[{index}]",
           {"chunks": lambda v: is_int(v) and 2 <= v <= 8, "dim": _nonneg, "index": _nonneg}),
    OpSpec("relu", "pointwise", 1, "torch.relu({a0})", {}),
    OpSpec("neg", "pointwise", 1, "torch.neg({a0})", {}),
    OpSpec("abs", "pointwise", 1, "torch.abs({a0})", {}),
    OpSpec("sigmoid", "pointwise", 1, "torch.sigmoid({a0})", {}),
    OpSpec("tanh", "pointwise", 1, "torch.tanh({a0})", {}),
    OpSpec("sin", "pointwise", 1, "torch.sin({a0})", {}),
    OpSpec("add", "pointwise", 2, "torch.add({a0}, {a1})", {}),
    OpSpec("sub", "pointwise", 2, "torch.sub({a0}, {a1})", {}),
    OpSpec("mul", "pointwise", 2, "torch.mul({a0}, {a1})", {}),
    OpSpec("affine", "pointwise", 1, "({a0} * {scale} + {shift})", {"scale": _number, "shift": _number}),
    OpSpec("cast", "pointwise", 1, "{a0}.to(torch.{dtype})", {"dtype": _dtype}),
    # never drawn: triage's "writes into copies" rung lands a program's in-place writes in clones
    OpSpec("clone", "pointwise", 1, "{a0}.clone()", {}),
    OpSpec("sum", "reduction", 1, "torch.sum({a0}, {dim})", {"dim": _nonneg}),
    # a reduction that keeps the dtype: exact for int8 and fp16 over 2**31 elements, where a sum
    # overflows fp16 or (in eager) widens int8 to int64
    OpSpec("amax", "reduction", 1, "torch.amax({a0}, {dim})", {"dim": _nonneg}),
    # a Welford reduction (Inductor's welford_reduce: its own accumulators, split and cascade
    # choices), which no sum or amax reaches; correction=0 keeps a dim of size 1 finite
    OpSpec("var", "reduction", 1, "torch.var({a0}, {dim}, correction=0)", {"dim": _nonneg}),
]

#: scatter_reduce's reductions (``prod`` only over floats: an integer product wraps)
SCATTER_REDUCTIONS = ("sum", "prod", "amax", "amin", "mean")

# The ops users export around bmm and indexing: accumulating and filling index ops, masks,
# embeddings, sorts and scans, 2-D matmuls and attention. Each result is unique wherever eager's
# is: duplicate indices only where the op accumulates; argmax and sort indices over rows of
# distinct values (a permutation input).
_SPECS += [
    OpSpec("index_add", "indexing", 3, "torch.index_add({a0}, {dim}, {a1}, {a2})", {"dim": _nonneg}),
    OpSpec("index_copy", "indexing", 3, "torch.index_copy({a0}, {dim}, {a1}, {a2})", {"dim": _nonneg}),
    OpSpec("index_fill", "indexing", 2, "{a0}.index_fill({dim}, {a1}, {value})", {"dim": _nonneg, "value": is_int}),
    OpSpec("masked_fill", "indexing", 2, "{a0}.masked_fill({a1}, {value})", {"value": is_int}),
    OpSpec("where", "indexing", 3, "torch.where({a0}, {a1}, {a2})", {}),
    OpSpec("scatter_add", "indexing", 3, "torch.scatter_add({a0}, {dim}, {a1}, {a2})", {"dim": _nonneg}),
    OpSpec("scatter_reduce", "indexing", 3,
           "torch.scatter_reduce({a0}, {dim}, {a1}, {a2}, '{reduce}', include_self={include_self})",
           {"dim": _nonneg, "reduce": lambda v: v in SCATTER_REDUCTIONS, "include_self": lambda v: isinstance(v, bool)}),
    OpSpec("embedding", "indexing", 2, "torch.nn.functional.embedding({a1}, {a0})", {}),
    OpSpec("searchsorted", "indexing", 2, "torch.searchsorted(torch.sort({a0}).values, {a1})", {}),
    OpSpec("argmax", "reduction", 1, "torch.argmax({a0}, {dim})", {"dim": _nonneg}),
    OpSpec("argmin", "reduction", 1, "torch.argmin({a0}, {dim})", {"dim": _nonneg}),
    OpSpec("cumsum", "reduction", 1, "torch.cumsum({a0}, {dim})", {"dim": _nonneg}),
    OpSpec("sort_values", "reduction", 1, "torch.sort({a0}, {dim}, descending={descending}).values",
           {"dim": _nonneg, "descending": lambda v: isinstance(v, bool)}),
    OpSpec("sort_indices", "reduction", 1, "torch.sort({a0}, {dim}).indices", {"dim": _nonneg}),
    OpSpec("topk_values", "reduction", 1, "torch.topk({a0}, {k}, {dim}).values",
           {"dim": _nonneg, "k": lambda v: is_int(v) and v >= 1}),
    OpSpec("topk_indices", "reduction", 1, "torch.topk({a0}, {k}, {dim}).indices",
           {"dim": _nonneg, "k": lambda v: is_int(v) and v >= 1}),
    OpSpec("embedding_bag", "indexing", 2, "torch.nn.functional.embedding_bag({a1}, {a0}, mode='{mode}')",
           {"mode": lambda v: v in EMBEDDING_BAG_MODES}),
    OpSpec("one_hot", "indexing", 1, "torch.nn.functional.one_hot({a0}, {classes})",
           {"classes": lambda v: is_int(v) and 1 <= v <= 1024}),
    OpSpec("bucketize", "indexing", 2, "torch.bucketize({a1}, torch.sort({a0}).values, right={right})",
           {"right": lambda v: isinstance(v, bool)}),
    # sizes read from data (unbacked): each result's length is known only when it has run
    OpSpec("masked_select", "indexing", 2, "torch.masked_select({a0}, {a1})", {}),
    OpSpec("nonzero", "indexing", 1, "torch.nonzero({a0})", {}),
    OpSpec("repeat_interleave", "indexing", 2, "torch.repeat_interleave({a0}, {a1}, dim=0)", {}),
    OpSpec("mm", "matmul", 2, "torch.mm({a0}, {a1})", {}),
    OpSpec("addmm", "matmul", 3, "torch.addmm({a0}, {a1}, {a2})", {}),
    OpSpec("linear", "matmul", 3, "torch.nn.functional.linear({a0}, {a1}, {a2})", {}),
    OpSpec("sdpa", "matmul", 3, "torch.nn.functional.scaled_dot_product_attention({a0}, {a1}, {a2})", {}),
]

# In-place writes, each returning the tensor it wrote into (an input: the package must write it
# back; an intermediate: later reads and outputs that alias it see the write). Duplicate indices
# only where the write accumulates.
_WINDOW = "{a0}.narrow({dim}, {start}, {a0}.size({dim}) - {start} - {trim})"
_SPECS += [
    OpSpec("index_put_", "mutation", 3, "{a0}.index_put_(({a1},), {a2}, accumulate=True)", {}, mutates=True),
    OpSpec("index_add_", "mutation", 3, "{a0}.index_add_({dim}, {a1}, {a2})", {"dim": _nonneg}, mutates=True),
    OpSpec("scatter_add_", "mutation", 3, "{a0}.scatter_add_({dim}, {a1}, {a2})", {"dim": _nonneg}, mutates=True),
    OpSpec("masked_fill_", "mutation", 2, "{a0}.masked_fill_({a1}, {value})", {"value": is_int}, mutates=True),
    OpSpec("mul_", "mutation", 2, "{a0}.mul_({a1})", {}, mutates=True),
    OpSpec("narrow_copy_", "mutation", 2, "(" + _WINDOW + ".copy_({a1}), {a0})[1]",
           {"dim": _nonneg, "start": _nonneg, "trim": _nonneg}, mutates=True),
    OpSpec("narrow_add_", "mutation", 2, "(" + _WINDOW + ".add_({a1}), {a0})[1]",
           {"dim": _nonneg, "start": _nonneg, "trim": _nonneg}, mutates=True),
]

OPS: dict[str, OpSpec] = {spec.name: spec for spec in _SPECS}

#: ops that load or store through an index tensor's values (or a size read from data): the
#: addresses of their accesses come from data, so a wrong or missing bounds check in their
#: kernels reads or writes wild memory: most worker deaths in generated code are theirs
INDIRECT = frozenset({
    "index_select", "gather", "index", "take", "narrow_item", "narrow_to_item", "scatter", "index_put",
    "index_add", "index_copy", "index_fill", "scatter_add", "scatter_reduce", "embedding", "embedding_bag",
    "index_put_", "index_add_", "scatter_add_",
})


def index_prefix(dim: int) -> str:
    """The ``prefix`` attr of the ``index`` op that indexes dim ``dim``: ``x[:, :, idx]``."""
    return _index_prefix(dim)
