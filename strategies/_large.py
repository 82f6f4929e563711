"""Core ops of the large profile: the seeds' bug classes at the sizes where they break.

* ``big_bmm``: bmm/baddbmm whose dynamic batch crosses 65535/65536 (the CUDA grid's y/z
  limit) with tiny matrices, so a case costs megabytes, not gigabytes; or a static batch that
  large split into chunks and concatenated (the seeds' remedy);
* ``big_heads_bmm``: an attention-style bmm over ``batch*heads`` flattened from two dynamic
  dims (up to 512 and 256), so the merged batch crosses 65535 although neither dim does;
* ``expanded_sum``: a reduction over a stride-0 expanded int8/fp16 view whose index space
  (batch × length) crosses 2**31 and 2**32 while its inputs stay a few hundred kilobytes:
  exactly where 32-bit index arithmetic overflows.

Each declares its big dims with a *small* export-time example size, so the sizes AOTI compiles for
are far from the sizes it runs at.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.concrete import tensor_bytes
from fuzzaoti.program import DimSpec


def big_dim(b) -> str:
    """A bounded dim whose max is one of the profile's big sizes and whose hint is small."""
    high = b.draw(st.sampled_from(b.profile.big_sizes))
    name = f"d{len(b.dims)}"
    b.dims.append(DimSpec(name, 1, high, b.draw(st.integers(2, 64)), "range"))
    return name


def big_bmm(b) -> str:
    """A bmm over a batch past 65535: dynamic, or static and split into chunks that are
    concatenated again (the seeds' hand remedy, itself a program worth compiling)."""
    chunked = b.draw(st.booleans())
    n, k, p = (b.draw(st.integers(1, b.profile.max_const)) for _ in range(3))
    dtype = b.draw(st.sampled_from(("float16", "float32", "bfloat16")))
    if chunked:  # a static batch cannot be shrunk to fit --max-bytes later: only sizes that fit now,
        # beside the inputs already drawn (a chained second core op: two static batches that each fit
        # alone went past the budget together)
        room = b.profile.max_bytes - b.min_bytes()
        fitting = [s for s in b.profile.big_sizes
                   if tensor_bytes(dtype, (s, n, k)) + tensor_bytes(dtype, (s, k, p)) <= room]
        chunked = bool(fitting)
    batch = b.draw(st.sampled_from(fitting)) if chunked else big_dim(b)
    a = b.add_input(dtype, (batch, n, k))
    mat2 = b.add_input(dtype, (batch, k, p))
    if chunked:
        size = b.draw(st.sampled_from((32768, 65535, 1000)))
        return b.add_node("bmm_chunked", (a, mat2), (batch, n, p), dtype, size=size)
    if b.draw(st.booleans()):
        bias = b.add_input(dtype, (batch, n, p))
        return b.add_node("baddbmm", (bias, a, mat2), (batch, n, p), dtype)
    return b.add_node("bmm", (a, mat2), (batch, n, p), dtype)


def big_heads_bmm(b) -> str:
    from fuzzaoti.strategies._programs import heads_bmm

    dims = []
    for high in (512, 256):
        dims.append(f"d{len(b.dims)}")
        b.dims.append(DimSpec(dims[-1], 1, high, b.draw(st.integers(2, 16)), "range"))
    return heads_bmm(b, dims[0], dims[1], dtypes=("float16", "float32", "bfloat16"))


def expanded_sum(b) -> str:
    rows, length = big_dim(b), big_dim(b)
    dtype = b.draw(st.sampled_from(("int8", "float16")))
    row = b.add_input(dtype, (1, length))
    if dtype == "int8":
        # eager sums int8 into int64 through a materialised int64 copy of the whole view (34 GB
        # at 2**32 elements); cast the small row instead: the view stays stride 0 and int8 in memory
        row = b.add_node("cast", (row,), (1, length), "float32", dtype="float32")
    sizer = b.add_input("int8", (rows,))  # only its size is used: the expanded view's row count
    view = b.add_node("expand_lead", (row, sizer), (rows, length), b.dtypes[row])
    # summing the identical rows of an fp16 view multiplies a value by up to 2**18: inf in eager
    dim = b.draw(st.integers(0, 1)) if dtype == "int8" else 1
    kept = (length,) if dim == 0 else (rows,)
    return b.add_node("sum", (view,), kept, b.dtypes[row], dim=dim)


LARGE_CORE = {"big_bmm": big_bmm, "big_heads_bmm": big_heads_bmm, "expanded_sum": expanded_sum}
