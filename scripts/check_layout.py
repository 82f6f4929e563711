"""The layout rules of fuzzaoti's package, checked from its source (no imports run):

* no import circle between its modules (module-level imports; an import inside a function
  counts too, with ``--lazy``: a lazy import only hides a circle from the interpreter);
* no module over ``MAX_MODULE`` lines and no function over ``MAX_FUNCTION`` lines.

    python3 scripts/check_layout.py          # exit 1 and one line per breach
    python3 scripts/check_layout.py --lazy   # function-level imports count as edges too
"""

from __future__ import annotations

import argparse
import ast
import os
import sys

#: a module past this many lines, or a function past that many, is worth splitting by what belongs
#: together (never moved to fit the number: a module of 420 lines that reads as one is fine)
MAX_MODULE = 500
MAX_FUNCTION = 60
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def modules(package: str = "fuzzaoti") -> dict[str, str]:
    """Dotted module name -> file path, for every module of the package."""
    found = {}
    for folder, _, files in os.walk(os.path.join(ROOT, package)):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[dotted.removesuffix(".__init__")] = path
    return found


def imports(tree: ast.Module, known: dict[str, str], lazy: bool) -> set[str]:
    """The package's modules that ``tree`` imports (``from pkg import mod`` resolved to mod)."""
    nodes = ast.walk(tree) if lazy else tree.body
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                out.add(full if full in known else node.module)
    return {m for m in out if m in known}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def breaches(lazy: bool = False) -> list[str]:
    known = modules()
    graph, found = {}, []
    for name, path in known.items():
        source = open(path).read()
        tree = ast.parse(source)
        # a package imports its own submodules by definition; its parent is no edge back
        graph[name] = {m for m in imports(tree, known, lazy) if m != name and not name.startswith(m + ".")}
        path = os.path.relpath(path, ROOT)
        lines = source.count("\n")
        if lines > MAX_MODULE:
            found.append(f"{path}: {lines} lines (at most {MAX_MODULE})")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION:
                    found.append(f"{path}:{node.lineno}: {node.name} is {length} lines (at most {MAX_FUNCTION})")
    for component in cycles(graph):
        found.append("import circle: " + " <-> ".join(component))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lazy", action="store_true", help="count imports inside functions too")
    found = breaches(parser.parse_args().lazy)
    for line in found:
        print(line)
    print(f"{len(found)} breaches of the layout rules" if found else "layout: no circle, no module or function too long")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
