"""Golden cases of captured kernels: a model's kernels, as ``irlab capture`` (or tritonparse)
recorded them on a GPU machine, recompiled from their captured TTIR on any machine -- no GPU,
no model, no script -- and compared with their goldens, one set per Triton version like every
golden (so ``irlab golden drift`` shows what a Triton upgrade does to the model's kernels).

A project lists its captures in ``[tool.irlab] captures`` (:mod:`irlab.golden.project`). Each
kernel the program ran (a capture that launched nothing: each kernel it compiled; autotuning
candidates that never ran for the program are left out, and said) becomes a case per variant and
stage of the table, for the target it was captured for::

    <capture>~<kernel>.w<warps>s<stages>.<hash>/<target>/<variant>.<stage>
    llama2~triton_poi_fused_add_0.w4s1.3f2a1b9c4d/cuda-90/baseline.ttgir

``<capture>`` is the capture folder's (or trace file's) name and ``<hash>`` the start of Triton's
compile hash at capture time: the case keeps its name whichever Triton recompiles it. The suite
(:mod:`irlab.golden.suite`) recompiles such cases from the capture.
"""
from __future__ import annotations

from pathlib import Path

CAPTURED = "capture:"          # Case.kernel_ref of a captured kernel: CAPTURED + what launches.load takes
TRACE_SUFFIXES = (".ndjson.gz", ".ndjson.zst", ".ndjson", ".json", ".gz", ".zst")


def capture_name(path: Path) -> str:
    """``llama2`` for ``captures/llama2`` or ``llama2.ndjson.gz``."""
    name = Path(path).name
    for suffix in TRACE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
