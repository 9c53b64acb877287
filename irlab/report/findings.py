"""Analysis findings (plain dicts with kind, op, line, location, detail) as a readable table."""
from __future__ import annotations


def render_table(findings: list[dict]) -> str:
    """id, finding kind, op, IR line, source location, detail: one row per finding."""
    rows = [("#", "finding", "op", "line", "source", "detail")]
    for f in findings:
        rows.append((str(f.get("id", "")), f["kind"], f.get("op") or "", str(f.get("line") or ""),
                     f.get("location") or "-", f["detail"]))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join("  ".join(r[i].ljust(widths[i]) for i in range(5)) + "  " + r[5] for r in rows)
