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

VALUE_KINDS = ("normal", "int", "bool", "perm", "distinct")


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
    axis (a few unique rows of a big dim, where a permutation of all of them would not fit).
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
    version: int = field(default=SCHEMA_VERSION)

    # ---- derived views -------------------------------------------------------------------
    @property
    def dim(self) -> dict[str, DimSpec]:
        return {d.name: d for d in self.dims}

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(n.op for n in self.nodes)

    def with_(self, **changes: Any) -> Program:
        return replace(self, **changes)

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
        root = {i.name: i.name for i in self.inputs}
        mutated = set()
        for n in self.nodes:
            if OPS[n.op].mutates:
                target = root.get(n.args[0])
                root[n.name] = target
                if target is not None:
                    mutated.add(target)
        return tuple(k for k, i in enumerate(self.inputs) if i.name in mutated)

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
                }
                for i in self.inputs
            ],
            "nodes": [
                {"name": n.name, "op": n.op, "args": list(n.args), "attrs": dict(n.attrs)}
                for n in self.nodes
            ],
            "outputs": list(self.outputs),
            "configs": dict(self.configs),
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
                    )
                    for i in data["inputs"]
                ),
                nodes=tuple(
                    Node(n["name"], n["op"], tuple(n["args"]), _freeze(n.get("attrs", {})))
                    for n in data["nodes"]
                ),
                outputs=tuple(data["outputs"]),
                configs=_freeze(data.get("configs", {})),
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
            if i.values.kind in ("int", "distinct"):
                if i.values.low is None or i.values.high is None:
                    raise InvalidProgram(f"input {i.name!r}: int values need low and high")
                check_size(i.values.low, f"input {i.name!r} values")
                check_size(i.values.high, f"input {i.name!r} values")
            tensors.add(i.name)
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
        check_configs(self.configs)
        return self


def _freeze(mapping: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Sorted, hashable form of a JSON object whose values are JSON scalars or lists."""
    if not isinstance(mapping, Mapping):
        raise InvalidProgram(f"expected a JSON object, got {_short(mapping)}")
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in mapping.items()))


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
