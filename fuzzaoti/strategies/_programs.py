"""The program strategy: random bmm / int64-indexing programs with dynamic shape ranges.

Programs are built forwards from a *core* op (a batched matmul or an indexing op) whose
operands are made to fit it, then extended with fusable epilogues. Every index tensor's values
are declared as a range in terms of the dims it indexes, so a program is valid at every
runtime shape inside its declared ranges by construction: a failure is a compiler bug, never
a bad input. Hypothesis shrinks towards the first choice everywhere: one bounded dim, float32,
``bmm``, no epilogue, default compile configs.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from fuzzaoti import compat
from fuzzaoti.model import sizes
from fuzzaoti.model.concrete import tensor_bytes
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model.ops import index_prefix
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
from fuzzaoti.strategies._large import LARGE_CORE
from fuzzaoti.strategies._profiles import Profile, get_profile

FLOAT_DTYPES = ("float32", "float16", "bfloat16")
INDEX_DTYPES = ("int64", "int32")
CORE_OPS = ("bmm", "matmul", "baddbmm", "heads_bmm", "index_select", "gather", "index", "narrow", "take", "select",
            "narrow_item", "narrow_to_item",
            "scatter", "index_put", "arange_index")
LARGE_OPS = tuple(LARGE_CORE)
DIM_KINDS = ("bounded", "unbounded", "auto", "dynamic")
#: The Inductor config sets programs are compiled with, per device, by the name ``fuzz
#: --configs`` takes (a campaign draws them all unless told one).
CONFIG_SETS: dict[str, dict[str, dict[str, Any]]] = {
    "cpu": {"default": {}},
    "cuda": {
        "default": {},
        "max_autotune": {"max_autotune": True, "max_autotune_gemm_backends": "TRITON"},
        "native_matmul": {"triton.native_matmul": True},
    },
}


class _Builder:
    """Mutable state while one program is drawn; ``program()`` freezes it."""

    def __init__(self, draw, profile: Profile):
        self.draw, self.profile = draw, profile
        self.dims: list[DimSpec] = []
        self.used_dims: set[str] = set()  # dims some input axis uses directly (roots for derived)
        self.inputs: list[InputSpec] = []
        self.nodes: list[Node] = []
        self.shapes: dict[str, tuple[sizes.Size, ...]] = {}
        self.dtypes: dict[str, str] = {}

    # ---- sizes -----------------------------------------------------------------------------
    def new_dim(self) -> str:
        draw, prof = self.draw, self.profile
        kind = draw(st.sampled_from(DIM_KINDS))
        low = draw(st.sampled_from((2, 1, 3)))
        # torch.export rejects Dim(min=max): a dynamic dim spans at least two sizes
        high = None if kind == "unbounded" else low + 1 + draw(st.integers(0, prof.max_dim - low - 1))
        top = high if high is not None else prof.cap
        hint = draw(st.integers(max(low, 2), max(top, 2)))
        name = f"d{len(self.dims)}"
        spec_kind = "range" if kind in ("bounded", "unbounded") else kind
        self.dims.append(DimSpec(name, low, high if spec_kind == "range" else top, hint, spec_kind))
        return name

    def size(self, allow_derived: bool = True) -> sizes.Size:
        """A size for a new input axis: a constant, an existing dim, a new dim, or derived."""
        choice = self.draw(st.sampled_from(("new", "existing", "const", "derived")))
        ranged = [d.name for d in self.dims if d.kind == "range" and d.name in self.used_dims]
        if choice == "existing" and self.dims:
            return self.draw(st.sampled_from([d.name for d in self.dims]))
        if choice == "const":
            return self.draw(st.integers(1, self.profile.max_const))
        if choice == "derived" and allow_derived and ranged:
            root = self.draw(st.sampled_from(ranged))
            return self.draw(st.sampled_from((f"2*{root}", f"{root}+1")))
        return self.new_dim()

    def min_of(self, size: sizes.Size) -> int:
        ranges = {d.name: (d.min, d.max if d.max is not None else self.profile.cap) for d in self.dims}
        return sizes.parse(size).bounds(ranges)[0]

    def min_bytes(self) -> int:
        """Bytes of the inputs drawn so far at their smallest sizes: the room a static input
        drawn now must leave them (runtime shapes shrink dynamic dims to fit, never static ones)."""
        return sum(tensor_bytes(spec.dtype, map(self.min_of, spec.shape)) for spec in self.inputs)

    # ---- tensors ---------------------------------------------------------------------------
    def add_input(self, dtype: str, shape: tuple[sizes.Size, ...], values: Values | None = None) -> str:
        name = f"x{len(self.inputs)}"
        if values is None:
            values = Values("normal") if dtype in FLOAT_DTYPES else Values("int", -100, 100)
        self.inputs.append(InputSpec(name, dtype, tuple(sizes.canonical(s) for s in shape), values))
        self.used_dims |= {n for s in shape for n in sizes.parse(s).dims}
        self.shapes[name], self.dtypes[name] = tuple(shape), dtype
        return name

    def add_node(self, op: str, args: tuple[str, ...], shape, out_dtype: str, **attrs: Any) -> str:
        name = f"t{len(self.nodes)}"
        self.nodes.append(Node(name, op, args, tuple(sorted(attrs.items()))))
        self.shapes[name], self.dtypes[name] = tuple(shape), out_dtype
        return name

    def index_input(self, shape, bound: sizes.Size, negative: bool, dtypes=INDEX_DTYPES) -> str:
        """An index tensor of ``shape`` whose values index a dim of size ``bound``."""
        dtype = self.draw(st.sampled_from(dtypes))
        low = sizes.negate(bound) if negative else 0
        return self.add_input(dtype, shape, Values("int", low, sizes.canonical(bound)))

    def exportable(self, size: sizes.Size) -> bool:
        """Can an input axis have this size? torch.export takes ints, dims, and ``a*d+b`` of a
        ``Dim`` with a range (not of ``Dim.AUTO``/``Dim.DYNAMIC``)."""
        affine = sizes.parse(size)
        if not affine.coefs:
            return True
        if len(affine.coefs) > 1 or affine.coefs[0][1] < 1:
            return False
        (name, coef), = affine.coefs
        plain = coef == 1 and affine.const == 0
        return plain or (self.dims_by_name()[name].kind == "range" and name in self.used_dims)

    def dims_by_name(self) -> dict[str, DimSpec]:
        return {d.name: d for d in self.dims}

    def program(self, outputs: tuple[str, ...], configs: dict[str, Any]) -> Program:
        return Program(tuple(self.dims), tuple(self.inputs), tuple(self.nodes), outputs,
                       tuple(sorted(configs.items()))).validate()


# ---- core ops --------------------------------------------------------------------------------
def _matmul(b: _Builder, op: str) -> str:
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


def heads_bmm(b: _Builder, batch: sizes.Size, heads: sizes.Size, dtypes=FLOAT_DTYPES) -> str:
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


def _source(b: _Builder, rank: int) -> str:
    """The tensor an indexing op reads: a fresh input, or the latest node when there is one."""
    if b.nodes and len(b.shapes[b.nodes[-1].name]) >= rank and b.draw(st.booleans()):
        return b.nodes[-1].name
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES))
    return b.add_input(dtype, tuple(b.size() for _ in range(rank)))


def _index_select(b: _Builder) -> str:
    x = _source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    length = b.size()
    idx = b.index_input((length,), shape[dim], negative=False)
    out = shape[:dim] + (length,) + shape[dim + 1:]
    return b.add_node("index_select", (x, idx), out, b.dtypes[x], dim=dim)


def _gather(b: _Builder) -> str:
    x = _source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    length = b.size()
    idx_shape = shape[:dim] + (length,) + shape[dim + 1:]
    idx = b.index_input(idx_shape, shape[dim], negative=False)
    return b.add_node("gather", (x, idx), idx_shape, b.dtypes[x], dim=dim)


def _index(b: _Builder) -> str:
    x = _source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, min(len(shape) - 1, 2)))
    idx_shape = tuple(b.size() for _ in range(b.draw(st.integers(1, 2))))
    idx = b.index_input(idx_shape, shape[dim], negative=b.draw(st.booleans()))
    out = shape[:dim] + idx_shape + shape[dim + 1:]
    return b.add_node("index", (x, idx), out, b.dtypes[x], prefix=index_prefix(dim))


def _narrow(b: _Builder) -> str:
    x = _source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    # keep two elements at the smallest size: a length that can reach 1 makes export specialise
    room = b.min_of(shape[dim]) - 2
    start = b.draw(st.integers(0, max(room, 0)))
    trim = b.draw(st.integers(0, max(room - start, 0)))
    length = sizes.add(shape[dim], -(start + trim))
    out = shape[:dim] + (length,) + shape[dim + 1:]
    return b.add_node("narrow", (x,), out, b.dtypes[x], dim=dim, start=start, trim=trim)


def _take(b: _Builder) -> str:
    size = b.size()
    x = b.add_input(b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES)), (size,))
    idx_shape = tuple(b.size() for _ in range(b.draw(st.integers(1, 2))))
    idx = b.index_input(idx_shape, size, negative=b.draw(st.booleans()), dtypes=("int64",))
    return b.add_node("take", (x, idx), idx_shape, b.dtypes[x])


def _select(b: _Builder) -> str:
    x = _source(b, 2)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    index = b.draw(st.sampled_from((0, -1, b.min_of(shape[dim]) - 1)))
    return b.add_node("select", (x,), shape[:dim] + shape[dim + 1:], b.dtypes[x], dim=dim, index=index)


def _narrow_item(b: _Builder) -> str:
    """A fixed-length window whose start is read from data (``.item()``): an unbacked offset."""
    x = _source(b, 1)
    shape = b.shapes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    length = b.draw(st.integers(1, max(1, b.min_of(shape[dim]))))
    start = b.add_input("int64", (), Values("int", 0, sizes.add(shape[dim], 1 - length)))
    return b.add_node("narrow_item", (x, start), shape[:dim] + (length,) + shape[dim + 1:], b.dtypes[x],
                      dim=dim, length=length)


def _narrow_to_item(b: _Builder) -> str:
    """A prefix whose length is read from data, summed over: the reduction runs over an unbacked
    size (u0) and the result's shape is static again."""
    x = _source(b, 2)
    shape, dtype = b.shapes[x], b.dtypes[x]
    dim = b.draw(st.integers(0, len(shape) - 1))
    length = b.add_input("int64", (), Values("int", 1, sizes.add(shape[dim], 1)))
    rest = shape[:dim] + shape[dim + 1:]
    prefix = b.add_node("narrow_to_item", (x, length), shape[:dim] + ("u",) + shape[dim + 1:], dtype, dim=dim)
    return b.add_node("sum", (prefix,), rest, dtype if dtype in FLOAT_DTYPES else "int64", dim=dim)


def _scatter(b: _Builder) -> str:
    """scatter along the last dim with a permutation per row: no duplicate targets, so the
    result does not depend on the order writes land in."""
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES))
    shape = (b.size(), b.size())
    x = b.add_input(dtype, shape)
    idx = b.add_input("int64", shape, Values("perm"))
    src = b.add_input(dtype, shape)
    return b.add_node("scatter", (x, idx, src), shape, dtype, dim=1)


def _index_put(b: _Builder) -> str:
    dtype = b.draw(st.sampled_from(FLOAT_DTYPES + INDEX_DTYPES))
    shape = (b.size(), b.size())
    x = b.add_input(dtype, shape)
    idx = b.add_input("int64", shape[:1], Values("perm"))  # a permutation of the rows: unique
    values = b.add_input(dtype, shape)
    return b.add_node("index_put", (x, idx, values), shape, dtype)


#: multipliers of the arange index: past 2**31 (a literal int32 cannot hold), and below it but
#: past 2**31 once multiplied by 2 or 3 (only the product overflows int32: silent wrong indices)
ARANGE_MULTS = (2**31 + 1, 2**31 + 7, 2**31 + 12345, 2**30 + 3, 1_000_000_007)


def _arange_index(b: _Builder) -> str:
    x = _source(b, 1)
    mult = b.draw(st.sampled_from(ARANGE_MULTS))
    offset = b.draw(st.integers(0, 5))
    return b.add_node("arange_index", (x,), b.shapes[x], b.dtypes[x], mult=mult, offset=offset)


_CORE = {
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
    **LARGE_CORE,
}


# ---- glue: views and layout changes between and after core ops ------------------------------
GLUE_OPS = ("reshape", "view", "permute", "transpose", "flatten", "unsqueeze", "chunk")


def _glue(b: _Builder, t: str, tries: int = 3) -> str:
    """A reshape/view/permute/transpose/flatten/unsqueeze/chunk of ``t`` that is valid at every
    runtime size: reshapes only regroup axes whose product stays affine in the dims (``(4, d, 2)
    -> (8, d)``), chunks only split an axis its chunk count divides. Draws another kind when one
    does not fit ``t``'s shape, and returns ``t`` itself after ``tries`` misses."""
    for _ in range(tries):
        out = _one_glue(b, t, b.draw(st.sampled_from(GLUE_OPS)))
        if out != t:
            return out
    return t


def _one_glue(b: _Builder, t: str, kind: str) -> str:
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
def _epilogue(b: _Builder, t: str) -> str:
    dtype, shape = b.dtypes[t], b.shapes[t]
    is_float = dtype in FLOAT_DTYPES
    kinds = ["unary", "binary", "affine", "cast", "cat", "glue", "glue"] + (["sum", "split"] if len(shape) > 1 else [])
    kind = b.draw(st.sampled_from(kinds))
    if kind == "glue":
        return _glue(b, t)
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


def _large_epilogue(b: _Builder, t: str) -> str:
    """A unary pointwise op fused onto a large core op's result (no new tensor of its size)."""
    ops = ("neg", "abs") + (("relu", "sigmoid", "tanh") if b.dtypes[t] in FLOAT_DTYPES else ())
    return b.add_node(b.draw(st.sampled_from(ops)), (t,), b.shapes[t], b.dtypes[t])


@st.composite
def _programs(draw, profile: Profile, ops: tuple[str, ...], max_epilogue: int,
              configs: tuple[dict[str, Any], ...]) -> Program:
    b = _Builder(draw, profile)
    t = _CORE[draw(st.sampled_from(ops))](b)
    if profile.big_sizes:  # one big family a program, and at most a unary op fused onto it: every
        # extra big tensor halves the sizes a run can reach within --max-bytes
        if max_epilogue and draw(st.booleans()):
            t = _large_epilogue(b, t)
        return b.program((t,), draw(st.sampled_from(configs)))
    outputs = [t]
    if draw(st.booleans()):  # chain a second core op onto the first one's result, maybe reshaped
        if draw(st.booleans()):
            _glue(b, t)  # the second core op reads the latest node
        t = _CORE[draw(st.sampled_from(ops))](b)
        outputs = [t]
    for _ in range(draw(st.integers(0, max_epilogue))):
        t = _epilogue(b, t)
    if len(b.nodes) > 1 and draw(st.booleans()):
        outputs.append(b.nodes[0].name)
    if outputs[-1] != t:
        outputs.insert(0, t)
    return b.program(tuple(dict.fromkeys(outputs)), draw(st.sampled_from(configs)))


#: Compile cost per program of a config that makes a compile dearer, relative to the defaults,
#: in worker-seconds per program of H200 campaigns (torch 2.11, 2 workers; printed by the
#: campaign summary): defaults 1.1, max_autotune 7.0 and 8.6 (every GEMM's Triton choices
#: compiled and timed, which batching does not share), triton.native_matmul 3.3 in two runs.
#: (An older engine measured 1.7, 5.4 and 7.4: re-measure when the engine changes.)
CONFIG_COST = {"max_autotune": 7, "triton.native_matmul": 3}


def config_cost(configs: dict[str, Any]) -> int:
    """What a program compiled with ``configs`` costs, in default-compile units (its dearest key)."""
    return max([CONFIG_COST.get(key, 1) for key in configs] or [1])


def named_config_sets(device: str) -> dict[str, dict[str, Any]]:
    """The compile config sets drawn on ``device`` that the installed torch supports, by name."""
    if device not in CONFIG_SETS:
        raise InvalidArgument(f"device={device!r} must be one of {sorted(CONFIG_SETS)}")
    return {name: c for name, c in CONFIG_SETS[device].items() if all(map(compat.config_supported, c))}


def config_sets(device: str) -> list[dict[str, Any]]:
    """The compile config sets drawn on ``device`` that the installed torch supports."""
    return list(named_config_sets(device).values())


def batch_config_sets(device: str, only: str | None = None) -> list[dict[str, Any]]:
    """``config_sets(device)``, each repeated in inverse proportion to its ``CONFIG_COST``: a
    campaign that draws each batch's configs from this list gives every config set about the
    same compile time, rather than the same number of batches (which spent 85% of an H200
    campaign's compile time in the two dear sets). ``only``: just the set of that name (a
    campaign aimed at one Inductor feature, or a benchmark that compares like with like)."""
    if only is not None:
        named = named_config_sets(device)
        if only not in named:
            why = "is not supported by this torch" if only in CONFIG_SETS[device] else f"is not drawn on {device}"
            raise InvalidArgument(f"config set {only!r} {why}: use one of {', '.join(named)}")
        return [named[only]]
    sets = config_sets(device)
    costs = [config_cost(c) for c in sets]
    return [c for c, cost in zip(sets, costs) for _ in range(round(max(costs) / cost))]


def programs(device: str = "cpu", profile: str = "small", ops: tuple[str, ...] | None = None,
             max_epilogue: int = 3, max_bytes: int | None = None,
             configs: dict[str, Any] | None = None) -> st.SearchStrategy[Program]:
    """Valid AOTI test programs: a bmm/matmul or int64-indexing core op, maybe a second one
    chained on its result, then up to ``max_epilogue`` fusable pointwise/cast/reduction ops.

    Dims are bounded, unbounded, ``Dim.AUTO`` or ``Dim.DYNAMIC``, shared across inputs or
    derived (``2*d``, ``d+1``); index tensors are int64 or int32 with values valid at every
    size in range. Shrinks towards one bounded dim, float32 ``bmm``, no epilogue, default configs.
    ``profile="large"`` draws the large core ops (``strategies/_large.py``) within ``max_bytes``.
    ``configs`` fixes the Inductor configs (one of ``config_sets(device)``) instead of drawing
    them: programs that share configs can be compiled as one module.
    """
    supported = config_sets(device)
    if configs is not None and configs not in supported:
        raise InvalidArgument(f"configs={configs!r} must be one of {supported}")
    prof = get_profile(profile, max_bytes)
    if ops is None:
        ops = LARGE_OPS if prof.big_sizes else CORE_OPS
    unknown = set(ops) - set(_CORE)
    if not ops or unknown:
        raise InvalidArgument(f"ops={ops!r} must be a non-empty subset of {CORE_OPS + LARGE_OPS}")
    if set(ops) & set(LARGE_OPS) and not prof.big_sizes:
        raise InvalidArgument(f"ops {sorted(set(ops) & set(LARGE_OPS))} need profile='large', not {profile!r}")
    if max_epilogue < 0:
        raise InvalidArgument(f"Cannot have max_epilogue={max_epilogue} < 0")
    return _programs(prof, tuple(ops), max_epilogue, tuple(supported) if configs is None else (configs,))
