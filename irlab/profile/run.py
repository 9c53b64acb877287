"""The GPU side of ``irlab profile``: one Proton session per kind of measurement, each in a process
of its own (Proton's PC sampling stays on in a CUDA context once enabled, and only one
instrumentation session may be active at a time).

* ``time``: ``proton.start(backend=None)`` -- CUPTI on NVIDIA, roctracer on AMD -- around
  ``launches`` launches of each entry, each entry inside ``proton.scope(label)``; Proton's hatchet
  tree holds the kernel's summed GPU time and launch count under each label.
* ``pcsampling``: ``proton.start(backend="cupti", mode="pcsampling")`` around launches of each
  entry compiled with one line per PTX instruction (:mod:`irlab.profile.lines`); the tree holds
  samples and stall reasons per ``FILE:LINE@FUNCTION``. NVIDIA only: Proton 3.6 samples PCs
  through CUPTI alone.
* ``scopes``: per entry, ``proton.start(backend="instrumentation", data="trace")``, the entry
  compiled inside the session with the proton-scopes pass, one launch, ``finalize``: a Chrome
  trace of every scope of every warp of every CTA, in cycles.

Every entry runs a few uninstrumented launches first (module load, caches warm).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

WARMUP = 3
WARMUP_SCOPE = "irlab-warmup"   # pcsampling: the warm-up launches' samples, read by no entry


@dataclass
class Job:
    kernel: str
    shape: dict | None
    target: str
    entries: list           # [{"label", "variant" (Variant.to_json()), "config" (name or TileConfig fields)}]
    out: str
    launches: int = 20
    scopes: str = "kloop,epilogue"
    scope_buffer: str = "global"
    pc_interval: int = 0    # 0: Proton's default sampling period

    def to_json(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict) -> "Job":
        return cls(**d)


# ------------------------------------------------------------------------------------------------
# what is launched

def config_to_json(cfg) -> str | dict | None:
    if cfg is None or isinstance(cfg, str):
        return cfg
    return {"name": cfg.name, "meta": dict(cfg.meta), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages,
            "extra": dict(getattr(cfg, "extra", {}) or {})}


def config_from_json(d):
    if d is None or isinstance(d, str):
        return d
    from ..kernels.spec import TileConfig
    return TileConfig(d["name"], d["meta"], d["num_warps"], d["num_stages"], d.get("extra") or {})


class Subject:
    """A corpus kernel, a kernel file or a captured launch: compiles an entry, launches it."""

    def __init__(self, job: Job):
        from ..program.launches import is_launch_ref, load
        from ..base.targets import Target
        self.job = job
        self.target = Target.parse(job.target)
        self.launch = load(job.kernel) if is_launch_ref(job.kernel) else None
        if self.launch is None:
            from ..kernels import get
            self.spec = get(job.kernel)
            self.shape = self.spec.shape(job.shape)

    def compile(self, variant, config):
        if self.launch is not None:
            return self.launch.recompile(self.target, variant)
        from ..bridge.compile import compile_kernel
        return compile_kernel(self.spec, self.target, shape=self.shape, config=config, variant=variant)

    def launcher(self, result, config):
        compiled = result.compiled
        if self.launch is not None:
            values = self.launch.launch_values(self.launch.make_inputs("cuda", seed=1))
            grid = self.launch.grid
        else:
            cfg = config if config is not None and not isinstance(config, str) else self.spec.config(config)
            inputs = self.spec.make_inputs(self.shape, "cuda", seed=1)
            grid, values = self.spec.launch_call(inputs, self.shape, cfg, self.target)   # matched by name
        grid = result.launch_grid(grid, args=values)   # the variant's declared grid (persistent: one program per SM)
        return lambda: compiled[grid](*values)


def keep_metadata_files(compiled, folder: Path) -> None:
    """Write the compile's IR and metadata JSON into ``folder`` and point the kernel at them:
    Proton's instrumentation reads the TTGIR and the JSON back from the paths Triton's cache gave
    when the kernel is loaded, and irlab compiles into throw-away caches."""
    folder.mkdir(parents=True, exist_ok=True)
    group = {}
    for suffix, text in compiled.asm.items():
        path = folder / f"{compiled.name}.{suffix}"
        path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
        group[path.name] = str(path)
    meta = folder / f"{compiled.name}.json"
    meta.write_text(json.dumps(compiled.metadata._asdict(), default=vars))
    group[meta.name] = str(meta)
    compiled.metadata_group = group


# ------------------------------------------------------------------------------------------------
# the three sessions

def _entries(job: Job):
    from ..passkit.variant import Variant
    for e in job.entries:
        yield e["label"], Variant.from_json(e["variant"]), config_from_json(e["config"])


def _warm(launch):
    import torch
    for _ in range(WARMUP):
        launch()
    torch.cuda.synchronize()


def run_time(job: Job, subject: Subject) -> dict:
    import torch
    import triton.profiler as proton
    prepared = []
    for label, variant, config in _entries(job):
        res = subject.compile(variant, config)
        launch = subject.launcher(res, config)
        _warm(launch)
        prepared.append((label, launch))
    name = str(Path(job.out) / "time")
    session = proton.start(name, context="shadow")
    for label, launch in prepared:
        with proton.scope(label):
            for _ in range(job.launches):
                launch()
        torch.cuda.synchronize()
    proton.finalize(session)
    return {"hatchet": _written(name)}


def run_pcsampling(job: Job, subject: Subject) -> dict:
    import torch
    import triton.profiler as proton
    from . import lines
    from ..base.jsonio import write_json
    out = Path(job.out)
    prepared, files = [], {}
    for label, variant, config in _entries(job):
        ptx_name = str((out / "ptx" / f"{label}.ptx").resolve())
        with lines.relined_ptx(ptx_name) as hook:
            res = subject.compile(variant, config)
        plain = subject.compile(variant, config)
        lines.save_ptx(hook.original or "", Path(ptx_name))
        sass = lines.disassemble(res.binary)
        (out / "sass").mkdir(parents=True, exist_ok=True)
        (out / "sass" / f"{label}.sass").write_text(sass)
        files[label] = {"ptx": ptx_name, "sass": str(out / "sass" / f"{label}.sass"),
                        "same_code_as_unrelined": lines.same_code(res.binary, plain.binary),
                        "num_warps": res.metadata.get("num_warps"), "shared": res.metadata.get("shared")}
        prepared.append((label, subject.launcher(res, config)))
    mode = "pcsampling" if not job.pc_interval else f"pcsampling:interval={job.pc_interval}"
    name = str(out / "pcsampling")
    # The session starts before any entry's first launch: Proton maps a sampled PC to its line
    # through the cubin it sees when the module loads (CUPTI's module-loaded callback, which
    # fires only while a session is on). A module loaded before the session -- say by warm-up
    # launches -- has no cubin there, and every one of its samples stays on the kernel, without
    # a line. The warm-up runs inside the session, in a scope of its own that no entry reads.
    session = proton.start(name, backend="cupti", mode=mode)
    with proton.scope(WARMUP_SCOPE):
        for _, launch in prepared:
            _warm(launch)
    for label, launch in prepared:
        with proton.scope(label):
            for _ in range(max(1, job.launches // 4)):
                launch()
        torch.cuda.synchronize()
    proton.finalize(session)
    write_json(out / "pcsampling-files.json", files)
    return {"hatchet": _written(name), "files": files}


def run_scopes(job: Job, subject: Subject) -> dict:
    import torch
    import triton.profiler as proton
    import triton.profiler.language as pl
    from .instrument import instrumentation_mode, scopes_variant
    out = Path(job.out)
    pl.enable_semantic("triton")   # scopes the kernel's own source names (enter_scope / exit_scope)
    traces = {}
    for label, variant, config in _entries(job):
        plain = subject.compile(variant, config)
        _warm(subject.launcher(plain, config))
        name = str(out / f"scopes-{label}")
        session = proton.start(name, data="trace", backend="instrumentation",
                               mode=instrumentation_mode(job.scope_buffer))
        res = subject.compile(scopes_variant(variant, job.scopes), config)
        keep_metadata_files(res.compiled, out / "instrumented" / label)
        subject.launcher(res, config)()
        torch.cuda.synchronize()
        proton.finalize(session)
        from ..report import isa
        from .lines import disassemble
        sass = subject.target.facts.isa == "sass"
        n_plain = len(isa.parse_sass(disassemble(plain.binary, False)).instrs) if sass else None
        n_inst = len(isa.parse_sass(disassemble(res.binary, False)).instrs) if sass else None
        traces[label] = {"trace": _written(name), "instructions": n_plain, "instructions_instrumented": n_inst,
                         "remarks": [str(d) for _, r in res.python_results for d in r.diagnostics]}
    return {"traces": traces}


def _written(name: str) -> str:
    """The file Proton wrote for session ``name`` (it appends the format's suffix)."""
    p = Path(name)
    found = [q for suffix in (".hatchet", ".chrome_trace", ".json") if (q := p.with_name(p.name + suffix)).is_file()]
    if not found:
        raise RuntimeError(f"Proton wrote no file for session {name}")
    return str(found[0])


MODES = {"time": run_time, "pcsampling": run_pcsampling, "scopes": run_scopes}


def mode_job(payload: dict, ctx) -> dict:
    """An executor job: one session (``payload``: ``mode``, ``job``), in a worker process of its own
    (the job is ``fresh``). Its files go to the job's folder, which must be visible here."""
    job = Job.from_json(payload["job"])
    if not Path(job.out).is_dir():
        import socket
        raise RuntimeError(f"{job.out} is not visible on {socket.gethostname()}: on a cluster, irlab profile writes "
                           "into --out from the GPU's node; give a folder every node shares")
    import torch
    from ..timing.gpu import install_scratch_allocator
    install_scratch_allocator(torch)
    return MODES[payload["mode"]](job, Subject(job))


def main(argv=None) -> int:
    """``python -m irlab.profile.run MODE JOB.json RESULT.json``: one session, in this process."""
    argv = list(sys.argv[1:] if argv is None else argv)
    mode, job_path, result_path = argv
    job = Job.from_json(json.loads(Path(job_path).read_text()))
    import torch
    from ..timing.gpu import install_scratch_allocator
    install_scratch_allocator(torch)
    result = MODES[mode](job, Subject(job))
    Path(result_path).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover - run on the GPU machine
    sys.exit(main())
