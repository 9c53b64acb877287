"""The GPU side of a timed sweep (torch): build each entry, check its output, time it.

Correctness comes first: every entry runs once on fresh random inputs with its output poisoned
(NaN), is compared with a reference computed in fp32 (``||out - ref|| / ||ref||`` within the
kernel's tolerance, no NaN left, every element written), and with the baseline's output
(bit-identical or not). Only entries that pass are timed. The gate itself is
:mod:`irlab.timing.gate` (the reference from a copy of the inputs taken before the launch, each
of several outputs on its own); a kernel is launched with its spec's ``launch_call``, the
arguments matched to its parameters by name.

What every entry of a cell shares, so that nothing but the binary differs between them: the
same input and output buffers (one set per problem shape, made once per cell; with buffers of
its own per entry, the same binary timed twice came out apart: ``docs/results/README.md``), the
same L2 treatment before every launch, and the same number of launches per
sample (sized once per cell from the baseline, :meth:`GpuRunner.launches_per_sample`). A
reference kernel whose inputs are interchangeable with the cell's reads the cell's tensors too;
entries that need inputs of their own (another kernel's arguments, another problem size, the
calibration's separately allocated control) take turns with the cell's in the same memory from
round to round (:mod:`irlab.timing.placement`, :meth:`GpuRunner.begin_round`).

One call of :meth:`GpuRunner.time` is one sample, taken by the plan's timing method (named in
every result): :mod:`irlab.timing.methods` holds them by name, ``graph`` (CUDA-graph replays over
input copies rotated past the L2) and ``do_bench`` (triton.testing.do_bench's procedure, the L2
flushed before each launch) among them. The runner gives a method the cell's buffers bound to
launches (:meth:`GpuRunner.launches`), GPU time with the CPU's enqueueing kept out
(:meth:`GpuRunner.elapsed_ms`) and the flush buffer.
"""
from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import triton

from ..bridge.compile import compile_kernel
from ..passkit.variant import Variant
from ..kernels import get
from ..base.targets import current_target
from ..bridge.named_variants import get_variant
from .fit import check_fits, device_limits
from .methods import get_method
from .methods.do_bench import LAUNCHES as DO_BENCH_LAUNCHES, SAMPLE_MS as DO_BENCH_SAMPLE_MS   # noqa: F401
from .methods.graph import MAX_COPIES, MAX_LAUNCHES, ROTATION_BYTES, SAMPLE_MS   # noqa: F401
from .gate import NamedOutputs, check_outputs, compare_named
from .placement import Arenas, output_keys, same_inputs
from .plan import resolve_config
from ..program.launches import Launch, is_launch_ref, load as load_launch

FLUSH_BYTES = 256 * 1024 * 1024     # the L2 flush (do_bench's size)
LEAD_CYCLES = 500_000               # busy-wait queued before a sample's start event (~0.25 ms)
DEFAULT_L2_BYTES = 50 * 1024 ** 2   # where torch does not say (H100/H200: 50 MiB)


@dataclass(eq=False)
class Workload:
    """The timing inputs of one problem shape, shared by every entry of a cell that runs it."""
    make: Callable[[], Any]   # () -> a fresh set of inputs, the same contents every time
    footprint: int            # bytes of the tensors of one set
    copies: list              # the sets made so far (the first is what every entry's first launch uses)
    span: int = 0             # bytes one set takes in an arena block (irlab.timing.placement), once known


@dataclass
class Prepared:
    entry: object
    shape: dict
    bind: Callable[[Any], Callable[[], object]]   # (inputs) -> (): a launch on those inputs
    check_launch: Callable[[Any], object]         # (inputs) -> (): one launch on them, run now
    flops: float
    info: dict = field(default_factory=dict)
    workload: Workload | None = None
    launch_record: Launch | None = None   # the captured launch an entry replays, if any
    launches: list = field(default_factory=list)   # one launch per input copy, bound as copies are made
    graphs: dict = field(default_factory=dict)     # (launches per replay, arena block) -> CUDA graph
    placed: dict = field(default_factory=dict)     # arena block -> one launch per input copy placed there


def visible_index() -> str:
    """The GPU this process uses, as nvidia-smi and NVML name it (they ignore CUDA_VISIBLE_DEVICES):
    the first entry of CUDA_VISIBLE_DEVICES (an index or a UUID), else 0."""
    return (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0].strip() or "0"


def _nvidia_smi(fields: str) -> list[str]:
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits",
                              "-i", visible_index()], capture_output=True, text=True, timeout=20).stdout.strip()
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
                    "capability": f"{props.major}.{props.minor}",
                    "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                    **({"gpu_uuid": str(props.uuid)} if getattr(props, "uuid", None) is not None else {})})
    q = _nvidia_smi("driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu")
    if q:
        keys = ("driver", "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "power_w", "temperature_c")
        env.update(dict(zip(keys, q)))
    return env


def install_scratch_allocator(torch) -> None:
    """Kernels that build TMA descriptors on the device (``tt.make_tensor_descriptor``, what the
    descriptor-loads pass writes) need a global scratch buffer at every launch; Triton asks the
    allocator set by ``triton.set_allocator`` for it and refuses to launch without one. Scratch
    comes from torch's caching allocator (inside a CUDA-graph capture: the graph's own pool)."""
    def scratch(size: int, alignment: int, stream):
        return torch.empty(size, dtype=torch.int8, device="cuda")

    triton.set_allocator(scratch)


def _nvml_handle(pynvml, props):
    """NVML's handle of the GPU torch runs on. NVML counts every GPU of the host whatever
    CUDA_VISIBLE_DEVICES says (by index 0 a worker given GPU 2 would read GPU 0's clocks): by the
    UUID torch reports, else by the index CUDA_VISIBLE_DEVICES gives."""
    uuid = getattr(props, "uuid", None)
    if uuid is not None:
        text = str(uuid)
        return pynvml.nvmlDeviceGetHandleByUUID(text if text.startswith("GPU-") else f"GPU-{text}")
    index = visible_index()
    if index.startswith("GPU-"):
        return pynvml.nvmlDeviceGetHandleByUUID(index)
    return pynvml.nvmlDeviceGetHandleByIndex(int(index))


class GpuRunner:
    def __init__(self, torch=None):
        """``torch``: the module to time with (tests hand in a stand-in with a virtual clock)."""
        if torch is None:
            import torch
        if not torch.cuda.is_available():
            raise RuntimeError("the GPU runner needs a CUDA GPU")
        self.torch = torch
        self.target = current_target()
        self.flush_bytes = FLUSH_BYTES
        self.flush_buf = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.l2_bytes = int(getattr(props, "L2_cache_size", 0) or DEFAULT_L2_BYTES)
        self.capture_stream = torch.cuda.Stream()
        self.events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        self.method_state = {}   # method name -> what the timing method keeps between samples
        self.limits = None       # the device's launch limits (irlab.timing.fit), read at the first compile
        self._cell, self._workloads = None, {}
        self.device = "cuda"
        self.arenas = Arenas(torch, self.device)
        self._round = 0          # the timed round (begin_round): which arena block each input group is in
        self._blocks, self._views = [], {}   # the cell's arena blocks; (workload id, block) -> input sets placed
        install_scratch_allocator(torch)
        self.nvml = None
        try:  # clocks and throttling per round, where NVML is available -- of this process's own GPU
            import pynvml
            pynvml.nvmlInit()
            self.nvml = (pynvml, _nvml_handle(pynvml, props))
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
        return {**environment(), "target": self.target, "l2_mib": round(self.l2_bytes / 2**20, 1)}

    # --------------------------------------------------------------------------------------------
    def _workload(self, cell, shape: dict, make, tensors, owner: str | None = None, first=None) -> Workload:
        """The inputs every entry of ``cell`` with this ``shape`` is timed on (made once per cell);
        ``owner``: an entry whose inputs are its own (another kernel's arguments, the calibration's
        separately allocated control), not shared with the cell's; ``first``: its first set, made."""
        if self._cell != cell.key:
            self._cell, self._workloads = cell.key, {}
            self._blocks, self._views, self._round = [], {}, 0
        key = json.dumps(shape, sort_keys=True) + (f"|{owner}" if owner else "")
        if key not in self._workloads:
            first = make() if first is None else first
            footprint = sum(t.numel() * t.element_size() for t in tensors(first).values())
            self._workloads[key] = Workload(make, footprint, [first])
        return self._workloads[key]

    def _inputs_owner(self, cell, entry, spec, shape: dict, make, tensors):
        """``(owner, first set)`` of an entry's inputs: ``(None, None)`` where it reads the cell's
        (a variant, the library, a reference kernel whose inputs are interchangeable with the
        cell's), else who they belong to and, where made to compare, their first set."""
        if entry.inputs == "own":     # the calibration's control: the same binary on tensors of its own
            return f"own:{entry.label}", None
        if not entry.kernel:
            return None, None
        own = get(cell.kernel)
        own_inputs = own.make_inputs
        if spec.make_inputs is own_inputs:
            return None, None
        assert own_inputs is not None, f"kernel {own.name} is timed, so it makes its inputs (KernelSpec.timeable)"
        cells = self._workload(cell, shape, lambda: own_inputs(shape, self.device, seed=1), tensors)
        mine = make()
        written = output_keys(self.torch, own, cells.copies[0])
        if written == output_keys(self.torch, spec, mine) and same_inputs(self.torch, cells.copies[0], mine, written):
            del mine
            return None, None
        return entry.kernel, mine

    def prepare(self, cell, entry) -> Prepared:
        if is_launch_ref(cell.kernel):
            return self._prepare_launch(cell, entry)
        torch = self.torch
        spec = get(entry.kernel or cell.kernel)   # an entry of another kernel: a reference kernel's best config
        shape = dict(entry.shape or cell.shape)
        cfg = resolve_config(spec, entry.config or cell.config, entry.tile if entry.config else cell.tile)
        flops = spec.flops(shape) if spec.flops else 0.0

        def workload():
            make = lambda: spec.make_inputs(shape, self.device, seed=1)   # noqa: E731
            tensors = lambda inp: {k: v for k, v in inp.items() if torch.is_tensor(v)}   # noqa: E731
            owner, first = self._inputs_owner(cell, entry, spec, shape, make, tensors)
            return self._workload(cell, shape, make, tensors, owner, first)
        if entry.kind in ("library", "torch"):
            library = spec.library
            if library is None:
                raise RuntimeError(f"kernel {spec.name} names no library call to time beside it")
            return Prepared(entry, shape, lambda inp: (lambda: library(inp)), library, flops,
                            {"kind": "library", "library": spec.library_name or "library"}, workload())
        variant = Variant.from_json(entry.variant_spec) if entry.variant_spec else \
            get_variant(entry.variant or "baseline", self.target)
        res = compile_kernel(spec, self.target, shape=shape, config=cfg, variant=variant,
                             cache_dir=getattr(self, "cache_dir", None))
        self.check_fits(res)   # before any input is made or launch tried: a config this GPU cannot run
        compiled = res.compiled

        def bind(inp):
            grid, values = spec.launch_call(inp, shape, cfg, self.target)   # matched to the parameters by name
            grid = res.launch_grid(grid, args=values)   # the variant's declared grid (persistent: one program per SM)
            return lambda: compiled[grid](*values)

        info = {"kind": "triton", "variant": variant.name, "variant_key": res.variant_key, "config": cfg.name,
                "binary_sha256": res.binary_sha256, "shared": res.metadata.get("shared"),
                "num_warps": res.metadata.get("num_warps"), "num_stages": res.metadata.get("num_stages"),
                "compile_s": round(res.seconds, 3),
                "pass_diagnostics": [str(d) for _, r in res.python_results for d in r.diagnostics],
                "changed_by_passes": any(r.changed for _, r in res.python_results)}
        return Prepared(entry, shape, bind, lambda inp: bind(inp)(), flops, info, workload())

    def check_fits(self, res) -> None:
        """Raise :class:`irlab.timing.fit.DoesNotFit` where the compile's metadata says this GPU cannot
        launch it (more shared memory than a block may have, ...): pruned before launch, the way
        Triton's autotuner prunes, instead of failing in the launcher and being taken for a wrong
        result."""
        if getattr(self, "limits", None) is None:
            self.limits = device_limits()   # None without an active Triton driver: Triton checks at launch
        why = check_fits(res.metadata, self.limits)
        if why is not None:
            raise why

    def _prepare_launch(self, cell, entry) -> Prepared:
        """A captured launch: its TTIR recompiled as the entry's variant, run on tensors built from the
        record; there is no reference but the baseline's output (see compare). An entry naming
        another launch (``Entry.kernel``: the same arguments at other compile options) runs that one
        on the cell's inputs."""
        launch = load_launch(entry.kernel or cell.kernel)
        variant = Variant.from_json(entry.variant_spec) if entry.variant_spec else \
            get_variant(entry.variant or "baseline", self.target)
        res = launch.recompile(self.target, variant)
        self.check_fits(res)
        compiled = res.compiled
        workload = self._workload(cell, dict(cell.shape), lambda: launch.make_inputs("cuda", seed=1), launch.tensors)

        def bind(inp):
            values = launch.launch_values(inp)
            grid = res.launch_grid(launch.grid, args=values)   # checked against the values it launches with
            return lambda: compiled[grid](*values)
        info = {"kind": "captured launch", "variant": variant.name, "variant_key": res.variant_key,
                "binary_sha256": res.binary_sha256, "shared": res.metadata.get("shared"),
                "num_warps": res.metadata.get("num_warps"), "num_stages": res.metadata.get("num_stages"),
                "compile_s": round(res.seconds, 3), "launch": launch.source}
        return Prepared(entry, dict(cell.shape), bind, lambda inp: bind(inp)(), 0.0, info, workload,
                        launch_record=launch)

    def again(self, p: Prepared) -> Prepared:
        """The same entry once more (the A/A control): the same binary and buffers, its own graphs."""
        return replace(p, info=dict(p.info), launches=list(p.launches), graphs={},
                       placed={block: list(launches) for block, launches in p.placed.items()})

    def begin_round(self, r: int) -> None:
        """Round ``r`` of the timed rounds begins: where the cell has several input groups (entries
        with inputs of their own), group ``g`` moves to arena block ``(g + r) mod G``, its data
        copied in, and the L2 is flushed so that no group starts with its data in it."""
        self._round = r
        groups = list(self._workloads.values())
        if len(groups) < 2 or not self._blocks:
            return
        for w in groups:
            for placed in self._views.get((id(w), self.block_of(w)), []):
                self.arenas.fill(placed, w.copies[0])
        self.flush_buf.zero_()

    def describe(self, p: Prepared) -> dict:
        return {"shape": p.shape, "flops": p.flops, **p.info}

    # --------------------------------------------------------------------------------------------
    def check(self, cell, entry, p: Prepared):
        torch = self.torch
        if is_launch_ref(cell.kernel):   # every tensor after the launch, to compare with the baseline's
            launch = p.launch_record
            assert launch is not None, "a captured launch's entry is prepared with its launch (_prepare_launch)"
            inp = launch.make_inputs("cuda", seed=7)
            p.check_launch(inp)
            torch.cuda.synchronize()
            return {"ok": True, "reference": "the baseline's output"}, \
                {k: t.clone() for k, t in launch.tensors(inp).items()}
        # fresh inputs, outputs poisoned with NaN, the reference computed from a clone of the inputs
        return check_outputs(torch, get(entry.kernel or cell.kernel), p.shape, p.check_launch, "cuda")

    def compare(self, baseline_out, out) -> dict:
        """How an entry's output differs from the baseline's. For a captured launch (every tensor
        argument, by name) that is the correctness gate: each must match within its dtype's
        tolerance (2e-3 relative for 16-bit floats, 1e-5 otherwise, exact for integers)."""
        torch = self.torch
        if isinstance(baseline_out, NamedOutputs):   # a kernel's several outputs, name by name
            return compare_named(torch, baseline_out, out)
        if not isinstance(baseline_out, dict):
            if baseline_out.shape != out.shape:   # another problem (a planted larger shape): nothing to compare
                return {"identical_to_baseline": None, "other_shape": list(out.shape)}
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
        result: dict[str, object] = {"identical_to_baseline": same, "rel_error": worst}
        if reason:
            result.update(ok=False, reason=reason)
        return result

    # --------------------------------------------------------------------------------------------
    def block_of(self, w: Workload) -> int | None:
        """The arena block ``w``'s input group is in this round; None where the cell's entries all
        read one group's inputs (nothing rotates) or ``w`` is not the cell's."""
        groups = list(self._workloads.values())
        if len(groups) < 2 or w not in groups:
            return None
        return (groups.index(w) + self._round) % len(groups)

    def _placed_sets(self, w: Workload, k: int, method) -> tuple[int, list]:
        """``(block, sets)``: the arena block ``w``'s group is in this round and ``k`` copies of its
        inputs laid out there (the cell's blocks made on first use, each large enough for any group's
        copies under ``method``)."""
        groups = list(self._workloads.values())
        if not self._blocks:
            for g in groups:
                g.span = g.span or self.arenas.span(g.copies[0])
            size = max(method.input_copies(self, g) * g.span for g in groups)
            self._blocks = [self.arenas.block(size) for _ in groups]
        block = self.block_of(w)
        assert block is not None, "placed only where the cell's input groups rotate (launches)"
        sets = self._views.setdefault((id(w), block), [])
        while len(sets) < k:
            sets.append(self.arenas.place(w.copies[0], self._blocks[block], len(sets) * w.span))
        return block, sets[:k]

    def launches(self, p: Prepared, method) -> list:
        """One launch per input copy the timing method uses (made on first use); notes the L2
        treatment and, where the cell's input groups rotate, the arena block they are in this round."""
        w = p.workload
        assert w is not None, "every prepared entry has its workload (prepare, _prepare_launch)"
        k = method.input_copies(self, w)
        if self.block_of(w) is not None:   # the cell's input groups take turns in memory
            block, sets = self._placed_sets(w, k, method)
            launches = p.placed.setdefault(block, [])
            launches += [p.bind(c) for c in sets[len(launches):k]]
            p.info["placement"] = (f"input placement rotated from round to round over {len(self._workloads)} memory "
                                   "blocks, one per input group of the cell")
            p.info["l2"] = method.l2_note(self, w, k)
            return launches[:k]
        while len(w.copies) < k:
            w.copies.append(w.make())
        if len(p.launches) < k:
            p.launches = p.launches + [p.bind(c) for c in w.copies[len(p.launches):k]]
        p.info["l2"] = method.l2_note(self, w, k)
        return p.launches[:k]

    def elapsed_ms(self, run) -> float:
        """GPU time of what ``run`` enqueues, with the CPU's enqueueing kept out of it."""
        torch = self.torch
        start, end = self.events
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(LEAD_CYCLES)   # the GPU waits here while the CPU enqueues the work
        start.record()
        run()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def launches_per_sample(self, p: Prepared, plan) -> int:
        """Launches per sample for every entry of the cell, from the baseline ``p``: the plan's, or
        as many as the plan's timing method sizes a sample to."""
        return get_method(plan.method).launches_per_sample(self, p, plan)

    def time(self, p: Prepared, plan, n: int | None = None) -> float:
        """One sample: the time of one launch in ms, over ``n`` launches, taken by the plan's timing
        method (:mod:`irlab.timing.methods`)."""
        n = n or self.launches_per_sample(p, plan)
        return get_method(plan.method).sample(self, p, n)
