"""On a GPU: does every variant compute what the baseline computes?

For every corpus kernel that runs on this GPU and every variant of the experiments, run the
baseline and the variant on the same fresh random inputs (outputs poisoned with NaN first),
compare each with a reference computed in fp32, and compare the variant's output with the
baseline's bit for bit. A pass that only reorders independent ops or changes layouts leaves the
arithmetic alone, so its output should be bit-identical.

    python -m lab.verify_outputs [--out DIR]
"""
from __future__ import annotations

import sys
from pathlib import Path

from irlab.cli.experiment_kit import command_line, gpu, header, log, write_json
from irlab.kernels import KERNELS
from irlab.bridge.named_variants import variants_for

SHAPES = {"gemm_fp16": {"M": 1024, "N": 768, "K": 512}, "gluon_gemm_prefetch": {"M": 1024, "N": 768, "K": 512},
          "gemm_splitk": {"M": 512, "N": 512, "K": 2048}, "softmax": {"M": 512, "N": 1000},
          "int4_gemm": {"M": 512, "N": 512, "K": 512}}


def shape_for(name: str, spec) -> dict:
    """The shape a kernel is verified on: the one listed above, else the kernel's own default
    (a kernel added to the corpus is verified too, never skipped and never a KeyError)."""
    return dict(SHAPES.get(name) or spec.default_shape)


def main(argv=None) -> int:
    import argparse
    from irlab.cli.common import ShortErrorParser
    ap = ShortErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="runs/lab/verify_outputs", help="output folder (default "
                    "runs/lab/verify_outputs)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    target = gpu()
    lines = header("Variant outputs against the baseline, on the GPU", command_line())
    if target is None:
        lines.append("Skipped: no CUDA GPU on this machine.")
        (out / "README.md").write_text("\n".join(lines) + "\n")
        return 0
    from irlab.timing.gpu import GpuRunner, environment
    from irlab.timing.plan import Cell, Entry
    runner = GpuRunner()
    env = environment()
    results = []
    lines += [f"GPU: {env.get('gpu')}, driver {env.get('driver')}; torch {env.get('torch')}, triton {env.get('triton')}",
              "", "| kernel | config | shape | variant | pass changed the IR | rel. error vs fp32 reference | "
              "output vs baseline |", "| --- | --- | --- | --- | --- | ---: | --- |"]
    for name, spec in KERNELS.items():
        if not spec.supports(target):
            continue
        for cfg in spec.configs:
            shape = shape_for(name, spec)
            variants = [v.name for v in variants_for(target)]
            cell = Cell("verify", name, shape, cfg, [Entry(v, variant=v) for v in variants])
            base_out = None
            # atomics make some kernels nondeterministic: run the baseline twice to know
            entries = [cell.entries[0], Entry("baseline (again)", variant=cell.entries[0].variant)] + cell.entries[1:]
            for entry in entries:
                row = {"kernel": name, "config": cfg, "shape": shape, "variant": entry.label}
                try:
                    p = runner.prepare(cell, entry)
                    check, output = runner.check(cell, entry, p)
                    row.update(check)
                    row["changed_by_passes"] = p.info.get("changed_by_passes")
                    if base_out is None:
                        base_out = output
                    else:
                        row.update(runner.compare(base_out, output))
                except Exception as e:  # recorded: one failing variant never stops the others
                    row.update({"ok": False, "reason": f"{type(e).__name__}: {e}"[:500]})
                results.append(row)
                same = {True: "bit-identical", False: f"differs (max abs {row.get('max_abs_diff_to_baseline', 0):.3g})",
                        None: "(baseline)"}[row.get("identical_to_baseline")]
                status = f"{row.get('rel_error', float('nan')):.2e}" if row.get("ok") else f"FAILED: {row.get('reason')}"
                lines.append(f"| {name} | {cfg} | {'x'.join(map(str, shape.values()))} | {entry.label} | "
                             f"{row.get('changed_by_passes')} | {status} | {same} |")
                log(f"  {name} {cfg} {entry.label}: {status}, {same}")
    write_json(out / "results.json", {"env": env, "rows": results})
    bad = [r for r in results if not r.get("ok")]
    lines += ["", f"{len(results) - len(bad)}/{len(results)} runs match the fp32 reference within tolerance. "
              "Where the baseline run twice already differs from itself (atomic adds land in a different order "
              "each run), a variant cannot be bit-identical to it either."]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    log(f"verify_outputs: wrote {out / 'README.md'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
