"""The static report of one compiled kernel -- no GPU needed -- and the diff of two variants.

AMD: VGPR/AGPR/SGPR counts and spills from the AMDGCN metadata, LDS bytes from Triton's
metadata (Triton allocates LDS dynamically, so the code object says 0), occupancy by the
documents' method. NVIDIA: registers and local memory from ``cuobjdump -res-usage`` on the
cubin, spill stores/loads from ``ptxas -v`` on the PTX (both bundled with Triton), shared bytes
from Triton's metadata, occupancy per SM. Both: the hot loop's schedule and instruction counts.
"""
from __future__ import annotations

import math
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..base.targets import Target
from . import isa
from .occupancy import (AmdOccupancy, LaunchFit, NvidiaOccupancy, amd_launch_fit, amd_occupancy, nvidia_launch_fit,
                        nvidia_occupancy)


@dataclass
class StaticReport:
    kernel: str
    target: Target
    variant: str
    num_warps: int
    resources: dict
    occupancy: AmdOccupancy | NvidiaOccupancy | None    # None where the kernel cannot launch on its target
    loop: dict | None
    counts: dict = field(default_factory=dict)    # {"kernel": {...}, "loop": {...}}
    launch: LaunchFit = field(default_factory=LaunchFit)

    @property
    def modelled(self) -> bool:
        """Whether irlab knows this architecture's limits (registers, LDS/shared memory, wave
        slots): the occupancy of another is not computed from a neighbour's numbers."""
        return self.target.facts.modelled

    def not_modelled(self) -> str:
        if not self.launch.fits:
            return f"does not launch on {self.target}"
        return f"not modelled for {self.target}"

    # --- flat metrics, in display order --------------------------------------------------------
    def metrics(self) -> dict:
        m = self._metrics()
        occupancy = ("VGPRs allocated", "waves/EU (VGPR limit)", "workgroups/CU", "waves/EU", "blocks/SM",
                     "warps/SM", "occupancy", "occupancy limited by")
        no_occupancy = not self.modelled or self.occupancy is None
        for key, value in m.items():
            if value is None or (no_occupancy and key in occupancy):
                m[key] = self.not_modelled() if no_occupancy and key in occupancy else "-"
        if not self.loop:
            m["hot loop"] = "no loop"
        return m

    def _metrics(self) -> dict:
        r = self.resources
        # the occupancy rows say why there is none
        occ = self.occupancy if self.occupancy is not None else _NoOccupancy()
        m: dict = {"launches": "yes" if self.launch.fits else f"NO: {self.launch.why()}"}
        rows = _ISAS[self.target.facts.isa]
        m.update(rows.resource_rows(r, occ, self.num_warps))
        k, lp = self.counts.get("kernel", {}), self.counts.get("loop", {})
        m.update({"wide global loads (kernel)": k.get("wide_global_loads"),
                  "narrow global loads (kernel)": k.get("narrow_global_loads"),
                  "wide global stores (kernel)": k.get("wide_global_stores"),
                  "narrow global stores (kernel)": k.get("narrow_global_stores"),
                  "global store widths": _fmt_hist(k.get("global_stores", {})),
                  "LDS reads (kernel)": _fmt_hist(k.get("lds_reads", {})),
                  "LDS writes (kernel)": _fmt_hist(k.get("lds_writes", {})),
                  **rows.kernel_rows(k),
                  "matrix instructions (kernel)": _fmt_hist(k.get("matrix_kinds", {})),
                  "instructions (kernel)": k.get("instructions")})
        if self.loop:
            m.update({"hot loop instructions": lp.get("instructions"),
                      "hot loop global loads": _fmt_hist(lp.get("global_loads", {})),
                      **rows.loop_load_rows(lp),
                      "hot loop global-load clusters": " + ".join(map(str, self.loop.get("load_clusters", []))),
                      "hot loop LDS reads": _fmt_hist(lp.get("lds_reads", {})),
                      "hot loop LDS writes": _fmt_hist(lp.get("lds_writes", {})),
                      "hot loop matrix instructions": lp.get("matrix"),
                      "hot loop matrix instruction kinds": _fmt_hist(lp.get("matrix_kinds", {})),
                      "hot loop barriers": lp.get("barriers"),
                      **rows.loop_end_rows(lp)})
        return m

    def to_json(self) -> dict:
        occ = self.occupancy
        return {"kernel": self.kernel, "target": self.target.name, "variant": self.variant, "num_warps": self.num_warps,
                "resources": self.resources, "launch": self.launch.to_json(),
                "occupancy": occ.to_json() if occ is not None else None,
                "occupancy_explained": occ.explain() if occ is not None else self.not_modelled(),
                "loop": self.loop, "counts": self.counts}

    def render(self) -> str:
        lines = [f"{self.kernel} for {self.target} [{self.variant}]"]
        for k, v in self.metrics().items():
            lines.append(f"  {k:38s} {v}")
        if self.launch.unknown:
            lines.append(f"  launch limits not checked: {', '.join(self.launch.unknown)}")
        occ = self.occupancy if self.modelled else None
        lines.append(f"  occupancy: {occ.explain() if occ is not None else self.not_modelled()}")
        if self.loop:
            lines.append(f"  hot loop ({self.loop['label']}, {self.loop['length']} instructions):")
            lines.append("    " + isa.format_schedule(self.loop["schedule"], "\n    "))
            if self.loop.get("schedule_with_pins"):
                lines.append(f"  hot loop with its scheduling pins: {self.loop['schedule_with_pins']}")
        else:
            lines.append("  hot loop: no loop in this kernel")
        return "\n".join(lines)


class _NoOccupancy:
    """Stands in for the occupancy of a kernel that cannot launch: every figure None."""

    def __getattr__(self, name):
        return None


def _fmt_hist(h: dict) -> str:
    return ", ".join(f"{n} x {k}" for k, n in sorted(h.items(), key=lambda kv: (-kv[1], kv[0]))) or "-"


def _loop_info(prog: isa.Program, kind) -> tuple[dict | None, dict]:
    loop = isa.hot_loop(prog)
    if loop is None:
        return None, {}
    runs = isa.schedule(prog, loop)
    info = {"label": loop.label, "length": sum(not i.pseudo for i in loop.instrs), "schedule": runs,
            "schedule_text": isa.format_schedule(runs), "load_clusters": isa.clusters(runs, kind.load_prefix)}
    if any(i.pseudo for i in loop.instrs):
        info["schedule_with_pins"] = isa.format_schedule(isa.schedule(prog, loop, pins=True))
    return info, kind.counts(loop.instrs)


# ------------------------------------------------------------------------------------------------
# What each ISA adds to the rows every report has. A target's facts say which ISA its report reads
# (TargetFacts.isa); a new ISA is a class here and an entry in _ISAS.

class _Isa:
    """Rows an ISA adds to the common ones: none unless it says so."""

    @staticmethod
    def kernel_rows(k: dict) -> dict:
        return {}

    @staticmethod
    def loop_load_rows(lp: dict) -> dict:
        return {}

    @staticmethod
    def loop_end_rows(lp: dict) -> dict:
        return {}


class _Amdgcn(_Isa):
    """AMDGCN, read from the compile's own text: VGPR/AGPR/SGPR counts and spills from its
    metadata, occupancy per CU, cross-lane permutes, the hot loop's s_waitcnt and scheduling pins."""
    load_prefix = ("global_load", "buffer_load")
    counts = staticmethod(isa.amd_counts)

    @staticmethod
    def resource_rows(r: dict, occ, num_warps: int) -> dict:
        return {"VGPRs": r.get("vgpr_count"), "AGPRs": r.get("agpr_count"), "SGPRs": r.get("sgpr_count"),
                "VGPR spills": r.get("vgpr_spill_count"), "SGPR spills": r.get("sgpr_spill_count"),
                "scratch bytes": r.get("scratch"), "LDS bytes": r.get("shared"),
                "waves/workgroup": num_warps, "VGPRs allocated": occ.vgprs_allocated,
                "waves/EU (VGPR limit)": occ.waves_per_eu_by_vgpr, "workgroups/CU": occ.workgroups_per_cu,
                "waves/EU": occ.waves_per_eu, "occupancy limited by": occ.limiter}

    @staticmethod
    def kernel_rows(k: dict) -> dict:
        return {"cross-lane permutes (kernel)": _fmt_hist(k.get("permutes", {}))}

    @staticmethod
    def loop_end_rows(lp: dict) -> dict:
        w = lp.get("s_waitcnt", {})
        waits = f"{w.get('total', 0)} ({w.get('vmcnt', 0)}/{w.get('lgkmcnt', 0)})"
        return {"hot loop s_waitcnt (vmcnt/lgkmcnt)": waits, "hot loop scheduling pins": _fmt_hist(lp.get("pins", {}))}

    @staticmethod
    def from_compile(result) -> "StaticReport":
        md = result.metadata
        return from_amdgcn(result.asm["amdgcn"], md.get("shared", 0), md["num_warps"], result.target.arch,
                           result.kernel, result.variant.name)

    @staticmethod
    def resources(result) -> dict:
        r = isa.parse_amdgcn(result.asm["amdgcn"]).resources
        return {k: r.get(k) for k in ("vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count")}


class _Sass(_Isa):
    """SASS, disassembled from the cubin: registers and local memory from ``cuobjdump``, spills from
    ``ptxas -v``, occupancy per SM, LDGSTS async copies in the hot loop."""
    load_prefix = ("LDG", "LDGSTS")
    counts = staticmethod(isa.sass_counts)

    @staticmethod
    def resource_rows(r: dict, occ, num_warps: int) -> dict:
        m = {"registers": r.get("registers"), "spill stores (B)": r.get("spill_stores"),
             "spill loads (B)": r.get("spill_loads"), "local memory (B)": r.get("local"),
             "shared bytes": r.get("shared"), "warps/block": num_warps,
             "blocks/SM": occ.blocks_per_sm, "warps/SM": occ.warps_per_sm,
             "occupancy": None if occ.occupancy is None else f"{occ.occupancy:.1%}",
             "occupancy limited by": occ.limiter}
        if "wgmma_serialized" in r:
            m["wgmma serialized by ptxas"] = f"YES: {r['wgmma_serialized']}" if r["wgmma_serialized"] else "no"
        return m

    @staticmethod
    def loop_load_rows(lp: dict) -> dict:
        return {"hot loop async copies (LDGSTS)": _fmt_hist(lp.get("async_copies", {}))}

    @staticmethod
    def from_compile(result) -> "StaticReport":
        md = result.metadata
        return from_cubin(result.asm["cubin"], result.asm.get("ptx"), md.get("shared", 0), md["num_warps"],
                          result.target.capability, result.kernel, result.variant.name, tools=result.tools)

    @staticmethod
    def resources(result) -> dict:
        r = cuobjdump_resources(result.binary, result.tools)
        return {"registers": r["registers"], "local": r["local"]}


_ISAS: dict[str, type[_Amdgcn] | type[_Sass]] = {"amdgcn": _Amdgcn, "sass": _Sass}


# ------------------------------------------------------------------------------------------------
# AMD

def from_amdgcn(amdgcn: str, shared_bytes: int, num_warps: int, arch: str = "gfx942", kernel: str = "kernel",
                variant: str = "baseline") -> StaticReport:
    prog = isa.parse_amdgcn(amdgcn)
    res = dict(prog.resources)
    res["shared"] = shared_bytes
    if "vgpr_count" not in res:
        raise ValueError("no .vgpr_count in the AMDGCN text: is this a complete kernel?")
    fit = amd_launch_fit(arch, num_warps, res["vgpr_count"], shared_bytes + res.get("lds_static", 0),
                         res.get("wavefront_size", 64), res.get("max_flat_workgroup_size"))
    occ = amd_occupancy(res["vgpr_count"], shared_bytes, num_warps, arch) if fit.fits else None
    loop, loop_counts = _loop_info(prog, _Amdgcn)
    return StaticReport(kernel, Target("hip", arch), variant, num_warps, res, occ, loop,
                        {"kernel": isa.amd_counts(prog.instrs), "loop": loop_counts}, fit)


# ------------------------------------------------------------------------------------------------
# NVIDIA

class NvidiaTools(Protocol):
    """Where the CUDA tools the report runs are: the ones Triton bundles and assembles with
    (:data:`irlab.bridge.compat.NVIDIA_TOOLS`; a compile's own as ``CompileResult.tools``)."""

    def tool(self, name: str) -> str:
        """The path of ``cuobjdump`` or ``nvdisasm``."""

    def ptxas(self, capability: int) -> str:
        """The path of the ptxas that assembles ``capability``'s PTX."""


def _run_on_cubin(cubin: bytes, tools: NvidiaTools, tool: str, flag: str) -> str:
    """The output of ``tool flag CUBIN``; ValueError with what the tool said where it cannot read it."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        proc = subprocess.run([tools.tool(tool), flag, f.name], capture_output=True, text=True)
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().replace(f.name, "the cubin").splitlines()
        raise ValueError(f"{tool} cannot read the cubin (exit {proc.returncode}): {said[0] if said else 'no message'}")
    return proc.stdout


def cuobjdump_resources(cubin: bytes, tools: NvidiaTools) -> dict:
    """REG, STACK, SHARED (static), LOCAL from ``cuobjdump -res-usage``."""
    out = _run_on_cubin(cubin, tools, "cuobjdump", "-res-usage")
    m = re.search(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)", out)
    if not m:
        raise ValueError(f"unexpected cuobjdump -res-usage output:\n{out}")
    return {"registers": int(m.group(1)), "stack": int(m.group(2)), "static_shared": int(m.group(3)),
            "local": int(m.group(4))}


def ptxas_spills(ptx: str, tools: NvidiaTools) -> dict:
    """Spill stores and loads (bytes) from ``ptxas -v`` on the kernel's PTX."""
    m = re.search(r"^\s*\.target\s+(sm_(\d+)\w*)", ptx, re.M)
    arch, capability = (m.group(1), int(m.group(2))) if m else ("sm_80", 80)
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(ptx)
        proc = subprocess.run([tools.ptxas(capability), "-v", f"--gpu-name={arch}", str(src), "-o", str(Path(d) / "k.o")],
                              capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    if proc.returncode != 0 or not m:
        return {}
    out: dict[str, int | str] = {"spill_stores": int(m.group(1)), "spill_loads": int(m.group(2))}
    if "wgmma" in ptx:
        # C7515: ptxas serializes every wgmma (waits for each before the next) whatever the IR's
        # warp_group_dot_wait says -- a schedule-wrecking fallback worth a line of its own
        note = re.search(r"Potential Performance Loss: (wgmma\.mma_async instructions are serialized[^\n]*?)"
                         r"(?: in the function '[^']*')?\s*$", log, re.M)
        out["wgmma_serialized"] = note.group(1) if note else ""
    return out


def sass_text(cubin: bytes, tools: NvidiaTools) -> str:
    return _run_on_cubin(cubin, tools, "nvdisasm", "-c")


def from_cubin(cubin: bytes, ptx: str | None, shared_bytes: int, num_warps: int, capability: int,
               kernel: str = "kernel", variant: str = "baseline", sass: str | None = None, *,
               tools: NvidiaTools) -> StaticReport:
    res = cuobjdump_resources(cubin, tools)
    if ptx:
        res.update(ptxas_spills(ptx, tools))
    res["shared"] = shared_bytes
    prog = isa.parse_sass(sass if sass is not None else sass_text(cubin, tools), res)
    smem = shared_bytes + res.get("static_shared", 0)
    fit = nvidia_launch_fit(capability, num_warps, res["registers"], smem, _ptx_threads(ptx))
    occ = nvidia_occupancy(res["registers"], smem, num_warps, capability) if fit.fits else None
    loop, loop_counts = _loop_info(prog, _Sass)
    return StaticReport(kernel, Target("cuda", str(capability)), variant, num_warps, res, occ, loop,
                        {"kernel": isa.sass_counts(prog.instrs), "loop": loop_counts}, fit)


def _ptx_threads(ptx: str | None) -> int | None:
    """The threads per block the PTX requires (``.reqntid x[, y[, z]]``), or None."""
    m = re.search(r"^\s*\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", ptx or "", re.M)
    return math.prod(int(g) for g in m.groups() if g) if m else None


# ------------------------------------------------------------------------------------------------

def from_compile(result) -> StaticReport:
    """The static report of an :class:`irlab.bridge.compile.CompileResult`, read from the ISA its
    target's facts name."""
    return _ISAS[result.target.facts.isa].from_compile(result)


def compile_resources(result) -> dict:
    """Shared memory and registers of a compile, as its ISA states them: the AMDGCN metadata on
    AMD, ``cuobjdump -res-usage`` of the cubin on NVIDIA."""
    return {"shared": result.metadata.get("shared"), **_ISAS[result.target.facts.isa].resources(result)}


def diff_rows(a: StaticReport, b: StaticReport) -> list[tuple[str, object, object, str]]:
    """(metric, a, b, change) for every metric of the two reports."""
    ma, mb = a.metrics(), b.metrics()
    rows = []
    for key in list(dict.fromkeys(list(ma) + list(mb))):
        va, vb = ma.get(key), mb.get(key)
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and not isinstance(va, bool):
            change = "" if va == vb else f"{vb - va:+g}"
        else:
            change = "" if va == vb else "changed"
        rows.append((key, va, vb, change))
    return rows


def render_diff(a: StaticReport, b: StaticReport, markdown: bool = False) -> str:
    rows = diff_rows(a, b)
    title = f"{a.kernel} for {a.target}: {a.variant} vs {b.variant}"
    if markdown:
        out = [f"#### {title}", "", f"| metric | {a.variant} | {b.variant} | change |", "| --- | --- | --- | --- |"]
        out += [f"| {k} | {_md(va)} | {_md(vb)} | {c} |" for k, va, vb, c in rows]
        for r in (a, b):
            if r.loop:
                out += ["", f"hot loop, {r.variant} ({r.loop['length']} instructions): `{r.loop['schedule_text']}`"]
        return "\n".join(out)
    w = max(len(k) for k, *_ in rows)
    wa = max([len(a.variant)] + [len(str(va)) for _, va, _, _ in rows])
    wb = max([len(b.variant)] + [len(str(vb)) for _, _, vb, _ in rows])
    out = [title, f"  {'metric':{w}s}  {a.variant:>{wa}s}  {b.variant:>{wb}s}  change"]
    out += [f"  {k:{w}s}  {str(va):>{wa}s}  {str(vb):>{wb}s}  {c}" for k, va, vb, c in rows]
    for r in (a, b):
        if r.loop:
            out.append(f"  hot loop, {r.variant}: {r.loop['schedule_text']}")
    return "\n".join(out)


def _md(v) -> str:
    return "-" if v is None else str(v).replace("|", "\\|")


def render_table(reports: list[StaticReport]) -> str:
    """One markdown table of several variants' reports (a column each), then each hot loop's
    schedule as a run-length line."""
    metrics = [r.metrics() for r in reports]
    keys = list(dict.fromkeys(k for m in metrics for k in m))
    out = [f"#### {reports[0].kernel} for {reports[0].target}", "",
           "| metric | " + " | ".join(r.variant for r in reports) + " |",
           "| --- |" + " --- |" * len(reports)]
    out += [f"| {k} | " + " | ".join(_md(m.get(k)) for m in metrics) + " |" for k in keys]
    for r in reports:
        if r.loop:
            out += ["", f"hot loop, {r.variant} ({r.loop['length']} instructions): `{r.loop['schedule_text']}`"]
    return "\n".join(out)
