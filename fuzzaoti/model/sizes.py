"""Sizes as plain data: an int, or an affine expression over dim names such as ``"2*b+1"``.

Programs name every dynamic size by such an expression so that a program stays JSON and a
size can be evaluated at any runtime assignment of the root dims, bounded over their
ranges (for memory budgets and validity), and rendered as a torch.export derived dim.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Mapping, Union

from fuzzaoti.errors import InvalidProgram, short_repr

Size = Union[int, str]

_TERM = re.compile(r"\s*([+-])?\s*(?:(\d+)\s*\*\s*)?([A-Za-z_]\w*|\d+)\s*")


@dataclass(frozen=True)
class Affine:
    """``const + sum(coef * dim)``: the parsed form of a size expression."""

    const: int
    coefs: tuple[tuple[str, int], ...]  # sorted by dim name, no zero coefficients

    @property
    def dims(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.coefs)

    def evaluate(self, env: Mapping[str, int]) -> int:
        try:
            return self.const + sum(c * env[name] for name, c in self.coefs)
        except KeyError as missing:
            raise InvalidProgram(f"size refers to unknown dim {missing.args[0]!r}") from None

    def bounds(self, ranges: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
        """Smallest and largest value over independent dim ranges ``{name: (lo, hi)}``."""
        lo = hi = self.const
        for name, c in self.coefs:
            a, b = ranges[name]
            lo += min(c * a, c * b)
            hi += max(c * a, c * b)
        return lo, hi

    def __str__(self) -> str:
        parts = []
        for name, c in self.coefs:
            term = name if abs(c) == 1 else f"{abs(c)}*{name}"
            parts.append(("-" if c < 0 else "+") + term)
        if self.const or not parts:
            parts.append(("-" if self.const < 0 else "+") + str(abs(self.const)))
        text = "".join(parts)
        return text[1:] if text.startswith("+") else text


def parse(size: Size) -> Affine:
    """Parse an int or an expression like ``"2*b+1"`` / ``"n-2"``; raise InvalidProgram if malformed."""
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise InvalidProgram(f"a size must be an int or an expression string, not {short_repr(size)}")
    if isinstance(size, int):
        return Affine(size, ())
    pos, const, coefs = 0, 0, {}
    while pos < len(size):
        m = _TERM.match(size, pos)
        if not m or m.end() == pos or (pos and not m.group(1)):
            raise InvalidProgram(f"cannot parse size expression {short_repr(size)}")
        sign = -1 if m.group(1) == "-" else 1
        mult, atom = int(m.group(2) or 1), m.group(3)
        if atom.isdigit():
            if m.group(2):
                raise InvalidProgram(f"cannot parse size expression {short_repr(size)}")
            const += sign * int(atom)
        else:
            coefs[atom] = coefs.get(atom, 0) + sign * mult
        pos = m.end()
    if not size.strip():
        raise InvalidProgram("empty size expression")
    return Affine(const, tuple(sorted((n, c) for n, c in coefs.items() if c)))


def evaluate(size: Size, env: Mapping[str, int]) -> int:
    """The value of ``size`` when the root dims take the values in ``env``."""
    return size if isinstance(size, int) else _parsed(size).evaluate(env)


@functools.cache
def _parsed(expression: str) -> Affine:
    """``parse`` remembered: the runtime-shape solver evaluates a program's few expressions at
    thousands of assignments a program, and a campaign meets few distinct expressions (dim
    names, ``2*d0``, ``d1+1``, their negations), so the cache stays small."""
    return parse(expression)


def canonical(size: Size) -> Size:
    """The normal form of a size: an int when it has no dims, else its printed expression."""
    affine = parse(size)
    return affine.const if not affine.coefs else str(affine)


def negate(size: Size) -> Size:
    """``-size`` in canonical form."""
    affine = parse(size)
    return canonical(str(Affine(-affine.const, tuple((n, -c) for n, c in affine.coefs))))


def add(size: Size, constant: int) -> Size:
    """``size + constant`` in canonical form."""
    affine = parse(size)
    return canonical(str(Affine(affine.const + constant, affine.coefs)))


def plus(a: Size, b: Size) -> Size:
    """``a + b`` in canonical form."""
    x, y = parse(a), parse(b)
    coefs: dict[str, int] = dict(x.coefs)
    for name, c in y.coefs:
        coefs[name] = coefs.get(name, 0) + c
    return canonical(str(Affine(x.const + y.const, tuple(sorted((n, c) for n, c in coefs.items() if c)))))


def product(factors) -> Size | None:
    """The product of ``factors`` when it is affine (at most one factor has dims), else None."""
    const, symbolic = 1, None
    for f in factors:
        affine = parse(f)
        if not affine.coefs:
            const *= affine.const
        elif symbolic is None:
            symbolic = affine
        else:
            return None
    if symbolic is None:
        return const
    return canonical(str(Affine(symbolic.const * const, tuple((n, c * const) for n, c in symbolic.coefs))))


def content(size: Size) -> int:
    """The largest k that divides every coefficient and the constant (the size's own value for an int)."""
    import math

    affine = parse(size)
    return abs(math.gcd(affine.const, *(c for _, c in affine.coefs)))


def divide(size: Size, k: int) -> Size:
    """``size / k``; ``k`` must divide ``content(size)``."""
    affine = parse(size)
    if k <= 0 or content(size) % k:
        raise InvalidProgram(f"{short_repr(size)} is not divisible by {k}")
    return canonical(str(Affine(affine.const // k, tuple((n, c // k) for n, c in affine.coefs))))


def least(passes, lo: int, hi: int) -> int:
    """The least v in [lo, hi] for which the monotone ``passes(v)`` holds (hi + 1: none): a
    bisection, for solving sizes (a crossing, a budget, where a guard breaks) in log2 steps."""
    hi += 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if not passes(mid) else (lo, mid)
    return lo
