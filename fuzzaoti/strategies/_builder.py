"""The mutable builder a program is drawn with: dims, inputs, nodes and their symbolic shapes.

Every strategy module draws through one ``Builder``; ``program()`` freezes and validates it.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from fuzzaoti.model import sizes
from fuzzaoti.model.concrete import tensor_bytes
from fuzzaoti.errors import InvalidProgram
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values, layouts_for
from fuzzaoti.strategies.profiles import Profile
from fuzzaoti.strategies._state import with_state

FLOAT_DTYPES = ("float32", "float16", "bfloat16")
INDEX_DTYPES = ("int64", "int32")
DIM_KINDS = ("bounded", "unbounded", "auto", "dynamic")
# the values of an integer data input: both signs, or one (shrinking towards both). A max over
# int8 values all below 0, or a min over values all above, is where Inductor's CPU vector
# reductions went wrong (inactive lanes' zeros won; pytorch#191499): mixed values never show it
INT_RANGES = ((-100, 100), (-100, 0), (1, 100))
#: the share of small programs with an index input that feed one index eager rejects (``Values``
#: kind ``oob``): a run the compiled model must refuse as eager does (CPU only: on CUDA, Inductor's
#: bounds check is a device-side assert, which poisons the worker's CUDA context every time)
REJECTED_INDEX_SHARE = 1 / 8
#: ops whose index (their second argument) may name one target many times, each adding into it
ACCUMULATING = frozenset({"index_add", "index_add_", "index_put_", "scatter_add", "scatter_add_", "scatter_reduce",
                          "embedding_bag"})


class Builder:
    """Mutable state while one program is drawn; ``program()`` freezes it."""

    def __init__(self, draw, profile: Profile):
        self.draw, self.profile = draw, profile
        self.dims: list[DimSpec] = []
        self.used_dims: set[str] = set()  # dims some input axis uses directly (roots for derived)
        self.inputs: list[InputSpec] = []
        self.nodes: list[Node] = []
        self.shapes: dict[str, tuple[sizes.Size, ...]] = {}
        self.dtypes: dict[str, str] = {}
        self.indices: set[str] = set()  # inputs of integer values in a range an op checks

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
    def add_input(self, dtype: str, shape: tuple[sizes.Size, ...], values: Values | None = None,
                  index: bool = True) -> str:
        """A new input; one of integer ``values`` given here is an index (``self.indices``) unless
        ``index`` says not (a count, as repeat_interleave's repeats)."""
        name = f"x{len(self.inputs)}"
        if values is not None and values.kind == "int" and index:
            self.indices.add(name)
        if values is None and dtype in FLOAT_DTYPES:
            values = Values("normal")
        elif values is None:
            values = Values("int", *self.draw(st.sampled_from(INT_RANGES)))
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

    def feedable(self, name: str) -> bool:
        """Can an input be drawn with ``name``'s shape, or a part of it? Each axis exportable
        (``exportable``): a node's axis may be a product of dims (an attention-style bmm), an
        unbacked size, or a size derived from a ``Dim.AUTO`` (a narrow of it), which no input
        can declare."""
        try:
            return all(self.exportable(s) for s in self.shapes[name])
        except (InvalidProgram, KeyError):
            return False

    def dims_by_name(self) -> dict[str, DimSpec]:
        return {d.name: d for d in self.dims}

    def program(self, outputs: tuple[str, ...], configs: dict[str, Any], small: bool = False,
                rejected_index: bool = False) -> Program:
        """The drawn program; ``small`` (the small profile's), maybe with module state
        (``_state.with_state``), each input in a drawn layout (``layouts_for``), and where
        ``rejected_index`` allows, maybe one index eager rejects (``REJECTED_INDEX_SHARE``)."""
        program = Program(tuple(self.dims), tuple(self.inputs), tuple(self.nodes), outputs,
                          tuple(sorted(configs.items()))).validate()
        if not small:
            return program
        program = with_state(self.draw, program)
        written = {program.inputs[k].name for k in program.mutated_inputs()}
        piled = {n.args[1] for n in program.nodes if n.op in ACCUMULATING}
        laid = tuple(replace(i, layout=self.draw(st.sampled_from(layouts_for(i, i.name in written, i.name in piled))))
                     for i in program.inputs)
        live = program.live()  # (an index only dead code reads: a compiler may drop its check)
        indices = [i.name for i in laid if i.name in self.indices and i.name in live]
        if rejected_index and indices and self._chance(REJECTED_INDEX_SHARE):  # (a shrink ends at none)
            bad = self.draw(st.sampled_from(indices))
            laid = tuple(replace(i, values=replace(i.values, kind="oob")) if i.name == bad else i for i in laid)
        return program.with_(inputs=laid).validate()

    def _chance(self, share: float) -> bool:
        """True ``share`` of the time, from one drawn integer through a seeded generator (Hypothesis
        draws boundary integers far more often than their share: ``_programs._core_op``)."""
        seed = self.draw(st.integers(0, 2**32 - 1))
        return seed != 0 and random.Random(seed).random() < share
