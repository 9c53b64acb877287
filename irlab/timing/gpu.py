"""The GPU side of a timed sweep (torch): build each entry, check its output, time it.

Correctness comes first: every entry runs once on fresh random inputs with its output poisoned
(NaN), is compared with a reference computed in fp32 (``||out - ref|| / ||ref||`` within the
kernel's tolerance, no NaN left, every element written), and with the baseline's output
(bit-identical or not). Only entries that pass are timed.

Timing methods, named in every result:

* ``graph``: a CUDA graph of n x (L2 flush, kernel) replayed and timed with events; a graph of
  the flushes alone, replayed right after, is subtracted. Launch gaps vanish and the L2 holds
  none of the kernel's data at each launch. n is chosen so that one replay takes about
  ``REPLAY_MS`` (at most ``launches``, at least 3): short replays keep the variants of one round
  close together in time, which matters when a power cap moves the clock.
* ``do_bench``: ``triton.testing.do_bench(..., return_mode="median")`` (flushes L2 before each
  run; its rounds spread far more).
"""
from __future__ import annotations

import math
import platform
import subprocess
import time
from dataclasses import dataclass, field

import triton

from ..bridge.compile import compile_kernel
from ..variant import Variant
from ..kernels import get
from ..targets import current_target
from ..variants import get_variant
from .plan import resolve_config
from ..launches import is_launch_ref, load as load_launch

FLUSH_BYTES = 256 * 1024 * 1024
REPLAY_MS = 10.0


@dataclass
class Prepared:
    entry: object
    shape: dict
    launch: object            # () -> None, on the timing inputs
    check_launch: object      # (inputs) -> None
    flops: float
    info: dict = field(default_factory=dict)
    graphs: tuple | None = None
    n: int = 0                # launches per graph replay
    launch_record: object = None   # the captured launch an entry replays (irlab.launches.Launch), if any


def _nvidia_smi(fields: str) -> list[str]:
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        return [x.strip() for x in out.splitlines()[0].split(",")] if out else []
    except (OSError, subprocess.SubprocessError):
        return []


def environment() -> dict:
    import torch
    env = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "host": platform.node(), "python": platform.python_version(),
           "triton": triton.__version__, "torch": torch.__version__, "cuda_runtime": torch.version.cuda}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update({"gpu": torch.cuda.get_device_name(0), "sm_count": props.multi_processor_count,
                    "memory_gib": round(props.total_memory / 2**30, 1),
                    "capability": f"{props.major}.{props.minor}"})
    q = _nvidia_smi("driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu")
    if q:
        keys = ("driver", "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "power_w", "temperature_c")
        env.update(dict(zip(keys, q)))
    return env


def install_scratch_allocator() -> None:
    """Kernels that build TMA descriptors on the device (``tt.make_tensor_descriptor``, what the
    descriptor-loads pass writes) need a global scratch buffer at every launch; Triton asks the
    allocator set by ``triton.set_allocator`` for it and refuses to launch without one. Scratch
    comes from torch's caching allocator (inside a CUDA-graph capture: the graph's own pool)."""
    import torch
    import triton

    def scratch(size: int, alignment: int, stream):
        return torch.empty(size, dtype=torch.int8, device="cuda")

    triton.set_allocator(scratch)


class GpuRunner:
    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("the GPU runner needs a CUDA GPU")
        self.torch = torch
        self.target = current_target()
        self.flush_buf = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
        install_scratch_allocator()
        self.nvml = None
        try:  # clocks and throttling per round, where NVML is available
            import pynvml
            pynvml.nvmlInit()
            self.nvml = (pynvml, pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device()))
        except Exception:
            self.nvml = None

    def healthy(self) -> bool:
        """False once a fault has poisoned this process's CUDA context (the error is sticky)."""
        torch = self.torch
        try:
            torch.cuda.synchronize()
            (torch.ones(1, device="cuda") + 1).item()
            return True
        except Exception:
            return False

    def sample(self) -> dict:
        """The SM clock and the reasons the clock is held back, right after a round."""
        if self.nvml is None:
            return {}
        pynvml, h = self.nvml
        try:
            reasons = pynvml.nvmlDeviceGetCurrentClocksEventReasons(h) if hasattr(
                pynvml, "nvmlDeviceGetCurrentClocksEventReasons") else pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h)
            return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                    "power_w": round(pynvml.nvmlDeviceGetPowerUsage(h) / 1000, 1),
                    "temp_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                    "clock_reasons": int(reasons)}
        except Exception:
            return {}

    def environment(self) -> dict:
        return {**environment(), "target": self.target}

    # --------------------------------------------------------------------------------------------
    def prepare(self, cell, entry) -> Prepared:
        if is_launch_ref(cell.kernel):
            return self._prepare_launch(cell, entry)
        spec = get(cell.kernel)
        shape = dict(entry.shape or cell.shape)
        cfg = resolve_config(spec, entry.config or cell.config, entry.tile if entry.config else cell.tile)
        inputs = spec.make_inputs(shape, "cuda", seed=1)
        flops = spec.flops(shape) if spec.flops else 0.0
        if entry.kind in ("library", "torch"):
            if spec.library is None:
                raise RuntimeError(f"kernel {spec.name} names no library call to time beside it")
            return Prepared(entry, shape, lambda: spec.library(inputs), spec.library, flops,
                            {"kind": "library", "library": spec.library_name or "library"})
        variant = Variant.from_json(entry.variant_spec) if entry.variant_spec else \
            get_variant(entry.variant or "baseline", self.target)
        res = compile_kernel(spec, self.target, shape=shape, config=cfg, variant=variant,
                             cache_dir=getattr(self, "cache_dir", None))
        compiled = res.compiled
        grid, args = spec.launch_args(inputs, shape, cfg)
        values = list(args.values())

        def launch():
            compiled[grid](*values)

        def check_launch(inp):
            g, a = spec.launch_args(inp, shape, cfg)
            compiled[g](*a.values())
        info = {"kind": "triton", "variant": variant.name, "variant_key": res.variant_key, "config": cfg.name,
                "binary_sha256": res.binary_sha256, "shared": res.metadata.get("shared"),
                "num_warps": res.metadata.get("num_warps"), "num_stages": res.metadata.get("num_stages"),
                "compile_s": round(res.seconds, 3),
                "pass_diagnostics": [str(d) for _, r in res.python_results for d in r.diagnostics],
                "changed_by_passes": any(r.changed for _, r in res.python_results)}
        return Prepared(entry, shape, launch, check_launch, flops, info)

    def _prepare_launch(self, cell, entry) -> Prepared:
        """A captured launch: its TTIR recompiled as the entry's variant, run on tensors built from the
        record; there is no reference but the baseline's output (see compare)."""
        launch = load_launch(cell.kernel)
        variant = Variant.from_json(entry.variant_spec) if entry.variant_spec else \
            get_variant(entry.variant or "baseline", self.target)
        res = launch.recompile(self.target, variant)
        compiled, grid = res.compiled, launch.grid
        values = launch.launch_values(launch.make_inputs("cuda", seed=1))

        def check_launch(inp):
            compiled[grid](*launch.launch_values(inp))
        info = {"kind": "captured launch", "variant": variant.name, "variant_key": res.variant_key,
                "binary_sha256": res.binary_sha256, "shared": res.metadata.get("shared"),
                "num_warps": res.metadata.get("num_warps"), "num_stages": res.metadata.get("num_stages"),
                "compile_s": round(res.seconds, 3), "launch": launch.source}
        return Prepared(entry, dict(cell.shape), lambda: compiled[grid](*values), check_launch, 0.0, info,
                        launch_record=launch)

    def describe(self, p: Prepared) -> dict:
        return {"shape": p.shape, "flops": p.flops, **p.info}

    # --------------------------------------------------------------------------------------------
    def check(self, cell, entry, p: Prepared):
        torch = self.torch
        if is_launch_ref(cell.kernel):   # every tensor after the launch, to compare with the baseline's
            inp = p.launch_record.make_inputs("cuda", seed=7)
            p.check_launch(inp)
            torch.cuda.synchronize()
            return {"ok": True, "reference": "the baseline's output"}, \
                {k: t.clone() for k, t in p.launch_record.tensors(inp).items()}
        spec = get(cell.kernel)
        inp = spec.make_inputs(p.shape, "cuda", seed=7)     # fresh inputs, output poisoned with NaN
        out = spec.output(inp)
        if out.dtype.is_floating_point:
            out.fill_(float("nan"))
        p.check_launch(inp)
        torch.cuda.synchronize()
        ref = spec.reference({k: (v.float() if torch.is_tensor(v) and v.is_floating_point() else v)
                              for k, v in inp.items()}).float()
        got = out.float()
        nan = int(torch.isnan(got).sum().item())
        err = float((got - ref).norm() / ref.norm()) if ref.norm() > 0 else float("inf")
        tol = spec.rel_tolerance(str(out.dtype).replace("torch.", ""))
        ok = nan == 0 and math.isfinite(err) and err <= tol
        reason = "" if ok else (f"{nan} output elements never written (NaN)" if nan else
                                f"relative error {err:.3g} exceeds {tol:g}")
        return {"ok": ok, "rel_error": err, "tolerance": tol, "nan": nan, "reason": reason}, out.clone()

    def compare(self, baseline_out, out) -> dict:
        """How an entry's output differs from the baseline's. For a captured launch (every tensor
        argument, by name) that is the correctness gate: each must match within its dtype's
        tolerance (2e-3 relative for 16-bit floats, 1e-5 otherwise, exact for integers)."""
        torch = self.torch
        if not isinstance(baseline_out, dict):
            same = bool(torch.equal(baseline_out, out))
            diff = float((baseline_out.float() - out.float()).abs().max().item())
            return {"identical_to_baseline": same, "max_abs_diff_to_baseline": diff}
        worst, reason = 0.0, ""
        for name, ref in baseline_out.items():
            got = out[name]
            if ref.is_floating_point():
                r, g = ref.float(), got.float()
                err = float((g - r).norm() / r.norm()) if r.norm() > 0 else float((g - r).norm())
                tol = 2e-3 if ref.dtype in (torch.float16, torch.bfloat16) else 1e-5
                if not (math.isfinite(err) and err <= tol) and not reason:
                    reason = f"{name} differs from the baseline's: relative error {err:.3g} exceeds {tol:g}"
                worst = max(worst, err if math.isfinite(err) else float("inf"))
            elif not torch.equal(ref, got) and not reason:
                reason = f"{name} differs from the baseline's"
        same = all(bool(torch.equal(baseline_out[k], out[k])) for k in baseline_out)
        result = {"identical_to_baseline": same, "rel_error": worst}
        if reason:
            result.update(ok=False, reason=reason)
        return result

    # --------------------------------------------------------------------------------------------
    def _graphs(self, p: Prepared, max_n: int):
        torch = self.torch
        if p.graphs is None:
            for _ in range(3):
                p.launch()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(5):
                p.launch()
            end.record()
            torch.cuda.synchronize()
            one = max(start.elapsed_time(end) / 5, 1e-3)
            n = p.n = max(3, min(max_n, math.ceil(REPLAY_MS / one)))
            p.info["launches_per_replay"] = n
            stream = torch.cuda.Stream()
            g_kernel, g_flush = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
            with torch.cuda.graph(g_kernel, stream=stream):
                for _ in range(n):
                    self.flush_buf.zero_()
                    p.launch()
            with torch.cuda.graph(g_flush, stream=stream):
                for _ in range(n):
                    self.flush_buf.zero_()
            for g in (g_kernel, g_flush):
                g.replay()
            torch.cuda.synchronize()
            p.graphs = (g_kernel, g_flush)
        return p.graphs

    def time(self, p: Prepared, plan) -> float:
        """One round's time of one launch, in ms."""
        torch = self.torch
        if plan.method == "do_bench":
            return float(triton.testing.do_bench(p.launch, warmup=25, rep=100, return_mode="median"))
        g_kernel, g_flush = self._graphs(p, plan.launches)
        n = p.n
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        ev[0].record()
        g_kernel.replay()
        ev[1].record()
        ev[2].record()
        g_flush.replay()
        ev[3].record()
        torch.cuda.synchronize()
        return (ev[0].elapsed_time(ev[1]) - ev[2].elapsed_time(ev[3])) / n
