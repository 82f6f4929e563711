"""Check torch.export's "Constraints violated" claims against the declared ranges.

A program whose declared range export rejects is normally the program's fault (the range is
wrong), so fuzzaoti counts it invalid. But export can also be wrong: it reports

    Not all values of d1 = L['x0'].size()[1] in the specified range d1 <= 256 satisfy
    the generated guard min(4*L['x0'].size()[1], 4*L['x0'].size()[1]*L['x0'].size()[1]) == (4*L['x0'].size()[1]).

for a guard that holds at every size of the range (its solver cannot simplify the ``min``).
Such a rejection is a bug of export, and a user with a valid model hits it. ``refuted_guard``
evaluates each reported guard at the sizes of the dim's declared range (every size when the
range has at most ``EXHAUSTIVE`` of them, else the ends, the first ``EXHAUSTIVE`` sizes and a
spread across it, and powers of two with their neighbours) with the program's other dims at
their export-time sizes. A guard that holds at all of them is refuted. On a bounded range of
at most ``EXHAUSTIVE`` sizes this is a proof; beyond, a guard false only at sizes never tried
(say ``d != 1000003``) would be refuted wrongly: export's guards are bounds, 0/1 and
divisibility conditions, which these sizes catch.

The guard text comes from the message torch raised in this process; it is still evaluated only
after its syntax tree passes a whitelist (integer arithmetic, comparisons, ``min``/``max``),
never by handing torch's text to ``eval`` as is.
"""

from __future__ import annotations

import ast
import re

from fuzzaoti import compat
from fuzzaoti.model import sizes
from fuzzaoti.model.program import Program

EXHAUSTIVE = 4096

_VIOLATION = re.compile(
    r"Not all values of (?P<dim>\w+) = \S+ in the specified range .*? satisfy the generated guard (?P<guard>.+?)\.?$",
    re.MULTILINE)
_SIZE = re.compile(r"L\['(?P<input>\w+)'\]\.size\(\)\[(?P<axis>\d+)\]")
_FUNCTIONS = {"min": min, "max": max, "Min": min, "Max": max, "abs": abs,  # (and sympy's names)
              "Eq": lambda a, b: a == b, "Ne": lambda a, b: a != b, "Mod": lambda a, b: a % b,
              "PythonMod": lambda a, b: a % b, "FloorDiv": lambda a, b: a // b}
_NODES = (ast.Expression, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Load,
          ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd, ast.Not,
          ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def refuted_guard(message: str, program: Program, prefix: str = "") -> tuple[str, str] | None:
    """The first guard that ``message`` says the declared range of one of ``program``'s dims
    violates and that holds at every size tried: ``(guard, how)``, the guard with export's size
    expressions written as ``sN`` and ``holds for every DIM in [LOW, HIGH] (N sizes tried)``;
    None if export's claims stand (or cannot be evaluated). ``prefix`` is the member's name
    prefix in a merged batch program."""
    for found in _VIOLATION.finditer(message):
        name, guard = found["dim"], compat.plain_guard(found["guard"].strip())
        dim = name[len(prefix):] if name.startswith(prefix) else None
        if dim not in program.dim:
            continue
        tried = _tried_if_holds(guard, program, dim, prefix)
        if tried:
            spec, symbols = program.dim[dim], {}
            written = _SIZE.sub(lambda m: symbols.setdefault(m[0], f"s{len(symbols)}"), guard)
            high = "inf" if spec.max is None else spec.max
            return written, f"holds for every {dim} in [{spec.min}, {high}] ({tried} sizes tried)"
    return None


def _tried_if_holds(guard: str, program: Program, dim: str, prefix: str) -> int:
    """How many sizes of ``dim``'s range the guard was tried at if it held at all; else 0."""
    variables: dict[str, tuple[str, int]] = {}

    def to_variable(m: re.Match) -> str:
        variable = f"size_{len(variables)}"
        variables[variable] = (m["input"], int(m["axis"]))
        return variable

    try:
        tree = ast.parse(_SIZE.sub(to_variable, guard), mode="eval")
    except SyntaxError:
        return 0
    if not _safe(tree, set(variables)):
        return 0
    code = compile(tree, "<guard>", "eval")
    shapes_of = {f"{prefix}{spec.name}": spec.shape for spec in program.inputs}
    if any(name not in shapes_of or axis >= len(shapes_of[name]) for name, axis in variables.values()):
        return 0
    spec = program.dim[dim]
    tried = _sizes_to_try(spec.min, spec.max, spec.hint)
    for value in tried:
        env = {**program.hint_env(), dim: value}
        values = {v: sizes.evaluate(shapes_of[name][axis], env) for v, (name, axis) in variables.items()}
        try:
            if not eval(code, {"__builtins__": {}, **_FUNCTIONS}, values):  # noqa: S307 (whitelisted tree)
                return 0
        except (ArithmeticError, TypeError, ValueError):
            return 0
    return len(tried)


def evaluate(expression: str, values: dict[str, int]) -> bool | None:
    """A guard's truth at ``values`` (its names' sizes); None if it is not integer arithmetic,
    comparisons and the whitelisted functions over those names, or cannot be evaluated."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return None
    if not _safe(tree, set(values)):
        return None
    try:
        return bool(eval(compile(tree, "<guard>", "eval"), {"__builtins__": {}, **_FUNCTIONS}, dict(values)))  # noqa: S307
    except (ArithmeticError, TypeError, ValueError):
        return None


def _safe(tree: ast.AST, variables: set[str]) -> bool:
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            return False
        if isinstance(node, ast.Name) and node.id not in variables and node.id not in _FUNCTIONS:
            return False
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS):
            return False
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, bool)):
            return False
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and not (
                isinstance(node.right, ast.Constant) and 0 <= node.right.value <= 64):
            return False  # a size as exponent could take forever
    return True


def _sizes_to_try(low: int, high: int | None, hint: int) -> list[int]:
    if high is not None and high - low < EXHAUSTIVE:
        return list(range(low, high + 1))
    top = high if high is not None else 2**40
    spread = [low + (top - low) * k // 256 for k in range(257)]
    powers = [p + d for e in range(1, 41) for p in (2**e,) for d in (-1, 0, 1)]
    return sorted({v for v in [*range(low, low + EXHAUSTIVE), *spread, *powers, hint, top] if low <= v <= top})
