"""One size guard Inductor added while compiling, as a record: the guard and the code site.

``compile.assumptions`` collects them (what AOTI never checks at run time), a failing run
reports those it broke (``Outcome.assumptions``), and families group findings by the function
that added the guard (``findings.families``): the site is fields (file and line, function),
never parsed back out of the text a user reads (``text``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from fuzzaoti.check.guards import evaluate
from fuzzaoti.errors import CorpusError


@dataclass(frozen=True)
class Assumption:
    guard: str  # over the program's dim names, e.g. "d0 <= 4096"
    site: str = ""  # the Inductor file and line that added it, e.g. "torch/_inductor/codegen/cpp.py:2273"
    function: str = ""  # the function there, e.g. "need_use_acc_helper" (where a fix goes)

    @property
    def dims(self) -> tuple[str, ...]:
        """The dim names the guard reads (the names ``holds`` needs)."""
        import ast

        try:
            tree = ast.parse(self.guard, mode="eval")
        except SyntaxError:
            return ()
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        return tuple(sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called}))

    def holds(self, env: Mapping[str, int]) -> bool | None:
        """The guard's truth at runtime sizes ``env``; None where it cannot be evaluated."""
        if not all(d in env for d in self.dims):
            return None
        return evaluate(self.guard, {d: env[d] for d in self.dims})

    def text(self) -> str:
        """``d0 <= 4096 (torch/_inductor/codegen/cpp.py:2273 in need_use_acc_helper)``."""
        where = f"{self.site} in {self.function}" if self.function else self.site
        return f"{self.guard} ({where})" if where else self.guard

    def to_data(self) -> dict[str, str]:
        return {"guard": self.guard, "site": self.site, "function": self.function}

    @classmethod
    def from_data(cls, data: Any, where: str = "assumption") -> Assumption:
        """``to_data``'s dict, or the ``text`` that findings and outcomes held before this record."""
        if isinstance(data, str):
            guard, paren, rest = data.rpartition(" (")
            if not paren or not rest.endswith(")"):
                return cls(data)
            site, _, function = rest[:-1].rpartition(" in ")
            return cls(guard, site, function) if site else cls(guard, rest[:-1])
        if (not isinstance(data, dict) or not isinstance(data.get("guard"), str)
                or set(data) - {"guard", "site", "function"}
                or not all(isinstance(data.get(k, ""), str) for k in ("site", "function"))):
            raise CorpusError(f"{where}: not an assumption: {str(data)[:120]!r}")
        return cls(data["guard"], data.get("site", ""), data.get("function", ""))
