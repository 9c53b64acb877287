"""How a captured launch is written down, by the recorder (:mod:`irlab.program.capture`) and read
back (:mod:`irlab.program.launches`): each argument in tritonparse's ``extracted_args`` form, and the
launch's purpose from the frames on its stack."""
from __future__ import annotations

import fnmatch
import functools
from typing import NamedTuple

from ..base.jsonio import plain

PURPOSES = ("program", "autotune", "benchmark")
MAX_OUTPUT_BYTES = 64 << 20          # a launch's output tensor larger than this is kept as its fingerprint
FINGERPRINT = "irlab_fingerprint"    # key of a saved output too large to keep whole: its chunk sums
MARKS_FILE = "marks.json"   # in a capture run: the regions its program entered (how often), the values it checked


class BenchmarkEntry(NamedTuple):
    """One benchmarking entry point: ``pattern`` names functions of the dotted ``module``.
    ``name`` is a module-level function, ``Class.method`` a method, ``*.benchmark*`` every
    ``benchmark*`` method of every class the module defines, ``*`` every function of the module (as
    a stack frame only: capture wraps named entry points, ``window=False``)."""
    module: str
    pattern: str
    purpose: str          # autotune | benchmark
    window: bool = True   # False: a launch's stack frame only (capture does not wrap it as a window)

    @property
    def file_ending(self) -> str:
        """How the path of the module's source file ends (``triton/testing.py``)."""
        return self.module.replace(".", "/") + ".py"

    @property
    def function(self) -> str:
        """The function name a stack frame of this entry has (an fnmatch pattern): the pattern's
        last component (frames carry no class name)."""
        return self.pattern.rpartition(".")[2]


# The entry points inside which a launch is tuning or benchmarking work, not the program's. Both
# ways irlab tells a launch's purpose read this one table: the frames on a launch's stack
# (:func:`purpose_of_frames`: a frame in the module's file whose function name matches the pattern's
# last component), and, with a profile, capture's benchmarking windows (``irlab.bridge.compat.
# marking_benchmarks`` wraps each ``window`` entry: :func:`window_entries`, so kernels launched without the launch hooks --
# an L2-flushing buffer fill, a cuBLAS candidate, a copy of the inputs -- are filed under its
# purpose too). An entry point a Triton or torch version lacks is skipped. Inductor's Benchmarker,
# TritonBenchmarker, InductorBenchmarker, ... differ between torch versions, hence the patterns.
# Autotuning wins over benchmarking wherever both are on the stack or open: autotuners time their
# candidates with do_bench.
BENCHMARK_ENTRY_POINTS = (
    BenchmarkEntry("triton.testing", "do_bench", "benchmark"),                      # 3.6 and 3.9
    BenchmarkEntry("triton.testing", "do_bench_cudagraph", "benchmark"),
    BenchmarkEntry("triton.runtime.autotuner", "Autotuner._bench", "autotune"),     # triton.autotune's timing
    # Inductor's benchmarker: every timing; any frame in its file
    BenchmarkEntry("torch._inductor.runtime.benchmarking", "*.benchmark*", "autotune"),
    BenchmarkEntry("torch._inductor.runtime.benchmarking", "*", "autotune", window=False),
    BenchmarkEntry("torch._inductor.runtime.triton_heuristics", "CachingAutotuner.benchmark_all_configs", "autotune"),
    BenchmarkEntry("torch._inductor.runtime.triton_heuristics", "CachingAutotuner.autotune_to_one_config", "autotune"),
    BenchmarkEntry("torch._inductor.runtime.triton_heuristics", "CachingAutotuner.coordinate_descent_tuning", "autotune"),
    BenchmarkEntry("torch._inductor.runtime.triton_heuristics", "CachingAutotuner.bench", "autotune", window=False),
    BenchmarkEntry("torch._inductor.runtime.coordinate_descent_tuner", "*", "autotune", window=False),
    # max-autotune's choice and its candidates' timings; any frame in its file
    BenchmarkEntry("torch._inductor.select_algorithm", "AlgorithmSelectorCache.__call__", "autotune"),
    BenchmarkEntry("torch._inductor.select_algorithm", "*.benchmark*", "autotune"),
    BenchmarkEntry("torch._inductor.select_algorithm", "*", "autotune", window=False),
    BenchmarkEntry("torch._inductor.autotune_process", "*", "autotune", window=False),
    # the scheduler times fused against unfused kernels (epilogue fusion into GEMM templates, combo
    # kernels) while it compiles: compile-time launches of kernels named ``triton_``, never the
    # program's (``benchmark_fused_nodes``, ``benchmark_codegened_module``, ``benchmark_combo_kernel``)
    BenchmarkEntry("torch._inductor.scheduler", "Scheduler.speedup_by_fusion", "autotune"),
    BenchmarkEntry("torch._inductor.scheduler", "*.benchmark*", "autotune"),
    BenchmarkEntry("torch._inductor.codegen.simd", "*.benchmark*", "autotune"),
    BenchmarkEntry("torch._inductor.codegen.triton", "*.benchmark*", "autotune"),
    BenchmarkEntry("torch._inductor.fx_passes.pad_mm", "should_pad_bench", "autotune"),   # torch <= 2.5
    BenchmarkEntry("torch._inductor.fx_passes.pad_mm", "_should_pad", "autotune"),        # later torch
)


def window_entries() -> tuple:
    """The entry points a profiled capture wraps in a benchmarking window."""
    return tuple(e for e in BENCHMARK_ENTRY_POINTS if e.window)


@functools.lru_cache(maxsize=4)
def _frame_matchers(entries: tuple) -> tuple:
    """(file ending, ((function pattern, purpose), ...)) per module of ``entries``."""
    by_file: dict[str, list] = {}
    for e in entries:
        by_file.setdefault(e.file_ending, []).append((e.function, e.purpose))
    return tuple((ending, tuple(matchers)) for ending, matchers in by_file.items())


def purpose_of_frames(frames) -> str:
    """Why a launch ran, from the (file, function) of each frame on its stack (innermost first
    or not: any order): ``autotune``, ``benchmark`` or ``program`` (:data:`BENCHMARK_ENTRY_POINTS`)."""
    found = "program"
    matchers = _frame_matchers(BENCHMARK_ENTRY_POINTS)
    for filename, function in frames:
        path = str(filename).replace("\\", "/")
        for ending, functions in matchers:
            if not path.endswith(ending):
                continue
            for pattern, purpose in functions:
                if fnmatch.fnmatchcase(str(function), pattern):
                    if purpose == "autotune":
                        return purpose
                    found = purpose
    return found


def arg_info(value) -> dict:
    """One argument of a launch in tritonparse's ``extracted_args`` form (what irlab capture records)."""
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return {"type": "tensor", "dtype": str(value.dtype), "shape": list(value.shape), "stride": list(value.stride()),
                "storage_offset": int(value.storage_offset()), "device": str(value.device),
                "numel": int(value.numel()), "element_size": int(value.element_size())}
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, (int, float)):
        return {"type": type(value).__name__, "value": value}
    return {"type": type(value).__name__, "repr": str(plain(value))[:200]}
