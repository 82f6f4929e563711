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

This module imports only torch: its source is copied into standalone repro scripts.
"""

import torch

DEFAULT_TOL_MULT = 4.0
EAGER_ERR_SPREAD = 8.0  # how many times eager's rms error another summation order may reach
MAX_WORST = 5


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
    """``None`` if ``actual`` agrees with ``eager``/``reference``, else what is wrong."""
    if tuple(actual.shape) != tuple(eager.shape):
        return {"reason": "shape", "detail": f"shape {list(actual.shape)}, eager {list(eager.shape)}"}
    if actual.dtype != eager.dtype:
        return {"reason": "dtype", "detail": f"dtype {actual.dtype}, eager {eager.dtype}"}
    actual, eager, reference = actual.cpu(), eager.cpu(), reference.cpu()
    if not eager.dtype.is_floating_point:
        return _judge(actual != eager, actual, eager, None, "exact")
    a, e, r = actual.double(), eager.double(), reference.double()
    a_bad, e_bad = ~torch.isfinite(a), ~torch.isfinite(e)
    nonfinite_wrong = (a_bad != e_bad) | (e_bad & ~((a == e) | (torch.isnan(a) & torch.isnan(e))))
    if nonfinite_wrong.any():
        return _judge(nonfinite_wrong, a, e, None, "nan/inf positions differ from eager", "nonfinite")
    finite = ~e_bad
    eps = max(torch.finfo(eager.dtype).eps, min_eps)
    rms = r[finite].pow(2).mean().sqrt().item() if finite.any() else 0.0
    eager_err = (e - r).abs()
    err_rms = eager_err[finite].pow(2).mean().sqrt().item() if finite.any() else 0.0
    tol = tol_mult * (eager_err + EAGER_ERR_SPREAD * err_rms + eps * (r.abs() + rms))
    wrong = finite & ((a - r).abs() > tol)
    return _judge(wrong, a, r, tol, f"mult={tol_mult} eps={eps:.3g} rms_ref={rms:.4g} rms_eager_err={err_rms:.3g}")


def _judge(wrong, actual, expected, tol, rule, reason="values"):
    count = int(wrong.sum())
    if count == 0:
        return None
    flat_wrong = wrong.reshape(-1)
    err = (actual.double() - expected.double()).abs().reshape(-1)
    if tol is not None:
        err = err / tol.reshape(-1).clamp_min(1e-300)
    err = torch.where(flat_wrong, err.nan_to_num(float("inf")), torch.full_like(err, -1.0))
    top = torch.topk(err, min(MAX_WORST, count)).indices.tolist()
    worst = []
    for flat in top:
        index = list(torch.unravel_index(torch.tensor(flat), tuple(wrong.shape))) if wrong.dim() else []
        worst.append(
            {
                "index": [int(i) for i in index],
                "actual": _scalar(actual.reshape(-1)[flat]),
                "expected": _scalar(expected.reshape(-1)[flat]),
                "tolerance": None if tol is None else float(tol.reshape(-1)[flat]),
            }
        )
    return {
        "reason": reason,
        "wrong": count,
        "numel": wrong.numel(),
        "rule": rule,
        "worst": worst,
        "detail": f"{count} of {wrong.numel()} elements wrong ({rule})",
    }


def _scalar(value):
    value = value.item()
    return value if isinstance(value, (bool, int)) else float(value)
