"""How a captured launch is written down, by the recorder (:mod:`irlab.bridge.capture`) and read
back (:mod:`irlab.launches`): each argument in tritonparse's ``extracted_args`` form, and the
launch's purpose from the frames on its stack."""
from __future__ import annotations

from .jsonio import plain

PURPOSES = ("program", "autotune", "benchmark")
MAX_OUTPUT_BYTES = 64 << 20          # a launch's output tensor larger than this is kept as its fingerprint
FINGERPRINT = "irlab_fingerprint"    # key of a saved output too large to keep whole: its chunk sums
MARKS_FILE = "marks.json"   # in a capture run: the regions its program entered (how often), the values it checked

# Frames a launch runs under when it is not the program's own work: (end of the file's path, the
# functions (None: any), the purpose). Autotuning wins over benchmarking wherever both are on the
# stack: autotuners time their candidates with do_bench.
_SCHEDULER_BENCHMARKS = ("benchmark_fused_nodes", "benchmark_codegened_module", "benchmark_combo_kernel")
BENCHMARK_FRAMES = (
    ("triton/runtime/autotuner.py", ("_bench",), "autotune"),                  # triton.autotune
    ("torch/_inductor/runtime/benchmarking.py", None, "autotune"),             # Inductor's benchmarker
    ("torch/_inductor/runtime/triton_heuristics.py",
     ("bench", "benchmark_all_configs", "autotune_to_one_config", "coordinate_descent_tuning"), "autotune"),
    ("torch/_inductor/runtime/coordinate_descent_tuner.py", None, "autotune"),
    ("torch/_inductor/select_algorithm.py", None, "autotune"),                 # max-autotune's choices
    ("torch/_inductor/autotune_process.py", None, "autotune"),
    # the scheduler times fused against unfused kernels while it compiles (kernels named triton_)
    ("torch/_inductor/scheduler.py", _SCHEDULER_BENCHMARKS + ("speedup_by_fusion",), "autotune"),
    ("torch/_inductor/codegen/simd.py", _SCHEDULER_BENCHMARKS, "autotune"),
    ("torch/_inductor/codegen/triton.py", _SCHEDULER_BENCHMARKS, "autotune"),
    ("triton/testing.py", ("do_bench", "do_bench_cudagraph"), "benchmark"),
)


def purpose_of_frames(frames) -> str:
    """Why a launch ran, from the (file, function) of each frame on its stack (innermost first
    or not: any order): ``autotune``, ``benchmark`` or ``program`` (:data:`BENCHMARK_FRAMES`)."""
    found = "program"
    for filename, function in frames:
        path = str(filename).replace("\\", "/")
        for ending, functions, purpose in BENCHMARK_FRAMES:
            if path.endswith(ending) and (functions is None or function in functions):
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
