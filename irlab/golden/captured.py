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
compile hash at capture time: the case keeps its name whichever Triton recompiles it.
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


def produce_captured(cases: list) -> list:
    """The IR of ``cases`` (one captured kernel, target and variant; any stages) from one
    recompile of its captured TTIR."""
    from ..launches import load
    from .suite import Produced, judge_compile, normalize
    first = cases[0]
    ref = first.kernel_ref[len(CAPTURED):]
    try:
        launch = load(ref)
        res = launch.recompile(first.target, first.variant_def)
    except Exception as e:  # one failing case must not take the suite down; it is reported
        return [Produced(c, None, error=f"{type(e).__name__}: {e}") for c in cases]
    why, resources = judge_compile(res)
    if why:
        return [Produced(c, None, error=why) for c in cases]
    path, _, sel = ref.partition("#")
    origin = f"{Path(path).name}#{sel.rpartition(':')[0]}" if sel else f"{Path(path).parent.name}/{Path(path).name}"
    out = []
    for case in cases:
        text = res.nodebug.get(case.stage) or res.asm.get(case.stage)
        if not isinstance(text, str):
            out.append(Produced(case, None, error=f"stage {case.stage} has no IR text"))
            continue
        info = {"kernel": case.kernel, "function": res.kernel, "target": case.target, "stage": case.stage,
                "variant": first.variant_def.to_json(), "variant_key": res.variant_key,
                "captured": {"from": origin, "options": launch.options},
                "options": res.options,
                "pass_diagnostics": [str(d) for _, r in res.python_results for d in r.diagnostics],
                "pipeline": [c.describe() for c in res.pipeline if c.stage == case.stage],
                "resources": resources}
        out.append(Produced(case, normalize(text), info,
                            description=f"{launch.name}, captured ({origin}), recompiled from its TTIR"))
    return out
