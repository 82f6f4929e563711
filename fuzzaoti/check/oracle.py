"""The differential oracle: is a compiled output wrong, element by element?

An indexing miscompile typically corrupts a handful of elements among millions; an aggregate
error (RMSE, ``torch._dynamo.utils.same``) hides that, so every element is judged on its own:

* integer and bool outputs must equal eager exactly;
* float outputs are compared with a float64 reference computed from the same inputs. Element
  ``i`` is wrong when
  ``|actual - ref| > mult * (|eager - ref| + spread * rms(eager - ref) + eps * (|ref| + rms(ref)))``:
  clearly worse than eager's own error there, than a generous multiple of eager's typical error
  over the whole output, and than the dtype's rounding. The middle term carries rounding from
  intermediates whose magnitude the output no longer shows (``sin(sum(x))`` keeps the sum's
  error, not ``|sin|``'s), and a kernel that sums sequentially in blocks errs several times more
  than eager's tree sum; so summation order and fp16/bf16 rounding differences never count,
  while a wrong index or batch (an error the size of the values themselves) always does;
* non-finite positions (NaN, ±inf) must agree with eager.

The reference is exact arithmetic as far as float64 goes, casts included: inside it a cast to
a float dtype (``x.to(torch.float16)``) casts to the reference's own dtype (``reference_outputs``).
A reference that rounded at the cast as eager does would carry eager's rounding past it, and
where a compiled kernel's float32 value lands on the other side of an fp16 rounding boundary
(an FMA, another summation order) the two differ by a unit of the *cast's* magnitude, which
the output need not show: ``sin(t.to(torch.float16))`` with ``t`` near 5 gives outputs near 0.2
off by 0.004, past the rule's bound for 0.2 when the reference rounded ``t`` as eager did. The
wide reference puts that rounding into ``|eager - ref|``, where the rule allows for it.

Comparisons run on the tensors' device, chunk by chunk (``compare_tensor``): a 3 * 2**30-element
output is judged without a host copy. A quick pass first accepts outputs equal to eager, or
within a bound of it that the full rule provably accepts (``_plainly_agrees``): most runs pass,
and at 2**31 elements the full rule's three float64 passes cost far more than the compiled run.
The verdict names how many elements are wrong, the first (an index just past 2**31 is the
tell-tale sign of a 32-bit offset) and the worst five.

This module imports only torch and the standard library: its source is copied into standalone
repro scripts.
"""

import copy

import torch

DEFAULT_TOL_MULT = 4.0
EAGER_ERR_SPREAD = 8.0  # how many times eager's rms error another summation order may reach
MAX_WORST = 5


class WideCasts(torch.overrides.TorchFunctionMode):
    """While active, ``Tensor.to(float dtype)`` casts to ``dtype`` instead: the reference run
    keeps full precision through the program's own casts (int casts stay as they are)."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.to:
            args = tuple(self._widened(a) for a in args)
            kwargs = {k: self._widened(v) if k == "dtype" else v for k, v in kwargs.items()}
        return func(*args, **kwargs)

    def _widened(self, value):
        return self.dtype if isinstance(value, torch.dtype) and value.is_floating_point else value


def reference_outputs(model, inputs, dtype=torch.float64, mutated=(), widened=False):
    """The reference: ``model`` run on its float ``inputs`` cast to ``dtype``, with its float
    state cast so too (on a copy of it, unless it is ``widened`` already: a module whose buffers
    carry from call to call steps its own wide copy, ``wide_model``) and every float cast inside
    it widened to ``dtype`` (``WideCasts``); then the inputs at ``mutated`` as the run left them
    (a copy of each, in its own layout: ``inputs`` stay as they were)."""
    if not widened:
        model = wide_model(model, dtype)
    wide = [copied(t, dtype if t.dtype.is_floating_point else None) if k in mutated
            else t.to(dtype) if t.dtype.is_floating_point else t for k, t in enumerate(inputs)]
    with torch.no_grad(), WideCasts(dtype):
        return called(model, wide, mutated)


def wide_model(model, dtype=torch.float64):
    """``model``, or a copy of it with its float state cast to ``dtype`` where it has any."""
    if isinstance(model, torch.nn.Module) and any(t.is_floating_point() for t in model.state_dict().values()):
        return copy.deepcopy(model).to(dtype)
    return model


def _laid_out(t):
    """Does ``t`` lie in memory other than as a fresh contiguous tensor (``inputs.laid_out``)?"""
    return not t.is_contiguous() or t.storage_offset() != 0


def storage_of(t):
    """``t``'s whole storage as a 1-D tensor of its dtype: the poison around an ``offset`` view too."""
    return t.new_empty(0).set_(t.untyped_storage(), 0, (t.untyped_storage().nbytes() // t.element_size(),), (1,))


def copied(t, dtype=None):
    """A copy of ``t`` (cast to ``dtype``) with its strides, storage offset and whole storage."""
    if not _laid_out(t):
        return t.clone() if dtype is None else t.to(dtype)
    whole = storage_of(t).clone() if dtype is None else storage_of(t).to(dtype)
    return whole.as_strided(t.size(), t.stride(), t.storage_offset())


def fresh(inputs, mutated=()):
    """``inputs`` for one call: a copy of each input at ``mutated`` (the call writes into it),
    in its layout, the others as they are. Every call of a program that writes into its inputs
    gets its own."""
    return [copied(t) if k in mutated else t for k, t in enumerate(inputs)]


def written(inputs, mutated=()):
    """The inputs at ``mutated`` as a call left them, each followed, where it is a view into a
    larger storage (an ``offset`` layout), by that whole storage: a write outside the view shows."""
    out = []
    for k in mutated:
        out.append(inputs[k])
        if _laid_out(inputs[k]):
            out.append(storage_of(inputs[k]))
    return out


def called(fn, inputs, mutated=()):
    """``fn(*inputs)``'s outputs, then the inputs at ``mutated`` as the call left them
    (``written``): a program that writes into its inputs is judged on what it wrote there too."""
    return list(fn(*inputs)) + written(inputs, mutated)


def compare_outputs(actual, eager, reference, tol_mult=DEFAULT_TOL_MULT, min_eps=0.0):
    """``None`` when every output agrees, else a plain dict describing the first wrong one.

    ``min_eps`` is the rounding unit of the least precise float dtype the program computes in:
    an fp16 result cast to float64 still carries fp16 rounding, and Inductor may skip the
    intermediate fp16 rounding that eager does, so it is judged with fp16's eps.
    """
    if len(actual) != len(eager):
        return {"output": None, "reason": "count", "detail": f"{len(actual)} outputs, eager has {len(eager)}"}
    for k, (a, e, r) in enumerate(zip(actual, eager, reference)):
        problem = compare_tensor(a, e, r, tol_mult, min_eps)
        if problem is not None:
            problem["output"] = k
            return problem
    return None


def compare_tensor(actual, eager, reference, tol_mult=DEFAULT_TOL_MULT, min_eps=0.0):
    """``None`` if ``actual`` agrees with ``eager``/``reference``, else what is wrong.

    Judged where the tensors live (the GPU for a CUDA run: no host copy of 3 * 2**30 elements),
    in chunks of ``CHUNK`` elements, so its float64 temporaries stay a few hundred MiB whatever
    the output's size: one pass for the global error scales, one for the verdict.
    """
    if not isinstance(actual, torch.Tensor):  # (a package that hands back None for an output)
        return {"reason": "type", "detail": f"{type(actual).__name__} where eager has a tensor"}
    if tuple(actual.shape) != tuple(eager.shape):
        return {"reason": "shape", "detail": f"shape {list(actual.shape)}, eager {list(eager.shape)}"}
    if actual.dtype != eager.dtype:
        return {"reason": "dtype", "detail": f"dtype {actual.dtype}, eager {eager.dtype}"}
    if _plainly_agrees(actual, eager, tol_mult):
        return None
    return full_rule(actual, eager, reference, tol_mult, min_eps)


def full_rule(actual, eager, reference, tol_mult=DEFAULT_TOL_MULT, min_eps=0.0):
    """The element-by-element rule of the module's docstring, without the quick pass: nonfinite
    positions, then the global error scales, then the verdict, each a pass of ``CHUNK``s."""
    shape = tuple(eager.shape)
    a, e, r = actual.reshape(-1), eager.reshape(-1), reference.to(eager.device).reshape(-1)
    if not eager.dtype.is_floating_point:
        return _judge(_chunks(a, e, None, lambda ca, ce, cr: (ca != ce, (ca.double() - ce.double()).abs())),
                      shape, "exact")
    nonfinite = _chunks(a, e, None, _nonfinite_wrong)
    if nonfinite.count:
        return _judge(nonfinite, shape, "nan/inf positions differ from eager", "nonfinite")
    sums = [0.0, 0.0, 0]  # sum of ref**2 and of (eager - ref)**2 over eager's finite elements, their count
    for ce, cr in zip(e.split(CHUNK), r.split(CHUNK)):
        ce, cr = ce.double(), cr.double()
        finite = torch.isfinite(ce)
        sums[0] += torch.where(finite, cr * cr, 0.0).sum()
        sums[1] += torch.where(finite, (ce - cr) ** 2, 0.0).sum()
        sums[2] += finite.sum()
    count = float(sums[2])
    rms = (float(sums[0]) / count) ** 0.5 if count else 0.0
    err_rms = (float(sums[1]) / count) ** 0.5 if count else 0.0
    eps = max(torch.finfo(eager.dtype).eps, min_eps)

    def wrong(ca, ce, cr):
        ca, ce, cr = ca.double(), ce.double(), cr.double()
        tol = tol_mult * ((ce - cr).abs() + EAGER_ERR_SPREAD * err_rms + eps * (cr.abs() + rms))
        off = (ca - cr).abs()
        return torch.isfinite(ce) & (off > tol), off / tol.clamp_min(1e-300), ca, cr, tol

    return _judge(_chunks(a, e, r, wrong), shape, f"mult={tol_mult} eps={eps:.3g} rms_ref={rms:.4g} "
                  f"rms_eager_err={err_rms:.3g}")


CHUNK = 1 << 22
FAST_CHUNK = 1 << 24  # the quick pass's chunk: float32 temporaries of 64 MiB


def _plainly_agrees(actual, eager, tol_mult):
    """Whether ``actual`` agrees so closely with eager that the full rule cannot call any element
    wrong: the quick pass that spares most runs the full rule's three float64 passes.

    Equal tensors agree (one fused pass). Otherwise, with every element finite and
    ``|actual - eager| <= tol_mult/2 * eps * |eager|``, each element is within the full rule's
    tolerance: ``|actual - ref| <= |actual - eager| + |eager - ref|``, and with
    ``|ref| >= |eager| - |eager - ref|`` the rule allows at least
    ``(tol_mult - 1 - tol_mult * eps) * |eager - ref| + tol_mult * eps * |eager|``; the half
    leaves room for the float32 rounding of the bound (the difference itself is exact there:
    the two values are within a factor of two). NaN and inf fail the test and go to the full rule.
    A data-movement op (index_select, gather, cat, scatter) compiled right is exactly equal."""
    if torch.equal(actual, eager):
        return True
    if not eager.dtype.is_floating_point or tol_mult < 2:
        return False
    work = torch.float64 if eager.dtype == torch.float64 else torch.float32
    bound = tol_mult / 2 * torch.finfo(eager.dtype).eps
    oks = []
    for ca, ce in zip(actual.reshape(-1).split(FAST_CHUNK), eager.reshape(-1).split(FAST_CHUNK)):
        ce = ce.to(work)
        oks.append(((ca.to(work) - ce).abs() <= bound * ce.abs()).all())
    return bool(torch.stack(oks).all()) if oks else True


def _nonfinite_wrong(ca, ce, cr):
    ca, ce = ca.double(), ce.double()
    a_bad, e_bad = ~torch.isfinite(ca), ~torch.isfinite(ce)
    mask = (a_bad != e_bad) | (e_bad & ~((ca == ce) | (torch.isnan(ca) & torch.isnan(ce))))
    return mask, (ca - ce).abs()


class _Wrong:
    """What the chunks found: how many elements are wrong (counted on the tensors' device), the
    first wrong one's flat index, and the worst few.

    Each chunk's part stays on the device until ``done`` reads them all back at once: a host
    read per chunk (a sync, the GPU drained each time) cost a 3 * 2**30-element output 768
    round trips per pass."""

    def __init__(self):
        self.count, self.first, self.worst = 0, None, []
        self._counts, self._firsts, self._tops = [], [], []

    def add(self, base, mask, score, actual, expected, tol):
        self._counts.append(mask.sum())
        first = base + mask.to(torch.int8).argmax()
        self._firsts.append(torch.where(mask.any(), first, torch.full_like(first, -1)))
        score = torch.where(mask, score.nan_to_num(float("inf")), torch.full_like(score, -1.0))
        top = torch.topk(score, min(MAX_WORST, score.numel()))
        i = top.indices
        self._tops.append((top.values, i + base, actual[i], expected[i], None if tol is None else tol[i]))

    def done(self):
        """Read the chunks' parts back: the count, the first (chunks come in order) and the
        worst ``MAX_WORST``, ties to the lower index."""
        if not self._counts:
            return self
        self.count = int(torch.stack(self._counts).sum())
        if self.count:
            firsts = torch.stack(self._firsts)
            self.first = int(firsts[firsts >= 0][0])
            values = torch.cat([t[0] for t in self._tops]).tolist()
            flats = torch.cat([t[1] for t in self._tops]).tolist()
            actual, expected = torch.cat([t[2] for t in self._tops]), torch.cat([t[3] for t in self._tops])
            tols = torch.cat([t[4] for t in self._tops]) if self._tops[0][4] is not None else None
            order = sorted((j for j, v in enumerate(values) if v >= 0), key=lambda j: (-values[j], flats[j]))
            self.worst = [(values[j], flats[j], actual[j], expected[j], None if tols is None else tols[j])
                          for j in order[:MAX_WORST]]
        self._counts, self._firsts, self._tops = [], [], []
        return self


def _chunks(a, e, r, judge):
    found = _Wrong()
    refs = r.split(CHUNK) if r is not None else [None] * len(e.split(CHUNK))
    for k, (ca, ce, cr) in enumerate(zip(a.split(CHUNK), e.split(CHUNK), refs)):
        out = judge(ca, ce, cr)
        mask, score = out[0], out[1]
        actual, expected, tol = out[2:] if len(out) > 2 else (ca, ce, None)
        found.add(k * CHUNK, mask, score, actual, expected, tol)
    return found.done()


def _unravel(flat, shape):
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return index[::-1]


def _judge(found, shape, rule, reason="values"):
    if found.count == 0:
        return None
    numel = 1
    for s in shape:
        numel *= s
    worst = [{"index": _unravel(flat, shape), "actual": _scalar(act), "expected": _scalar(exp),
              "tolerance": None if tol is None else float(tol)} for _, flat, act, exp, tol in found.worst]
    first = found.first
    return {
        "reason": reason,
        "wrong": found.count,
        "numel": numel,
        "rule": rule,
        "first": {"index": _unravel(first, shape), "flat": first},
        "worst": worst,
        "detail": f"{found.count} of {numel} elements wrong ({rule}); first at {_unravel(first, shape)}",
    }


def _scalar(value):
    value = value.item()
    return value if isinstance(value, (bool, int)) else float(value)


def poison_like(tensors):
    """Before a compiled run on a GPU: fill the memory its outputs will be given with a value
    eager would not give, so that a kernel which stores nothing cannot pass on stale memory.

    A launcher that passes ``xnumel`` past 2**31 as a negative ``int32_t`` launches a kernel
    that stores nothing, and the output keeps whatever its block held before (an H200
    campaign's split member showed abs(x), eager's intermediate, there). When the block held
    eager's own output for the same inputs, a wrong kernel would pass. Each contiguous eager
    output gets one block of its size, filled and freed just before the run: the caching
    allocator hands the output's own allocation, the same size, that block (its best fit).
    Without the memory for it, the run goes on as it is: its budget comes first."""
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor) or tensor.device.type != "cuda" or not tensor.is_contiguous():
            continue
        try:
            block = torch.empty_like(tensor)
        except torch.cuda.OutOfMemoryError:
            return
        if tensor.dtype == torch.bool:
            block.fill_(True)
        elif tensor.dtype.is_floating_point or tensor.dtype.is_complex:
            block.fill_(float("nan"))
        else:
            block.fill_(torch.iinfo(tensor.dtype).max)
        del block
