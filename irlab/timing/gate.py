"""The correctness gate: a kernel's outputs against its fp32 reference, each output on its own.

Every check makes fresh inputs, clones them before anything touches them, and computes the
reference from the clones: the reference sees the inputs as they were before the launch, also when
the kernel updates one of them in place (``x += y``). Outputs are poisoned with NaN before the
launch so that an element the kernel never writes shows up -- except an output the reference
reads (it shares its memory with an input the reference reads): that is an input the kernel
updates in place, and it keeps its contents.

With several outputs (``KernelSpec.outputs``), each is compared on its own, with the tolerance of
its own element type, and the reason of a failure names the output that missed. The outputs come
back as :class:`NamedOutputs`, which the comparison with the baseline (:func:`compare_named`) and
``irlab verify`` also compare name by name.

Torch is handed in (the GPU runner's), and the launch is a callable, so the gate runs on the CPU
too: with Triton's interpreter (``TRITON_INTERPRET=1``) and ``device="cpu"``.
"""
from __future__ import annotations

import math
from typing import Any, Callable


class NamedOutputs(dict):
    """A kernel's outputs by name (``KernelSpec.outputs``), as one check left them."""


def _reading_all(plain: Callable[..., Any]) -> Callable[..., Any]:
    """``plain`` (a dict method that sees every entry: iteration, keys, items, values) noting every
    entry of a :class:`_Reads` as read first."""
    def method(self, *args):
        self.read.update(dict.keys(self))
        return plain(self, *args)
    return method


class _Reads(dict):
    """The reference's inputs, noting which entries it reads (iterating over them reads them all)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.read: set = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    __iter__ = _reading_all(dict.__iter__)
    keys = _reading_all(dict.keys)
    items = _reading_all(dict.items)
    values = _reading_all(dict.values)


def _storage(torch, t) -> int | None:
    if not torch.is_tensor(t):
        return None
    try:
        return t.untyped_storage().data_ptr()
    except AttributeError:   # pragma: no cover (torch before 2.0)
        return t.storage().data_ptr()


def check_outputs(torch, spec, shape: dict, launch, device: str = "cuda", seed: int = 7):
    """Run ``launch(inputs)`` once on fresh inputs and compare every output with the reference:
    ``(check, outputs)``, where ``check`` holds ``ok``, ``rel_error`` (the worst), ``tolerance``,
    ``nan``, ``reason`` and, with several outputs, ``outputs`` (the same per name); ``outputs`` is
    a clone of the one output tensor, or :class:`NamedOutputs` of several."""
    inp = spec.make_inputs(shape, device, seed=seed)
    before = {k: v.clone() for k, v in inp.items() if torch.is_tensor(v)}   # what the reference sees
    seen = _Reads({k: (before[k].float() if k in before and before[k].is_floating_point() else before.get(k, v))
                   for k, v in inp.items()})
    expected = spec.expected(seen)
    outs = spec.output_tensors(inp)
    read = {_storage(torch, inp[k]) for k in seen.read if k in inp} - {None}
    for out in outs.values():
        if out.dtype.is_floating_point and _storage(torch, out) not in read:
            out.fill_(float("nan"))
    launch(inp)
    if device != "cpu":
        torch.cuda.synchronize()
    results = {name: _compare(torch, spec, out, expected[name]) for name, out in outs.items()}
    several = len(results) > 1
    worst = max(results, key=lambda n: _badness(results[n]))
    w = results[worst]
    bad = [n for n, r in results.items() if not r["ok"]]
    reason = "; ".join((f"{n}: " if several else "") + results[n]["reason"] for n in bad)
    check = {"ok": not bad, "rel_error": w["rel_error"], "tolerance": w["tolerance"],
             "nan": sum(r["nan"] for r in results.values()), "reason": reason}
    if several:
        check["outputs"] = results
        return check, NamedOutputs({n: out.clone() for n, out in outs.items()})
    return check, next(iter(outs.values())).clone()


def _badness(r: dict) -> float:
    if not r["ok"]:
        return math.inf
    return r["rel_error"] / r["tolerance"] if r["tolerance"] else r["rel_error"]


def _compare(torch, spec, out, want) -> dict:
    ref = torch.as_tensor(want).float()
    got = out.float()
    tol = spec.rel_tolerance(str(out.dtype).replace("torch.", ""))
    if tuple(ref.shape) != tuple(got.shape):
        return {"ok": False, "rel_error": math.inf, "tolerance": tol, "nan": 0,
                "reason": f"the reference has shape {list(ref.shape)}, the output {list(got.shape)}"}
    ref = ref.to(got.device)
    nan = int(torch.isnan(got).sum().item())
    err = float((got - ref).norm() / ref.norm()) if ref.norm() > 0 else float((got - ref).norm())
    ok = nan == 0 and math.isfinite(err) and err <= tol
    reason = "" if ok else (f"{nan} output elements never written (NaN)" if nan else
                            f"relative error {err:.3g} exceeds {tol:g}")
    return {"ok": ok, "rel_error": err if math.isfinite(err) else math.inf, "tolerance": tol, "nan": nan,
            "reason": reason}


def compare_named(torch, baseline: NamedOutputs, out: NamedOutputs) -> dict:
    """How several outputs differ from the baseline's, name by name."""
    if any(tuple(baseline[n].shape) != tuple(out[n].shape) for n in baseline):
        return {"identical_to_baseline": None, "other_shape": {n: list(t.shape) for n, t in out.items()}}
    differ = [n for n in baseline if not bool(torch.equal(baseline[n], out[n]))]
    diff = max(float((baseline[n].float() - out[n].float()).abs().max().item()) if out[n].numel() else 0.0
               for n in baseline)
    result: dict[str, object] = {"identical_to_baseline": not differ, "max_abs_diff_to_baseline": diff}
    if differ:
        result["differs_in"] = differ
    return result


def rel_diffs(torch, a, b) -> dict:
    """The relative (Frobenius) difference of each output of ``b`` from ``a``'s (one output is
    named ``output``); inf where either holds a NaN or an infinity."""
    pairs = [(n, a[n], b[n]) for n in a] if isinstance(a, NamedOutputs) else [("output", a, b)]
    out = {}
    for name, x, y in pairs:
        x, y = x.float(), y.float()
        if not bool((torch.isfinite(x) & torch.isfinite(y)).all()):
            out[name] = math.inf
            continue
        n = float(x.norm())
        out[name] = float((x - y).norm()) / n if n > 0 else float((x - y).norm())
    return out


def check_names(spec, shape: dict, cfg, target=None) -> None:
    """Raise the spec's :class:`irlab.kernels.spec.ParameterError` -- bind or launch_args giving a
    name the kernel has no parameter for, or leaving one out; outputs naming what its inputs do not
    hold -- before any GPU work, so that a command says it at once (exit 2). Inputs are made on the
    CPU at a small version of ``shape``; anything else that fails there (a shape the kernel refuses,
    CUDA-only input code, no torch) is left for the GPU run to report."""
    from ..kernels.spec import ParameterError
    spec.bind_problem(shape, cfg, target)   # bind: raises ParameterError itself
    if spec.make_inputs is None or spec.launch_args is None:
        return
    small = {k: (min(v, 512) if isinstance(v, int) else v) for k, v in shape.items()}
    try:
        inputs = spec.make_inputs(small, "cpu", seed=0)
        spec.launch_call(inputs, small, cfg, target)
        if spec.outputs:
            spec.output_tensors(inputs)
    except ParameterError:
        raise
    except Exception:   # not a naming mistake: the GPU run says what it is
        return
