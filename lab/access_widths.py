"""The static access-width check over every golden case: for each kernel x target x variant, how
many global load/store instructions of the AMDGCN/PTX were checked against the TTGIR layouts, how
many could not be (an unmodelled layout, address math that folds addresses), and how many are
wider than the layout allows (each one a miscompile; the golden suite refuses them).

    python -m lab.access_widths [--out DIR] [--only PATTERN]
"""
from __future__ import annotations

import sys
from pathlib import Path

from irlab.cli.experiment_kit import command_line, header, log, write_json


def main(argv=None) -> int:
    import argparse
    from irlab.cli.common import ShortErrorParser
    from irlab.bridge.compat import TRITON_VERSION
    from irlab.golden import suite
    ap = ShortErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="runs/lab/access_widths", help="results folder: README.md, "
                    "results.json (default runs/lab/access_widths)")
    ap.add_argument("--only", default=None, help="golden cases matching this pattern (irlab golden list)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    from irlab.bridge.named_variants import get_variant
    seen, rows = set(), []
    for case in suite.select(suite.all_cases(), args.only):
        key = (case.kernel, case.target, case.variant)
        if key in seen:
            continue
        seen.add(key)
        row = {"kernel": case.kernel, "target": case.target, "variant": case.variant}
        try:
            res = compile_kernel(get(case.kernel), case.target, variant=get_variant(case.variant, case.target))
            rep = suite.check_access_widths(res)
            row.update(checked=rep.checked, unchecked=rep.unchecked, too_wide=len(rep.violations),
                       violations=[str(v) for v in rep.violations], not_checked=[s.why for s in rep.skipped],
                       notes=rep.notes)
        except Exception as e:   # recorded: one failing compile never stops the table
            row["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        rows.append(row)
        log(f"  {case.kernel} {case.target} {case.variant}: "
            + (row.get("error") or f"{row['checked']} checked, {row['unchecked']} not, {row['too_wide']} too wide"))
    lines = header(f"Static access widths of every golden case (Triton {TRITON_VERSION})", command_line())
    lines += ["| kernel | target | variant | checked | not checked | too wide |", "| --- | --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['target']} | {r['variant']} | " + (
            f"{r['checked']} | {r['unchecked']} | {r['too_wide']} |" if "error" not in r else f"error: {r['error']} | | |"))
    tot = {k: sum(r.get(k, 0) for r in rows) for k in ("checked", "unchecked", "too_wide")}
    lines += ["", f"{len(rows)} compiles: {tot['checked']} instructions checked, {tot['unchecked']} not checked, "
              f"{tot['too_wide']} too wide."]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    write_json(out / "results.json", {"triton": TRITON_VERSION, "rows": rows})
    print("\n".join(lines))
    return 1 if tot["too_wide"] else 0


if __name__ == "__main__":
    sys.exit(main())
