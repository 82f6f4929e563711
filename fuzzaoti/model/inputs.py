"""Deterministic runtime inputs for a program at concrete shapes.

This module imports only torch: its source is copied verbatim into standalone repro scripts,
so the repro builds bit-identical inputs to those the fuzzer checked.

Tensors up to ``BIG_NUMEL`` elements are drawn on the CPU (every device sees equal values).
Bigger ones, the large profile's, are drawn on the device itself in their own dtype: drawing
3 * 2**30 int8 values through int64 on the host would take 24 GiB of host memory and many
seconds per run; on the CPU, one block of ``CPU_PERIOD`` values repeated (``_tiled``). They
are still a pure function of (seed, device).
"""

import torch

BIG_NUMEL = 1 << 24


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _distinct(shape, low, high, gen, device):
    """``shape[0]`` distinct integers in ``[low, high)`` in random order, the same down every
    other axis: increasing gaps of 1 to ``(high - low) // shape[0]``, then shuffled."""
    count = shape[0] if shape else 1
    step = max(1, (high - low) // max(count, 1))
    gaps = torch.randint(1, step + 1, (count,), generator=gen, device=device, dtype=torch.int64)
    values = low - 1 + torch.cumsum(gaps, 0)
    values = values[torch.argsort(torch.rand(count, generator=gen, device=device))]
    return values.reshape((count,) + (1,) * (len(shape) - 1)).expand(tuple(shape)).contiguous() if shape else values[0]


def make_tensor(dtype, shape, kind, low, high, seed, device):
    """One input tensor: on the CPU from its own seed, or on ``device`` when it is big."""
    torch_dtype = getattr(torch, dtype)
    big = _numel(shape) > BIG_NUMEL
    where = device if big else "cpu"
    gen = torch.Generator(device=where).manual_seed(seed)
    if kind == "distinct":
        value = _distinct(list(shape), low, high, gen, where).to(torch_dtype)
    elif kind == "oob":  # an index eager rejects: in range but its last element, one past the end
        value = torch.randint(low, high, tuple(shape), generator=gen, dtype=torch.int64)  # or one
        before = int(torch.randint(0, 2, (), generator=gen))  # before the start (-1 where eager
        if value.numel():  # refuses negatives), a coin drawn after the values
            value.view(-1)[-1] = low - 1 if before else high
        value = value.to(torch_dtype)
    elif big:
        value = _big(torch_dtype, tuple(shape), kind, low, high, gen, where)
    elif kind == "int":
        value = torch.randint(low, high, tuple(shape), generator=gen, dtype=torch.int64)
        value = value.to(torch_dtype)
    elif kind == "perm":
        value = torch.argsort(torch.rand(tuple(shape), generator=gen), dim=-1).to(torch_dtype)
    elif kind == "bool":
        value = torch.randint(0, 2, tuple(shape), generator=gen).to(torch.bool)
    else:
        value = torch.randn(tuple(shape), generator=gen, dtype=torch.float32).to(torch_dtype)
    return value.to(device)


def _big(torch_dtype, shape, kind, low, high, gen, device):
    """A big tensor drawn straight in its dtype, with no wider temporary; on the CPU, one block
    drawn so and repeated (``_tiled``)."""
    if gen.device.type == "cpu" and kind != "perm":
        return _tiled(_drawn(torch_dtype, (CPU_PERIOD,), kind, low, high, gen, device), shape)
    return _drawn(torch_dtype, shape, kind, low, high, gen, device)


def _drawn(torch_dtype, shape, kind, low, high, gen, device):
    if kind == "int":
        return torch.randint(low, high, shape, generator=gen, device=device, dtype=torch_dtype)
    if kind == "bool":
        return torch.randint(0, 2, shape, generator=gen, device=device, dtype=torch.bool)
    if kind == "perm":
        return torch.argsort(torch.rand(shape, generator=gen, device=device), dim=-1).to(torch_dtype)
    return torch.randn(shape, generator=gen, device=device, dtype=torch_dtype)


#: The period of a big CPU tensor's values: odd, so that a read 2**31 or 2**32 elements off (an
#: int32 index that wrapped) lands on another value of the block, never on a copy of its own.
CPU_PERIOD = (1 << 24) - 3


def _tiled(block, shape):
    """A big CPU tensor: ``block`` (``CPU_PERIOD`` random values) repeated. The CPU's seeded
    generator draws on one thread: 3 * 2**30 values took minutes a tensor, where a GPU draws
    them in milliseconds; repeating the block runs at memory speed."""
    n = _numel(shape)
    return block.repeat(-(-n // CPU_PERIOD))[:n].reshape(shape)


#: Elements of poison an ``offset`` input has in its storage before its first element and
#: after its last: a kernel that reads past either end reads them, one that writes there is
#: caught by the comparison of the whole storage (``oracle.written``). The byte budget's
#: ``concrete.OFFSET`` is the same number (this module imports only torch: repros copy it).
OFFSET = 3


def poison_value(dtype):
    """A value no drawn input holds (floats are drawn normal, ints in [-100, 100)): finite, so
    eager's outputs stay finite, and far out of any index range."""
    if dtype == torch.bool:
        return True
    if dtype.is_floating_point:
        return -4099.0
    return 127 if dtype == torch.int8 else 255 if dtype == torch.uint8 else -4099


def laid_out(value, layout):
    """``value``'s elements laid out in memory as ``layout`` says (``Program.LAYOUTS``); the
    same values, but for ``expanded``, whose axis 0 repeats the first row."""
    if layout == "transposed":
        axes = list(range(value.dim()))[::-1]
        return value.permute(axes).contiguous().permute(axes)
    if layout == "channels_last":  # axis 1 stored innermost: NHWC for 4-D, NLC for 3-D
        axes = [0] + list(range(2, value.dim())) + [1]
        return value.permute(axes).contiguous().permute([axes.index(k) for k in range(value.dim())])
    if layout == "expanded":
        return value.narrow(0, 0, 1).expand(value.shape) if value.shape[0] > 0 else value
    if layout == "offset":
        n = value.numel()
        storage = torch.full((n + 2 * OFFSET,), poison_value(value.dtype), dtype=value.dtype, device=value.device)
        view = storage[OFFSET:OFFSET + n].view(value.shape)
        view.copy_(value)
        return view
    return value


def make_inputs(specs, seed, device):
    """Tensors for ``specs``: a list of dicts with dtype, shape, kind, low, high (concrete) and
    maybe layout."""
    return [
        laid_out(make_tensor(s["dtype"], s["shape"], s["kind"], s["low"], s["high"], seed * 1000 + k, device),
                 s.get("layout", "contiguous"))
        for k, s in enumerate(specs)
    ]
