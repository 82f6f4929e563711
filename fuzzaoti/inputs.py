"""Deterministic runtime inputs for a program at concrete shapes.

This module imports only torch: its source is copied verbatim into standalone repro scripts,
so the repro builds bit-identical inputs to those the fuzzer checked.
"""

import torch


def make_tensor(dtype, shape, kind, low, high, seed, device):
    """One input tensor. Drawn on the CPU from its own seed, so every device sees equal values."""
    gen = torch.Generator().manual_seed(seed)
    torch_dtype = getattr(torch, dtype)
    if kind == "int":
        value = torch.randint(low, high, tuple(shape), generator=gen, dtype=torch.int64)
        value = value.to(torch_dtype)
    elif kind == "perm":
        value = torch.argsort(torch.rand(tuple(shape), generator=gen), dim=-1).to(torch_dtype)
    elif kind == "bool":
        value = torch.randint(0, 2, tuple(shape), generator=gen).to(torch.bool)
    else:
        value = torch.randn(tuple(shape), generator=gen, dtype=torch.float32).to(torch_dtype)
    return value.to(device)


def make_inputs(specs, seed, device):
    """Tensors for ``specs``: a list of dicts with dtype, shape, kind, low and high (concrete)."""
    return [
        make_tensor(s["dtype"], s["shape"], s["kind"], s["low"], s["high"], seed * 1000 + k, device)
        for k, s in enumerate(specs)
    ]
