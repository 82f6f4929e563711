"""Every difference between the torch releases fuzzaoti supports (2.11 to 2.15) lives here.

Other modules call these functions instead of reaching into torch internals themselves, so a
new torch release is handled by editing this one file.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import runpy
import sys
import socket
from typing import Any, Callable, Iterator, Mapping

from fuzzaoti.errors import Unsupported


def torch_versions(device: str | None = None) -> dict[str, str | None]:
    """torch, CUDA and device names of this process (for findings and replays). For a CPU
    campaign they are read from torch's version file, without importing torch: the import
    costs about 2 s of CPU, which a campaign on one core takes from its worker's first compile."""
    if device == "cpu" and "torch" not in sys.modules:
        spec = importlib.util.find_spec("torch")
        folder = (spec.submodule_search_locations or [""])[0] if spec is not None else ""
        if folder and os.path.exists(os.path.join(folder, "version.py")):
            found = runpy.run_path(os.path.join(folder, "version.py"))
            return {"torch": found["__version__"], "cuda": found.get("cuda"), "device_name": None}
    import torch

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"torch": torch.__version__, "cuda": torch.version.cuda, "device_name": device}


def release(version: str) -> tuple[int, int]:
    """(major, minor) of a torch version string: ``"2.11.0+cu130"`` -> ``(2, 11)``."""
    major, minor = version.split("+")[0].split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def export(module: Any, args: tuple, dynamic_shapes: Mapping[str, Any]) -> Any:
    import torch

    return torch.export.export(module, args, dynamic_shapes=dynamic_shapes, strict=False)


def dim_class() -> Any:
    from torch.export import Dim

    return Dim


def aoti_compile(ep: Any, package_path: str, configs: Mapping[str, Any]) -> str:
    import torch

    remember_vec_isa_probes()
    return torch._inductor.aoti_compile_and_package(
        ep, package_path=package_path, inductor_configs=dict(configs)
    )


def aoti_load(package_path: str, device: str) -> Callable[..., Any]:
    import torch

    index = 0 if device == "cuda" else -1
    return torch._inductor.aoti_load_package(package_path, device_index=index)


def config_supported(key: str) -> bool:
    """True if ``torch._inductor.config`` has the (dotted) option ``key``."""
    from torch._inductor import config

    node: Any = config
    for part in key.split("."):
        if not hasattr(node, part):
            return False
        node = getattr(node, part)
    return True


def supported_configs(configs: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``configs`` this torch understands; unknown options are dropped, not errors."""
    return {k: v for k, v in configs.items() if config_supported(k)}


def plain_guard(guard: str) -> str:
    """A guard as export's error message writes it, in the spelling ``check.guards`` evaluates:
    torch 2.15 writes ``torch.sym_min(a, b)`` where 2.11 to 2.14 wrote ``min(a, b)``."""
    return re.sub(r"\btorch\.sym_(min|max)\(", r"\1(", guard)


def exported_ranges(ep: Any) -> dict[tuple[int, int], tuple[int, int | None]]:
    """``{(input index, axis): (lo, hi)}`` for every input axis, as torch.export decided it.

    Static axes have ``lo == hi``; symbolic ones take their range constraint (``hi=None`` when
    unbounded). Axes whose size is a compound expression (derived dims) are left out: their
    root dim is checked where it appears alone.
    """
    import sympy

    ranges: dict[tuple[int, int], tuple[int, int | None]] = {}
    constraints = {str(sym): vr for sym, vr in ep.range_constraints.items()}
    for index, axis, size in _input_sizes(ep):
        expr = getattr(size, "node", None)
        expr = expr.expr if expr is not None else sympy.Integer(int(size))
        if expr.is_Integer:
            ranges[(index, axis)] = (int(expr), int(expr))
        elif expr.is_Symbol and str(expr) in constraints:
            vr = constraints[str(expr)]
            finite = bool(getattr(vr.upper, "is_Integer", False))  # int_oo is not
            ranges[(index, axis)] = (int(vr.lower), int(vr.upper) if finite else None)
    return ranges


def exported_sizes(ep: Any) -> dict[tuple[int, int], str]:
    """``{(input index, axis): expression}`` for every symbolic input axis, as torch.export wrote
    it (``"s3"``, ``"s0 + 1"``): axes of one symbol must be fed one size. Export may refine a
    declared dim into another's (a ``Dim.DYNAMIC`` axis made equal to a named one when an op
    needs them equal), which no range says: a run that breaks it is outside the program."""
    return {(index, axis): str(size.node.expr) for index, axis, size in _input_sizes(ep) if hasattr(size, "node")}


def exported_strides(ep: Any) -> dict[tuple[int, int], str]:
    """``{(input index, axis): expression}`` of every user input axis's stride, as torch.export
    recorded it from the example (``"s3*s5"``, or a number where it could not express the
    stride in the sizes: a stride it fixed). AOTInductor assumes these without a check."""
    return {(index, axis): str(stride.node.expr if hasattr(stride, "node") else stride)
            for index, node in enumerate(_input_nodes(ep))
            for axis, stride in enumerate(node.meta["val"].stride() if hasattr(node.meta.get("val"), "stride") else ())}


def _user_input_names(ep: Any) -> set[str]:
    return set(ep.graph_signature.user_inputs)


def _input_nodes(ep: Any) -> list[Any]:
    """``ep``'s placeholder nodes of user inputs, in order (not its parameters and buffers)."""
    names = _user_input_names(ep)
    return [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in names]


def _input_sizes(ep: Any) -> list[tuple[int, int, Any]]:
    """``(input index, axis, size)`` of every axis of ``ep``'s user inputs (an int or a SymInt)."""
    return [(index, axis, size) for index, node in enumerate(_input_nodes(ep))
            for axis, size in enumerate(getattr(node.meta.get("val"), "shape", ()))]


def aoti_compile_noting_guards(ep: Any, package_path: str,
                               configs: Mapping[str, Any]) -> tuple[str, list[tuple[Any, str, str]]]:
    """``aoti_compile``, and the guards Inductor added to export's ShapeEnv while it compiled:
    ``[(sympy expression, "file:line", function)]``. AOTInductor checks an input only against
    export's ranges, so each of these is an assumption the package makes and never checks
    (pytorch#150364); a program without a symbolic size has none."""
    env = next((s.node.shape_env for _, _, s in _input_sizes(ep) if hasattr(s, "node")), None)
    before = len(env.guards) if env is not None else 0
    path = aoti_compile(ep, package_path, configs)
    added = env.guards[before:] if env is not None else []
    return path, [(g.expr, *_site(getattr(g, "sloc", None))) for g in added]


def _site(sloc: Any) -> tuple[str, str]:
    """``(file:line, function)`` of a guard's framework frame, the file from ``torch/`` on."""
    frame = getattr(sloc, "framework_loc", None)
    if frame is None or not hasattr(frame, "filename"):
        return str(sloc or ""), ""
    path = frame.filename.replace("\\", "/")
    path = path[path.rfind("/torch/") + 1:] if "/torch/" in path else path
    return f"{path}:{frame.lineno}", frame.name


@contextlib.contextmanager
def cpp_kernel_nests() -> Iterator[dict[str, list[list[list[str]]]]]:
    """While Inductor compiles for the CPU: each C++ kernel it defines, by name, as its loop
    nests in the order the kernel's body holds them, each nest as the stack traces of the FX
    nodes it computes (``{name: [[traces of nest 0, ...], ...]}``; a name listed once per group
    of nodes it was defined for, as groups of one source share one kernel).

    Inductor puts every pointwise and reduction loop between two extern calls into one C++
    function, so a kernel spans the members of a merged batch; its loop nests do not
    (``workers.faults``). Empty where this torch's C++ scheduling has no such hooks."""
    record: dict[str, list[list[list[str]]]] = {}
    try:
        from torch._inductor.codegen import cpp
        from torch._inductor.utils import aggregate_origins

        scheduling, group = cpp.CppScheduling, cpp.KernelGroup
        define, finalize = scheduling.define_kernel, group.finalize_kernel
    except (ImportError, AttributeError):
        yield record
        return

    def finalize_noting(self: Any, new_kernel: Any, nodes: Any) -> Any:
        self.__dict__.setdefault("_fuzzaoti_nests", []).append(list(nodes))
        return finalize(self, new_kernel, nodes)

    def define_noting(self: Any, src_code: Any, nodes: Any, *args: Any, **kwargs: Any) -> Any:
        name = define(self, src_code, nodes, *args, **kwargs)
        nests = getattr(getattr(self, "kernel_group", None), "_fuzzaoti_nests", None)
        if not nests or sum(map(len, nests)) != len(nodes):  # (a template's kernel: one nest)
            nests = [list(nodes)]
        traces = [[origin.meta.get("stack_trace") or "" for origin in aggregate_origins(nest)] for nest in nests]
        record.setdefault(name, []).append(traces)
        return name

    scheduling.define_kernel, group.finalize_kernel = define_noting, finalize_noting
    try:
        yield record
    finally:
        scheduling.define_kernel, group.finalize_kernel = define, finalize


@contextlib.contextmanager
def triton_kernel_sources() -> Iterator[list[str]]:
    """While Inductor compiles for a GPU: the source of each Triton kernel it defines (its
    heuristic's decorator, ``@triton.jit`` and body), in order. Empty where this torch's Triton
    scheduling has no ``define_kernel``."""
    sources: list[str] = []
    try:
        from torch._inductor.codegen.triton import TritonScheduling

        define = TritonScheduling.define_kernel
    except (ImportError, AttributeError):
        yield sources
        return

    def define_noting(self: Any, src_code: Any, *args: Any, **kwargs: Any) -> Any:
        sources.append(str(src_code))
        return define(self, src_code, *args, **kwargs)

    TritonScheduling.define_kernel = define_noting
    try:
        yield sources
    finally:
        TritonScheduling.define_kernel = define


def input_size_exprs(ep: Any) -> dict[tuple[int, int], Any]:
    """``{(input index, axis): sympy expression}`` of every symbolic input axis of ``ep``."""
    return {(index, axis): size.node.expr for index, axis, size in _input_sizes(ep) if hasattr(size, "node")}


# ---- hooks the canaries patch ----------------------------------------------------------------
def cse_proxy_class() -> Any:
    """The class through which every backend's kernel codegen emits ops (``indirect_indexing``)."""
    from torch._inductor.codegen import common

    proxy = getattr(common, "CSEProxy", None)
    if proxy is None or not hasattr(proxy, "indirect_indexing"):
        raise Unsupported("this torch has no module-level CSEProxy.indirect_indexing to patch")
    return proxy


def lowerings() -> dict[Any, Callable[..., Any]]:
    from torch._inductor.lowering import lowerings as table

    return table


def aten() -> Any:
    import torch

    return torch.ops.aten


def set_default_cxx() -> None:
    """Respect ``FUZZAOTI_CXX`` as the C++ compiler AOTI builds with (``CXX`` otherwise).

    Inductor's config reads ``CXX`` once, when it is imported; a process that imported it
    already (anything that asked which configs this torch has) would go on with the old
    compiler, so its ``cpp.cxx`` is set too. (On the H200 node packages built by the default
    g++ 13 segfault on load: a bench whose naive loop ignored FUZZAOTI_CXX crashed that way.)"""
    cxx = os.environ.get("FUZZAOTI_CXX")
    if cxx:
        os.environ["CXX"] = cxx
        config = sys.modules.get("torch._inductor.config")
        if config is not None:
            config.cpp.cxx = (None, cxx)


def remember_vec_isa_probes() -> None:
    """Skip Inductor's dlopen probes of vector-ISA libraries it has probed on this host before.

    In each new process, the first CPU compile checks that a tiny library built with each
    vector ISA's flags loads, by starting a Python child that dlopens it: 13 children, about
    1.3 s of a fresh worker's cold start on the 2-core CPU (its first compile took 9 s where
    the next program's took 6 s). The library sits in Inductor's cache under the hash of its
    code and flags, so the answer for one path on one host never changes: a library that
    loaded is marked so beside it (one empty file per host, for a cache dir shared by the
    nodes of a cluster), and a later process asks no child. A torch without
    ``VecISA._probe_load`` probes as before."""
    try:
        from torch._inductor.cpu_vec_isa import VecISA
    except ImportError:
        return
    probe = getattr(VecISA, "_probe_load", None)
    if probe is None or getattr(probe, "remembered", False):
        return
    host = socket.gethostname()

    def remembered(self: Any, output_path: str) -> bool:
        marker = f"{output_path}.loads-on-{host}"
        if os.path.exists(marker):
            return True
        loads = probe(self, output_path)
        if loads:
            with contextlib.suppress(OSError):
                open(marker, "w").close()
        return loads

    remembered.remembered = True  # type: ignore[attr-defined]
    VecISA._probe_load = remembered


# ---- Hypothesis internals --------------------------------------------------------------------
def current_choices_bytes() -> bytes | None:
    """The serialised choice sequence of the Hypothesis example being run now (what Hypothesis
    would save for a failing example), or None where this Hypothesis does not expose it."""
    try:
        from hypothesis.control import _current_build_context
        from hypothesis.database import choices_to_bytes
    except ImportError:
        return None
    context = _current_build_context.value
    choices = getattr(getattr(context, "data", None), "choices", None)
    return None if choices is None else choices_to_bytes(choices)


def set_database_key(test: Callable[..., Any], key: bytes) -> None:
    """Have Hypothesis file ``test``'s examples under ``key`` in its database (its own key is
    the test function's qualified name, the same for every campaign: a key per device, profile
    and canary keeps their failing batches apart)."""
    test._hypothesis_internal_database_key = key  # type: ignore[attr-defined]
