"""The Program: one test case as immutable plain data.

Everything downstream (rendering, compiling, checking, shrinking, storing, replaying) consumes
a Program and nothing else, so a Program read back from a corpus years later means exactly
what it meant when it was found. It is JSON round-trippable and carries a schema version;
``validate`` rejects anything that refers to unknown dims, tensors or ops, so rendering a
stored Program can never execute anything but the whitelisted ops in ``fuzzaoti.model.ops``.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from fuzzaoti.model import sizes
from fuzzaoti.model.configs import check_configs
from fuzzaoti.model.dtypes import DTYPES, EPS, FLOAT_DTYPES
from fuzzaoti.model.ops import OPS, is_int
from fuzzaoti.errors import InvalidProgram, one_line, short_repr as _short
from fuzzaoti.model.sizes import Size

SCHEMA_VERSION = 1

#: ``UPGRADES[n]`` turns a version-n program dict into a version-(n+1) one: a new schema version
#: adds its step here, so every older corpus, program file and known entry still reads (as the
#: corpus's own schema has ordered migrations). Version 1 is the first; none is needed yet.
UPGRADES: dict[int, Callable[[dict], dict]] = {}

DIM_KINDS = ("range", "auto", "dynamic")
"""``range``: ``Dim(name, min, max)``; ``auto``/``dynamic``: ``Dim.AUTO``/``Dim.DYNAMIC``."""

VALUE_KINDS = ("normal", "int", "bool", "perm", "distinct", "oob")

LAYOUTS = ("contiguous", "transposed", "offset", "expanded", "channels_last", "offset_at_run")
"""How an input's elements lie in memory, at export and at every run (``inputs.laid_out``):
``transposed``: its axes stored in reverse order; ``offset``: contiguous at a storage offset,
with poison before and after it in the storage; ``expanded``: axis 0 a stride-0 broadcast of
its first row; ``channels_last``: axis 1 stored innermost (NHWC order for a 4-D input, NLC for
3-D); ``offset_at_run``: contiguous and aligned in export's example, ``offset`` at every run (the
strides are the same, so export accepts it, but not the alignment Inductor assumed of the example:
on CUDA the package must copy the input to an aligned one, and copy back what it writes there).
Export records the strides of the example (as expressions of the sizes where it can), and
AOTInductor assumes them without a check (``AOTI_RUNTIME_CHECK_INPUTS`` is off by default), so a
run feeds the export's layout kind at its own sizes, and a run whose strides differ from export's
expressions is not checked."""


@dataclass(frozen=True)
class DimSpec:
    """A root dynamic dim: its declared range and the size used in the export-time example.

    ``max=None`` means unbounded. For ``auto``/``dynamic`` dims, ``min``/``max`` only bound
    the runtime sizes fuzzaoti feeds; torch.export decides the real range.
    """

    name: str
    min: int
    max: int | None
    hint: int
    kind: str = "range"

    @property
    def unbounded(self) -> bool:
        """No finite max in export (``Dim.AUTO``, ``Dim.DYNAMIC``, a ``Dim`` without max): where
        Inductor falls back on the hint for its index width, and a bounded max is the remedy."""
        return self.kind != "range" or self.max is None


@dataclass(frozen=True)
class Values:
    """How runtime values of an input are drawn.

    ``normal``: standard normal floats; ``int``: uniform integers in ``[low, high)`` where
    ``low``/``high`` are sizes (an index tensor into a dim of size ``n`` has ``low="-n"`` or 0
    and ``high="n"``); ``bool``: fair coin flips; ``perm``: each row along the last dim a random
    permutation of ``0..n-1`` (indices without duplicates, for order-independent scatters);
    ``distinct``: ``shape[0]`` distinct integers in ``[low, high)``, the same down every other
    axis (a few unique rows of a big dim, where a permutation of all of them would not fit);
    ``oob``: as ``int``, but the last element an index eager rejects (``high``, or ``low - 1``
    by a coin drawn from the same seed): eager raises, and the compiled model must raise too
    (``Program.rejects_indices``).
    """

    kind: str = "normal"
    low: Size | None = None
    high: Size | None = None


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: str
    shape: tuple[Size, ...]
    values: Values = Values()
    layout: str = "contiguous"


STATE_KINDS = ("parameter", "buffer")
STATE_MAX = 1 << 24  # elements of one module tensor: built on the host when the module is
SWAP_SEED = 1 << 30  # added to a module tensor's seed for the values swapped in after loading
#: The config under which a loaded package's constants are swapped for new values (``swaps_state``).
SWAP_CONFIG = ("aot_inductor.use_runtime_constant_folding", True)


@dataclass(frozen=True)
class StateSpec:
    """A tensor the module holds (``nn.Parameter`` or registered buffer): a constant AOTI embeds
    in the package, of a static shape, its values drawn as an input's are from ``seed``.
    Nodes read it by name as they read inputs; nothing writes into it."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    values: Values = Values()
    kind: str = "buffer"
    seed: int = 0


@dataclass(frozen=True)
class Node:
    """One op application: ``name = op(*args, **attrs)``; args name inputs or earlier nodes."""

    name: str
    op: str
    args: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...] = ()

    @property
    def attr(self) -> dict[str, Any]:
        return dict(self.attrs)


@dataclass(frozen=True)
class Program:
    dims: tuple[DimSpec, ...]
    inputs: tuple[InputSpec, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[str, ...]
    configs: tuple[tuple[str, Any], ...] = ()
    state: tuple[StateSpec, ...] = ()
    version: int = field(default=SCHEMA_VERSION)

    # ---- derived views -------------------------------------------------------------------
    @property
    def dim(self) -> dict[str, DimSpec]:
        return {d.name: d for d in self.dims}

    @property
    def leaves(self) -> tuple[InputSpec | StateSpec, ...]:
        """The tensors no node computes, which nodes read by name: the inputs, then the state."""
        return self.inputs + self.state

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(n.op for n in self.nodes)

    def with_(self, **changes: Any) -> Program:
        return replace(self, **changes)

    def state_as_inputs(self, names: set[str] | None = None) -> Program:
        """The program with its module state (or the tensors of it named) taken as inputs instead:
        the same computation, the values drawn per run as an input's are."""
        moved = tuple(t for t in self.state if names is None or t.name in names)
        return replace(self, state=tuple(t for t in self.state if t not in moved),
                       inputs=self.inputs + tuple(InputSpec(t.name, t.dtype, t.shape, t.values) for t in moved))

    def float_dtypes(self) -> set[str]:
        """Float dtypes the program computes in: those of its float inputs and cast targets."""
        names = {i.dtype for i in self.inputs if i.dtype in FLOAT_DTYPES}
        return names | {n.attr["dtype"] for n in self.nodes if n.op == "cast" and n.attr["dtype"] in FLOAT_DTYPES}

    def working_eps(self) -> float:
        """The rounding unit of the least precise float dtype the program computes in."""
        return max((EPS[d] for d in self.float_dtypes()), default=0.0)

    def mutated_inputs(self) -> tuple[int, ...]:
        """Positions of the inputs the program writes into in place: the first argument of a
        mutating op (``OpSpec.mutates``), followed back through the mutating ops it is the
        result of. A run judges them after the call as it judges the outputs."""
        mutated = self._written({i.name for i in self.inputs})
        return tuple(k for k, i in enumerate(self.inputs) if i.name in mutated)

    def mutated_state(self) -> tuple[str, ...]:
        """The module buffers the program writes into in place (found as ``mutated_inputs``):
        their values carry from one call to the next, in eager and in the package alike."""
        mutated = self._written({t.name for t in self.state})
        return tuple(t.name for t in self.state if t.name in mutated)

    def _written(self, names: set[str]) -> set[str]:
        """Which of ``names`` a mutating op writes into, directly or through another's result."""
        return set(self.write_roots(names).values())

    def write_roots(self, names: set[str]) -> dict[str, str]:
        """Each mutating node that writes into one of ``names`` (directly, or into the result of
        another such node), with the name it writes into, in program order."""
        root = {name: name for name in names}
        written = {}
        for n in self.nodes:
            if OPS[n.op].mutates and n.args[0] in root:
                root[n.name] = written[n.name] = root[n.args[0]]
        return written

    @property
    def rejects_indices(self) -> bool:
        """Does it feed an index eager rejects (``Values`` kind ``oob``) to an op whose result
        shows (``live``)? Then a run eager raises on is checked by the compiled model raising too,
        not dropped as invalid. An index only dead code reads is not: a compiler may drop the
        code, and its check with it, where eager runs it and raises."""
        live = self.live()
        return any(i.values.kind == "oob" and i.name in live for i in self.inputs)

    def live(self) -> set[str]:
        """The inputs, state and nodes that what a call shows depends on: its outputs, and the
        writes into its inputs and buffers (what a compiler may not drop)."""
        writes = self.write_roots({t.name for t in self.leaves})
        live = set(self.outputs)
        for n in reversed(self.nodes):
            if n.name in live or n.name in writes:
                live |= {n.name, *n.args}
        return live

    @property
    def swaps_state(self) -> bool:
        """Are the loaded package's constants swapped for new values before it runs? For a
        module with state compiled with runtime constant folding: the way a user updates
        weights without recompiling (``load_constants``), checked against an eager module
        built with the new values (seeds plus ``SWAP_SEED``). Without it Inductor folds
        computations on constants into the package at compile time, and a swap does not
        reach them: that is documented, not a bug."""
        return bool(self.state) and SWAP_CONFIG in self.configs

    def hint_env(self) -> dict[str, int]:
        return {d.name: d.hint for d in self.dims}

    # ---- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "dims": [
                {"name": d.name, "min": d.min, "max": d.max, "hint": d.hint, "kind": d.kind}
                for d in self.dims
            ],
            "inputs": [
                {
                    "name": i.name,
                    "dtype": i.dtype,
                    "shape": list(i.shape),
                    "values": {"kind": i.values.kind, "low": i.values.low, "high": i.values.high},
                    # (a contiguous input writes no key: the ids of programs that predate layouts stay)
                    **({} if i.layout == "contiguous" else {"layout": i.layout}),
                }
                for i in self.inputs
            ],
            "nodes": [
                {"name": n.name, "op": n.op, "args": list(n.args), "attrs": dict(n.attrs)}
                for n in self.nodes
            ],
            "outputs": list(self.outputs),
            "configs": dict(self.configs),
            # (a module without state writes no key: the ids of programs that predate state stay)
            **({} if not self.state else {"state": [
                {"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "kind": t.kind, "seed": t.seed,
                 "values": {"kind": t.values.kind, "low": t.values.low, "high": t.values.high}}
                for t in self.state]}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @property
    def id(self) -> str:
        """A content hash: equal programs share an id across machines and versions."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Program:
        try:
            data = upgrade(data)
            program = cls(
                dims=tuple(DimSpec(**d) for d in data["dims"]),
                inputs=tuple(
                    InputSpec(
                        name=i["name"],
                        dtype=i["dtype"],
                        shape=tuple(i["shape"]),
                        values=Values(**i.get("values", {})),
                        layout=i.get("layout", "contiguous"),
                    )
                    for i in data["inputs"]
                ),
                nodes=tuple(
                    Node(n["name"], n["op"], tuple(n["args"]), _freeze(n.get("attrs", {})))
                    for n in data["nodes"]
                ),
                outputs=tuple(data["outputs"]),
                configs=_freeze(data.get("configs", {})),
                state=tuple(StateSpec(name=t["name"], dtype=t["dtype"], shape=tuple(t["shape"]),
                                      values=Values(**t.get("values", {})), kind=t["kind"], seed=t["seed"])
                            for t in data.get("state", ())),
            )
        except InvalidProgram:
            raise
        except (KeyError, TypeError, AttributeError, ValueError, RecursionError) as exc:
            raise InvalidProgram(f"malformed program JSON: {type(exc).__name__}: {one_line(str(exc), 200)}") from None
        return program.validate()

    @classmethod
    def from_json(cls, text: str) -> Program:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # (too deep, or an int of too many digits)
            raise InvalidProgram(f"program is not valid JSON: {one_line(str(exc), 200)}") from None
        if not isinstance(data, dict):
            raise InvalidProgram("program JSON must be an object")
        return cls.from_dict(data)

    # ---- validation ----------------------------------------------------------------------
    def validate(self) -> Program:
        """Return self, or raise InvalidProgram naming the first problem found."""
        names: set[str] = set()

        def fresh(name: str, what: str) -> None:
            if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
                raise InvalidProgram(f"{what} name {_short(name)} is not a plain identifier")
            if name in names:
                raise InvalidProgram(f"name {name!r} is defined twice")
            names.add(name)

        for d in self.dims:
            fresh(d.name, "dim")
            _validate_dim(d)
        dims = {d.name for d in self.dims}

        def check_size(s: Size, where: str) -> None:
            unknown = set(sizes.parse(s).dims) - dims
            if unknown:
                raise InvalidProgram(f"{where} uses undeclared dim(s) {sorted(unknown)}")

        tensors: set[str] = set()
        for i in self.inputs:
            fresh(i.name, "input")
            if not isinstance(i.dtype, str) or i.dtype not in DTYPES:
                raise InvalidProgram(f"input {i.name!r} has unknown dtype {_short(i.dtype)}")
            if not isinstance(i.values.kind, str) or i.values.kind not in VALUE_KINDS:
                raise InvalidProgram(f"input {i.name!r} has unknown value kind {_short(i.values.kind)}")
            for s in i.shape:
                check_size(s, f"input {i.name!r}")
            if i.values.kind in ("int", "distinct", "oob"):
                if i.values.low is None or i.values.high is None:
                    raise InvalidProgram(f"input {i.name!r}: int values need low and high")
                check_size(i.values.low, f"input {i.name!r} values")
                check_size(i.values.high, f"input {i.name!r} values")
            tensors.add(i.name)
        for t in self.state:
            fresh(t.name, "state")
            _validate_state(t)
            tensors.add(t.name)
        for n in self.nodes:
            fresh(n.name, "node")
            spec = OPS.get(n.op) if isinstance(n.op, str) else None
            if spec is None:
                raise InvalidProgram(f"node {n.name!r} uses unknown op {_short(n.op)}")
            missing = [a for a in n.args if not isinstance(a, str) or a not in tensors]
            if missing:
                raise InvalidProgram(f"node {n.name!r} uses undefined tensor(s) {_short(missing)}")
            spec.check(n)
            tensors.add(n.name)
        if not self.outputs:
            raise InvalidProgram("program has no outputs")
        for o in self.outputs:
            if not isinstance(o, str) or o not in tensors:
                raise InvalidProgram(f"output {_short(o)} is not a defined tensor")
        _validate_writes(self)
        check_configs(self.configs)
        return self


def _freeze(mapping: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Sorted, hashable form of a JSON object whose values are JSON scalars or lists."""
    if not isinstance(mapping, Mapping):
        raise InvalidProgram(f"expected a JSON object, got {_short(mapping)}")
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in mapping.items()))


def _validate_state(t: StateSpec) -> None:
    """Raise InvalidProgram unless ``t`` is a module tensor fuzzaoti can build: a known dtype,
    kind and value kind, a static shape, int value bounds and a seed below 2**31."""
    if not isinstance(t.dtype, str) or t.dtype not in DTYPES:
        raise InvalidProgram(f"state {t.name!r} has unknown dtype {_short(t.dtype)}")
    if not isinstance(t.kind, str) or t.kind not in STATE_KINDS:
        raise InvalidProgram(f"state {t.name!r} has unknown kind {_short(t.kind)}; use one of {STATE_KINDS}")
    if not isinstance(t.values.kind, str) or t.values.kind not in VALUE_KINDS:
        raise InvalidProgram(f"state {t.name!r} has unknown value kind {_short(t.values.kind)}")
    if not all(is_int(n) and 0 <= n <= STATE_MAX for n in t.shape) or math.prod(t.shape) > STATE_MAX:
        raise InvalidProgram(f"state {t.name!r} needs a static shape of ints of at most {STATE_MAX} "
                             f"elements, got {_short(t.shape)}")
    bounds = (t.values.low, t.values.high)
    needed = t.values.kind in ("int", "distinct")
    if not all((is_int(v) and abs(v) <= STATE_MAX) or (v is None and not needed) for v in bounds):
        raise InvalidProgram(f"state {t.name!r}: values need int low and high (or none, unless drawn as ints), "
                             f"got {_short(bounds)}")
    if not is_int(t.seed) or not 0 <= t.seed < 2**31:
        raise InvalidProgram(f"state {t.name!r} needs a seed in [0, 2**31), got {_short(t.seed)}")


def _validate_writes(program: Program) -> None:
    """Raise InvalidProgram if an op writes into a parameter (export refuses it), into any state
    of a program whose constants are swapped after loading (``swaps_state``: a buffer the package
    writes is not a constant to swap), or an input's layout does not fit it (``layouts_for``:
    whether it is written into decides). A buffer may be written: its value carries from call to
    call (``mutated_state``)."""
    kinds = {t.name: t.kind for t in program.state}
    for name in program.mutated_state():
        if kinds[name] != "buffer" or program.swaps_state:
            why = " (a parameter)" if kinds[name] != "buffer" else " of a program whose state is swapped"
            raise InvalidProgram(f"a node writes into module state {name!r}{why}")
    written = {program.inputs[k].name for k in program.mutated_inputs()}
    for i in program.inputs:
        _validate_layout(i, i.name in written)


def layouts_for(i: InputSpec, written: bool, piled: bool = False) -> tuple[str, ...]:
    """The layouts ``i`` may take, contiguous first: ``transposed`` needs 2 axes,
    ``channels_last`` 3 or more; ``expanded`` repeats axis 0's first row, so it needs an axis, is
    never written into (eager refuses an in-place write into overlapping memory) and never holds
    indices drawn distinct down axis 0 (``distinct``, or a 1-D permutation). ``piled``: the
    generator's own rule, not validation's: ``i`` is the index of an op that adds into its
    targets, which an expanded index would pile onto the same few (tens of half-precision adds
    into one element, summed in another order than eager's: 56 bf16 adds came out 1.4 off
    against a tolerance of 1.29, and the same program in float32 passes)."""
    rank = len(i.shape)
    distinct = i.values.kind == "distinct" or (i.values.kind == "perm" and rank < 2)
    repeats_ok = rank >= 1 and not written and not piled and not distinct
    return tuple(name for name, fits in (("contiguous", True), ("transposed", rank >= 2), ("offset", True),
                                         ("expanded", repeats_ok), ("channels_last", rank >= 3),
                                         ("offset_at_run", True)) if fits)


def _validate_layout(i: InputSpec, written: bool) -> None:
    """Raise InvalidProgram unless ``i``'s layout is one of ``layouts_for`` it."""
    if not isinstance(i.layout, str) or i.layout not in LAYOUTS:
        raise InvalidProgram(f"input {i.name!r} has unknown layout {_short(i.layout)}; use one of {LAYOUTS}")
    if i.layout not in layouts_for(i, written):
        raise InvalidProgram(f"input {i.name!r}: layout {i.layout!r} does not fit a {len(i.shape)}-D "
                             f"{'written' if written else i.values.kind} input")


def _validate_dim(d: DimSpec) -> None:
    """Raise InvalidProgram unless ``d`` is a dim export can take: a known kind, int bounds, its hint in range."""
    if not isinstance(d.kind, str) or d.kind not in DIM_KINDS:
        raise InvalidProgram(f"dim {d.name!r} has unknown kind {_short(d.kind)}; use one of {DIM_KINDS}")
    if not all(is_int(v) for v in (d.min, d.hint)) or d.min < 0:
        raise InvalidProgram(f"dim {d.name!r} needs int min >= 0 and hint, got {_short(d.min)} and {_short(d.hint)}")
    if d.max is not None and (not is_int(d.max) or d.max < d.min):
        raise InvalidProgram(f"dim {d.name!r} has max={_short(d.max)} < min={d.min}")
    if d.hint < d.min or (d.max is not None and d.hint > d.max):
        raise InvalidProgram(f"dim {d.name!r} has hint={d.hint} outside [{d.min}, {d.max}]")


def upgrade(data: Mapping[str, Any]) -> dict:
    """``data`` (a program dict of any version this fuzzaoti knows) at ``SCHEMA_VERSION``,
    through each ``UPGRADES`` step in turn; a version newer than this fuzzaoti, or none, is an
    InvalidProgram."""
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise InvalidProgram(f"program schema version {version!r} is not a version (this fuzzaoti reads 1 to "
                             f"{SCHEMA_VERSION})")
    if version > SCHEMA_VERSION:
        raise InvalidProgram(f"program schema version {version} is newer than this fuzzaoti reads "
                             f"({SCHEMA_VERSION}): upgrade fuzzaoti")
    data = dict(data)
    while version < SCHEMA_VERSION:
        data = dict(UPGRADES[version](data), version=version + 1)
        version += 1
    return data
