"""Compiler decisions: what Inductor chose for each kernel of a compile, read from its code.

Lines of Inductor say which code ran; they do not say what it decided. One line of
``codegen/cpp.py`` emits a vector loop's masked tail and a scalar loop alike, and a bug of the
int8 inactive-lanes kind lives in one combination (a vectorized int8 max reduction with a tail)
that a campaign may never draw while every line around it is covered. So each compile's
generated code is read for its decisions, kernel by kernel:

* a C++ kernel's loop nest (Inductor puts every nest between two extern calls into one C++
  function; each nest is one group of nodes): pointwise or reduction (Welford, cascade sum), its
  vector lanes' dtypes or scalar, a masked tail loop, OpenMP parallel, an index bounds check,
  atomic adds;
* a Triton kernel (its source as Inductor's Triton scheduling defines it): its heuristic (pointwise, reduction, persistent reduction, template, ...), its reduction hint,
  64- or 32-bit indexing, device asserts, atomics, ``tl.dot``;
* each extern (fallback) kernel the wrapper calls, by name.

A *decision* is one such fact (``cpp:vec=float``); a *combination* is one kernel's or nest's
facts together (``cpp reduction vec=float tail``), the unit the guided campaign counts as new.
Reading text is the same on every torch from 2.11 to 2.15 where hooks into the scheduler are
not; a release that renames what is read here shows as fewer decisions, never as an error.
"""

from __future__ import annotations

import re
import zipfile
from collections import Counter

_EXTERN_C = re.compile(r'extern "C"\s+void\s+(\w+)\s*\(')
_VEC_DTYPE = re.compile(r"Vectorized(?:N)?<(?:\w+::)*(\w+)")  # (at::BFloat16 as BFloat16)
_TRITON_KERNEL = re.compile(r"@triton_heuristics\.(\w+)\(")
_REDUCTION_HINT = re.compile(r"ReductionHint\.(\w+)")
#: a kernel indexed in 64 bits casts its program id and its aranges to int64 (Inductor's
#: ``iteration_ranges_get_pid`` and ``iteration_ranges_ranges_code``; an int64 tensor's loads are
#: no 64-bit indexing)
_INT64_INDEX = re.compile(r"(?:program_id\(\d\)|num_programs\(\d\)\))\.to\(tl\.int64\)"
                          r"|tl\.arange\(0, \w+\)(?:\[[^\]\n]*\])?\.to\(tl\.int64\)")
_EXTERN_CALL = re.compile(r"\baoti_torch_(?:cpu|cuda)_(\w+?)(?:_out)?\(")
_PROXY = "aoti_torch_proxy_executor_call_function"


def cpp_combinations(kernel_code: str) -> dict[str, list[str]]:
    """Each C++ kernel function of ``kernel_code`` by name, as its loop nests' combinations
    (``cpp_nest``) in order: read once a compile, for its count and for ``by_member``."""
    return {name: [cpp_nest(n) for n in nests] for name, nests in cpp_kernels(kernel_code).items()}


def cpp_kernels(kernel_code: str) -> dict[str, list[str]]:
    """Each C++ kernel function of ``kernel_code`` by name, as its loop nests in order: the
    blocks at the top of its body that hold a loop, and inside an OpenMP parallel region (a
    block opening with ``int tid = omp_get_thread_num();``, which Inductor keeps open across
    the nests of one thread count) the region's own such blocks, each marked as in it."""
    kernels: dict[str, list[str]] = {}
    for found in _EXTERN_C.finditer(kernel_code):
        body_at = kernel_code.find("{", kernel_code.find(")", found.end()))
        nests = kernels.setdefault(found.group(1), [])
        for _, block in _blocks(kernel_code, body_at) if body_at >= 0 else ():
            if _REGION.match(block):  # (a nest under ``#pragma omp single`` runs on one thread)
                nests += [(_SINGLE if "#pragma omp single" in lead else _IN_REGION) + inner
                          for lead, inner in _blocks(block, 0) if "for(" in inner]
            elif "for(" in block:  # (not a brace initializer: ``error{0}``)
                nests.append(block)
    return kernels


_REGION = re.compile(r"\{\s*int tid = omp_get_thread_num\(\);")
_IN_REGION = "// in an OpenMP parallel region\n"
_SINGLE = "// in an OpenMP parallel region, on one thread\n"


def _blocks(text: str, at: int) -> list[tuple[str, str]]:
    """The ``{...}`` blocks directly inside the block that opens at ``text[at]``, each with the
    text that leads to it from the block before (where a ``#pragma`` for it is)."""
    blocks, depth, start, after = [], 0, 0, at + 1
    for k in range(at, len(text)):
        if text[k] == "{":
            depth += 1
            if depth == 2:
                start = k
        elif text[k] == "}":
            depth -= 1
            if depth == 1:
                blocks.append((text[after:start], text[start:k + 1]))
                after = k + 1
            elif depth == 0:
                break
    return blocks


def by_member(combinations: dict[str, list[str]], kernels: dict[str, list[list[int]]]) -> dict[int, list[str]]:
    """The combinations of each member of a merged program: each C++ loop nest's combination
    (``combinations``, from ``cpp_combinations``) goes to the members whose nodes it computes
    (``kernels``: a kernel's nests as members, from
    ``compile.backends.aoti.kernel_members``; a kernel whose nests do not line up with its code
    is left out). The members of a merged program share no tensor, so a nest computes one
    member's nodes unless Inductor put two members' into it (then it counts for both): this is
    how the guided campaign tells which program of a batch took a new combination without
    compiling any of them again."""
    found: dict[int, list[str]] = {}
    for name, nests in combinations.items():
        members = kernels.get(name)
        if members is None or len(members) != len(nests):
            continue
        for combination, who in zip(nests, members):
            for m in who:
                found.setdefault(m, []).append(combination)
    return found


def cpp_nest(nest: str) -> str:
    """One C++ loop nest's decisions as a combination: ``cpp KIND [vec=D,...|scalar] [tail]
    [omp] [check] [atomic]``."""
    if "Welford" in nest:
        kind = "welford"
    elif "CascadeSumHelper" in nest or "cascade_sum_combine" in nest:
        kind = "cascade-sum"
    elif "tmp_acc" in nest:
        kind = "reduction"
    else:
        kind = "pointwise"
    dtypes = sorted(set(_VEC_DTYPE.findall(nest)))
    words = ["cpp", kind, f"vec={','.join(dtypes)}" if dtypes else "scalar"]
    if dtypes and "C10_UNLIKELY(" in nest:
        words.append("tail")
    if "#pragma omp for" in nest or nest.startswith(_IN_REGION):
        words.append("omp")
    if "index out of bounds" in nest:
        words.append("check")
    if "atomic_add" in nest:
        words.append("atomic")
    return " ".join(words)


def triton_kernel(source: str) -> str:
    """One Triton kernel's decisions as a combination: ``triton HEURISTIC [hint] int32|int64
    [assert] [atomic] [dot]``."""
    heuristic = _TRITON_KERNEL.search(source)
    words = ["triton", heuristic.group(1) if heuristic else "unknown"]
    hint = _REDUCTION_HINT.search(source)
    if hint and hint.group(1) != "DEFAULT":
        words.append(hint.group(1).lower())
    words.append("int64" if _INT64_INDEX.search(source) else "int32")
    # (by call: the heuristics' metadata names ``atomic_add_found`` in every kernel; an H100
    # campaign's stats read "atomic" in 46 of its 47 Triton kernels when matched as text)
    for text, word in (("tl.device_assert(", "assert"), ("tl.atomic_add(", "atomic"), ("tl.dot(", "dot")):
        if text in source:
            words.append(word)
    return " ".join(words)


def externs(wrapper_code: str) -> list[str]:
    """The extern kernels a wrapper calls: ``extern NAME`` for each C shim op, ``extern proxy``
    for one run through the proxy executor (an op without a shim)."""
    found = {f"extern {name}" for name in _EXTERN_CALL.findall(wrapper_code)
             if not name.startswith(("get_", "create_", "delete_", "tensor_", "assign_", "new_"))}
    if _PROXY in wrapper_code:
        found.add("extern proxy")
    return sorted(found)


def of_code(wrapper_code: str, combinations: dict[str, list[str]]) -> list[str]:
    """The combinations of one compile's C++ code: each C++ loop nest's (``cpp_combinations``
    of its kernel code), each extern's."""
    return [c for nests in combinations.values() for c in nests] + externs(wrapper_code)


def package_code(path: str) -> tuple[str, str]:
    """The wrapper and kernel C++ sources of the AOTI package at ``path`` ("" where none), which
    a package keeps beside the built library. (A GPU package holds no Triton source:
    ``triton_kernel`` reads each kernel's as Inductor defines it, ``compat.triton_kernel_sources``.)"""
    wrapper, kernel = [], []
    try:
        with zipfile.ZipFile(path) as package:
            for name in package.namelist():
                if name.endswith(".wrapper.cpp"):
                    wrapper.append(package.read(name).decode(errors="replace"))
                elif name.endswith(".kernel.cpp"):
                    kernel.append(package.read(name).decode(errors="replace"))
    except (OSError, zipfile.BadZipFile):
        return "", ""
    return "\n".join(wrapper), "\n".join(kernel)


def parts(combination: str) -> list[str]:
    """A combination's single decisions, each named by its backend: ``cpp:vec=float``."""
    backend, *words = combination.split()
    return [f"{backend}:{w}" for w in words] if backend in ("cpp", "triton") else [combination]


def histogram(combinations: Counter) -> Counter:
    """How many kernels took each single decision, from a count of combinations."""
    single: Counter = Counter()
    for combination, n in combinations.items():
        for part in parts(combination):
            single[part] += n
    return single
