"""Searching configs and variants on a GPU, and reporting against Triton's tuned best.

A search takes a kernel, shapes, a config space (tiles x warps x pipelining depths x extra
compile options such as ``maxnreg``) and a variant space (pipeline edits and Python passes, the
baseline first), and answers "which combination is fastest, and by how much against the config
a user would pick":

1. **Static pruning** (no GPU, in parallel on the host's cores): every config x variant is
   compiled for the target; what spills registers, or cannot launch there (a work-group over the
   target's or the binary's maximum size, more shared memory or registers than one work-group may
   have: the static report's launch check, :func:`irlab.report.occupancy.amd_launch_fit` and
   :func:`~irlab.report.occupancy.nvidia_launch_fit`) is dropped with the reason, and so is what
   fails to compile or what Triton's verifier rejects, and what crashed the compiler (a signal
   such as SIGABRT from an LLVM assertion, recorded with the compiler's last message: each
   compile runs in a process of its own, so a crash costs that candidate only). A variant whose
   binary is byte for byte the baseline's (or an earlier variant's) on a config is "same binary:
   no change", with the reason its passes gave for doing nothing, and is never timed there:
   timing a binary against itself measures only the order of the rounds. The compiles land in a
   per-variant cache the GPU worker reuses.
2. **Screening**: every survivor is timed in a few interleaved rounds (the variants of one config
   in one cell), after its output matched the reference. The fastest baseline configs per shape
   are the finalists for Triton's tuned best; each variant's fastest config is its best.
3. **Headline**: per shape, one cell times the baseline's finalists (its ``baseline_finalists``
   fastest configs in the screen; Triton's best is the fastest of them in these rounds), each
   variant on each finalist and on its own best config, and the library (cuBLAS) -- in the same
   rounds, with many rounds, so the ratios and their 95% intervals are measured head to head and
   not taken from the screen (where picking the fastest of many noisy timings flatters the
   winner: a baseline config picked by a screen's noise is a weak baseline, and every variant
   would look faster against it).

**A reference kernel** (``reference``, ``irlab ab --reference KERNEL``): another kernel of the same
problem -- the same shape keys, the same inputs, e.g. ``gemm_persistent_tma`` beside
``gemm_fp16``'s ``persistent-tma`` variant -- whose own configs (its spec's, as it defines them)
are compiled and pruned like the baseline's, screened on each shape in cells of their own, and
whose fastest config then joins the headline cell: timed in the same rounds as Triton's best and
the variants, after its output matched the reference output, and every entry of the cell gets a
ratio to it (``ratio_to_reference``) beside the ratio to the baseline. The tables add "reference
(its best config) TFLOP/s" and "variant vs reference (95% CI)" (the variant on its own best
config). A reference that takes other shapes than the kernel is refused.

Cells go to the executor (:mod:`irlab.executor`: every GPU of the host, or of a Ray cluster),
one cell per job on one GPU, from a shared queue; each config's screening cells are queued as
soon as its variants are compiled, so the GPUs time while the CPU still compiles. Only cells
timed on one GPU model are compared (the executor picks it, or ``gpu_model``). Every phase
appends its results as they finish and ``resume`` skips finished work (docs/executor.md).
"""
from __future__ import annotations

import contextlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..base.jsonio import write_json, write_text
from ..kernels.spec import TileConfig
from ..base.targets import Target
from .output import clock_note, devices_text, method_note, plot_bars, ratio_text, write_csv
from .plan import DEFAULT_RUNNER, Cell, Entry, Plan, resolve_config, tile_json
from .methods import DEFAULT as DEFAULT_METHOD
from ..base.jsonio import append_record, read_records
from ..passkit.variant import Variant
from ..base.workers import Crashed
from ..executor import Executor, LocalExecutor, current

# what a search's results folder holds the search of (kernel, target, method), written when it starts
FOLDER_FILE = "search.json"


class ResumeError(ValueError):
    """A results folder that a resumed search cannot go on from: it holds another search."""


def read_identity(out: Path) -> dict:
    """What ``out`` holds the search of: its :data:`FOLDER_FILE`, else (a folder written before there
    was one) its summary.json; {} where neither is."""
    for name in (FOLDER_FILE, "summary.json"):
        try:
            data = json.loads((Path(out) / name).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return {k: data[k] for k in ("kernel", "target", "method") if k in data}
    return {}


# the label of the reference kernel's entries (its screening cells; ``reference@CONFIG`` in a headline)
REFERENCE = "reference"
# per shape in Search.best: the baseline configs fastest in the screen, fastest first, that the headline
# times head to head to find Triton's best
FINALISTS = "baseline finalists"


def _to_stderr(msg: str) -> None:
    """A search's log where none is given: each message on stderr as it comes."""
    print(msg, flush=True, file=sys.stderr)


@dataclass
class Search:
    kernel: str                         # a kernel reference (irlab.kernels.get), as the worker will resolve it
    target: Target
    shapes: list[dict]
    configs: list[TileConfig]
    variants: list[Variant]             # the first is the baseline
    out: Path
    name: str = "search"
    screen_rounds: int = 5
    rounds: int = 21
    method: str = DEFAULT_METHOD
    launches: int | None = None         # launches per sample; None: sized per cell by the runner
    library: bool = True
    gpus: list[str] | None = None
    workers: int | None = None
    runner: str | None = None           # the GPU runner (module:Class); default irlab.timing.gpu:GpuRunner
    target_halfwidth: float | None = None   # headline: time until every 95% half-width is this narrow ...
    budget_s: float | None = None       # ... or this many seconds per cell are spent
    log: Callable[[str], object] = _to_stderr
    timings: dict = field(default_factory=dict)
    reference: str | None = None        # another kernel of the same problem whose best config joins the headline
    reference_configs: list[TileConfig] | None = None   # its configs (default: its spec's own)
    reference_static: list[dict] = field(default_factory=list)   # its static records (filled by static())
    baseline_finalists: int = 2         # baseline configs (fastest in the screen) the headline times to find the best
    gpu_model: str | None = None        # time on GPUs of this model only (default: the executor's choice)
    executor: Executor | None = None    # default: the one in use (irlab.executor.current), else this host's GPUs

    def __post_init__(self):
        self.out = Path(self.out)
        self.log = self.log or _to_stderr   # log=None given: the default
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise ValueError(f"variant names must differ: {names}")
        configs = [c.name for c in self.configs]
        shared = sorted({n for n in configs if configs.count(n) > 1})
        if shared:   # results are reported by name: two configs of one name would be credited to each other
            raise ValueError(f"config names must differ: {', '.join(shared)} names more than one config")
        if self.baseline_finalists < 1:
            raise ValueError(f"baseline_finalists must be at least 1, not {self.baseline_finalists}")
        if self.reference is not None:
            self.reference_configs = check_reference(self.kernel, self.reference, self.shapes, names,
                                                     self.reference_configs)

    # --- where it runs --------------------------------------------------------------------------
    @contextlib.contextmanager
    def _using_executor(self):
        """The executor of the timed phases (given, in use, or this host's ``gpus`` for this run) and
        the one GPU model they time on (``gpu_model``, else the executor's choice: said in the log
        and the README when others are left out)."""
        own = None
        self._active = self.executor or current()
        if self._active is None:
            self._active = own = LocalExecutor(self.gpus)
        notes = []
        try:
            self.gpu_model = self._active.choose_model(self.gpu_model, lambda m: (notes.append(m), self.log(m)))
            self.models_note = notes[0] if notes else None
            yield self._active
        finally:
            if own is not None:
                own.close()

    def _executor_text(self) -> str:
        active = getattr(self, "_active", None)
        return active.describe(self.gpu_model) if active is not None else "this host's GPUs"

    @property
    def _reference_configs(self) -> list[TileConfig]:
        """The reference kernel's configs: set by ``__post_init__`` whenever there is a reference."""
        assert self.reference_configs is not None, "a search without a reference kernel has no reference configs"
        return self.reference_configs

    @property
    def reference_name(self) -> str | None:
        """The reference kernel's name (its spec's), for tables."""
        if self.reference is None:
            return None
        from ..kernels import get
        return get(self.reference).name

    # --- 1: static pruning ----------------------------------------------------------------------
    def static(self, resume: bool = False, on_ready=None) -> list[dict]:
        """Compile every config x variant for the target; one record per candidate (static.jsonl,
        appended as each compile finishes), then :func:`mark_unchanged` over them. ``on_ready``:
        called with a config's screening cells (every shape) as soon as all its variants are
        compiled, so that GPUs can time them while the other configs still compile."""
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / "static.jsonl"
        done = {r["key"]: r for r in read_records(path)} if resume else {}
        if not resume and path.exists():
            path.unlink()
        todo = [(c, v) for c in self.configs for v in self.variants if _key(c, v) not in done]
        self.log(f"{self.name}: static pruning of {len(self.configs)} configs x {len(self.variants)} variants "
                 f"({len(todo)} to compile, {len(done)} already done)")
        t0 = time.perf_counter()
        ready = _Ready({c.name: {_key(c, v) for v in self.variants} for c in self.configs}, done,
                       lambda name: on_ready and on_ready(self.config_cells(self._by_name[name], done)))
        ref_path = self.out / "reference_static.jsonl"
        ref_done = {r["key"]: r for r in read_records(ref_path)} if resume and self.reference is not None else {}
        if self.reference is not None:
            base = self.variants[0]
            if not resume and ref_path.exists():
                ref_path.unlink()
            ref_ready = _Ready({c.name: {_key(c, base)} for c in self._reference_configs}, ref_done,
                               lambda name: on_ready and on_ready(self.reference_cells(name, ref_done)))
        self._compile(self.kernel, todo, path, done, ready.arrived)
        if self.reference is not None:   # the reference kernel's configs, as its baseline, in a file of their own
            ref_todo = [(c, base) for c in self._reference_configs if _key(c, base) not in ref_done]
            self.log(f"{self.name}: static pruning of the reference {self.reference_name}'s "
                     f"{len(self._reference_configs)} configs ({len(ref_todo)} to compile)")
            self._compile(self.reference, ref_todo, ref_path, ref_done, ref_ready.arrived)
            self.reference_static = [ref_done[_key(c, base)] for c in self._reference_configs
                                     if _key(c, base) in ref_done]
        self.timings["static_s"] = round(time.perf_counter() - t0, 1)
        return mark_unchanged([done[_key(c, v)] for c in self.configs for v in self.variants if _key(c, v) in done],
                              [v.name for v in self.variants])

    @property
    def _by_name(self) -> dict:
        return {c.name: c for c in self.configs}

    def _compile(self, kernel: str, todo: list, path: Path, done: dict, arrived=None) -> None:
        """Compile the (config, variant) candidates ``todo`` of ``kernel`` in parallel (the
        executor's CPU workers: this host's cores, or a Ray cluster's nodes), appending each
        record to ``path`` and into ``done`` (by key) as it finishes; ``arrived(rec)`` after each."""
        import contextlib
        import functools
        jobs = [(kernel, self.target.name, self.shapes[0], tile_json(c), c.name, _key(c, v), v.to_json(),
                 str(self.out / "cache")) for c, v in todo]
        if not jobs:
            return
        executor = self.executor or current() or LocalExecutor(["0"])
        try:
            results = executor.map_cpu(_static_one, jobs, self.workers, warm=functools.partial(_warm_up, self.target))
            with contextlib.closing(results):
                for n, (i, rec) in enumerate(results, 1):
                    if isinstance(rec, Crashed):
                        c, v = todo[i]
                        rec = {**_head(c, v), "status": "crashed", "signal": rec.signal, "reason": str(rec),
                               "crash": rec.to_json()}
                        self.log(f"  static: {c.name} {v.name}: {rec['reason']}")
                    append_record(path, rec)
                    done[rec["key"]] = rec
                    if arrived is not None:
                        arrived(rec)
                    if n % 10 == 0 or n == len(jobs):
                        self.log(f"  static: {n}/{len(jobs)} compiled")
        finally:
            _drop_unfinished_cache_writes(self.out / "cache")

    # --- 2: screening ---------------------------------------------------------------------------
    def screen(self, static: list[dict], resume: bool = False) -> dict:
        """Time every surviving config's variants in a few rounds; the collected results."""
        with self._screen_sweep(resume) as sweep:
            for cell in self.screen_cells(static):
                sweep.add(cell)
        return self._screened(sweep.out)

    def _screen_sweep(self, resume: bool):
        from .harness import Sweep
        self.log(f"{self.name}: screening ({len(self.shapes)} shape(s)) in {self.screen_rounds} rounds on "
                 f"{self._executor_text()}")
        self._screen_t0 = time.perf_counter()
        plan = Plan([], self.method, self.screen_rounds, self.launches, cache_dir=str(self.out / "cache"))
        return Sweep(plan, self.out / "screen.jsonl", resume=resume, log=self.log,
                     executor=getattr(self, "_active", None) or self.executor,
                     gpu_model=self.gpu_model, more=True, runner=self.runner or DEFAULT_RUNNER)

    def _screened(self, path: Path) -> dict:
        from . import collect
        self.timings["screen_s"] = round(time.perf_counter() - self._screen_t0, 1)
        return collect(path, self.gpu_model)

    def screen_cells(self, static: list[dict]) -> list[Cell]:
        """The screening cells: per shape, each config whose baseline passed static pruning, with
        the variants that passed there (a variant whose binary is another entry's is left out)."""
        by_shape: dict[str, list[Cell]] = {}
        for c in self.configs:
            for cell in self.config_cells(c, {r["key"]: r for r in static}, marked=True):
                by_shape.setdefault(_dims(cell.shape), []).append(cell)
        if self.reference is not None:   # the reference kernel's configs that passed, each in a cell of its own
            ref = {r["key"]: r for r in self.reference_static}
            for c in self._reference_configs:
                for cell in self.reference_cells(c.name, ref):
                    by_shape.setdefault(_dims(cell.shape), []).append(cell)
        return [cell for shape in self.shapes for cell in by_shape.get(_dims(shape), [])]

    def config_cells(self, c: TileConfig, records: dict, marked: bool = False) -> list[Cell]:
        """One config's screening cells, one per shape, from its static ``records`` (by key; unless
        ``marked``, :func:`mark_unchanged` is applied to them first): the variants that passed,
        the baseline first; none if the baseline did not pass."""
        mine = [records[_key(c, v)] for v in self.variants if _key(c, v) in records]
        if not marked:
            mine = mark_unchanged(mine, [v.name for v in self.variants])
        ok = {r["key"] for r in mine if r["status"] == "ok"}
        entries = [Entry(v.name, variant_spec=v.to_json()) for v in self.variants if _key(c, v) in ok]
        if not entries or entries[0].label != self.variants[0].name:
            return []
        return [Cell(self.name, self.kernel, shape, c.name, entries, tile_json(c)) for shape in self.shapes]

    def reference_cells(self, name: str, records: dict) -> list[Cell]:
        """The reference kernel's config ``name`` on every shape, if its compile passed."""
        assert self.reference is not None, "reference cells are made only for a search with a reference kernel"
        c = {r.name: r for r in self._reference_configs}[name]
        base = self.variants[0]
        rec = records.get(_key(c, base))
        if rec is None or rec["status"] != "ok":
            return []
        return [Cell(self.name, self.reference, shape, c.name, [Entry(REFERENCE, variant_spec=base.to_json())],
                     tile_json(c)) for shape in self.shapes]

    def would_time(self, static: list[dict]) -> list[dict]:
        """What a GPU run would time after this static pruning: one row per screening cell (shape,
        config, entries), in the order the screen runs them."""
        return [{"shape": _dims(c.shape), "config": c.config,
                 "entries": [f"{e.label} ({self.reference_name})" if e.label == REFERENCE and c.kernel == self.reference
                             else e.label for e in c.entries]}
                for c in self.screen_cells(static)]

    # --- 3: headline ----------------------------------------------------------------------------
    def best(self, screen: dict) -> dict:
        """Per shape: the fastest baseline config and each variant's fastest config (screen medians),
        and under FINALISTS the ``baseline_finalists`` fastest baseline configs, fastest first."""
        base = self.variants[0].name
        out: dict[str, dict[str, str | list[str]]] = {}   # per shape: label -> config name; FINALISTS -> names
        for shape in self.shapes:
            dims = _dims(shape)
            timed: dict[str, list[tuple[float, str]]] = {}
            for c in screen["cells"].values():
                cell = c.get("cell") or {}
                if _dims(cell.get("shape") or {}) != dims:
                    continue
                of_reference = self.reference is not None and cell.get("kernel") == self.reference
                for label, rec in c["entries"].items():
                    if rec.get("status") == "ok" and (label == REFERENCE) == of_reference:
                        timed.setdefault(label, []).append((rec["median_ms"], cell["config"]))
            if base not in timed:
                continue
            out[dims] = {label: min(v)[1] for label, v in timed.items()}
            out[dims][FINALISTS] = [cfg for _, cfg in sorted(timed[base])[:self.baseline_finalists]]
        return out

    def headline(self, best: dict, static: list[dict], resume: bool = False) -> dict:
        """Per shape, one cell: the baseline's finalist configs (Triton's best is the fastest of them
        in these rounds: :func:`choose_baseline`), each variant on each of them (where its binary
        there differs from the baseline's and passed static pruning) and on its own best, the
        library. A few screening rounds cannot rank configs a few percent apart: taking the
        screen's pick as the baseline would credit a variant with the screen's noise."""
        from . import collect, run_sweep
        base = self.variants[0]
        configs = {c.name: c for c in self.configs}
        ok = {r["key"] for r in static if r["status"] == "ok"}
        cells = []
        for shape in self.shapes:
            b = best.get(_dims(shape))
            if not b:
                continue
            cb = configs[b[base.name]]
            finalists = b.get(FINALISTS) or [cb.name]
            entries = [Entry(f"{base.name}@{name}", variant_spec=base.to_json(), config=name,
                             tile=tile_json(configs[name])) for name in finalists]
            for v in self.variants[1:]:
                for cfg_name in dict.fromkeys([*finalists, b.get(v.name)]):
                    if cfg_name is None or _key(configs[cfg_name], v) not in ok:
                        continue
                    c = configs[cfg_name]
                    entries.append(Entry(f"{v.name}@{c.name}", variant_spec=v.to_json(), config=c.name,
                                         tile=tile_json(c)))
            reference = None
            if self.reference is not None and b.get(REFERENCE):   # the reference kernel's best config
                cr = {c.name: c for c in self._reference_configs}[b[REFERENCE]]
                reference = f"{REFERENCE}@{cr.name}"
                entries.append(Entry(reference, variant_spec=base.to_json(), config=cr.name, tile=tile_json(cr),
                                     kernel=self.reference))
            if self.library:
                entries.append(Entry("library", kind="library"))
            cells.append(Cell(self.name, self.kernel, shape, cb.name, entries, tile_json(cb), reference))
        self.log(f"{self.name}: headline, {len(cells)} cell(s) in {self.rounds} rounds")
        t0 = time.perf_counter()
        plan = Plan(cells, self.method, self.rounds, self.launches, cache_dir=str(self.out / "cache"),
                    target_halfwidth=self.target_halfwidth, budget_s=self.budget_s)
        path = run_sweep(plan, self.out / "headline.jsonl", resume=resume, log=self.log,
                         executor=getattr(self, "_active", None) or self.executor,
                         gpu_model=self.gpu_model, runner=self.runner or DEFAULT_RUNNER)
        self.timings["headline_s"] = round(time.perf_counter() - t0, 1)
        return choose_baseline(collect(path, self.gpu_model), base.name)

    def identity(self) -> dict:
        """What a results folder holds the search of: a resume must be the same search."""
        return {"kernel": self.kernel, "target": self.target.name, "method": self.method}

    def claim_folder(self, resume: bool) -> None:
        """Write :data:`FOLDER_FILE` into ``out`` (what the folder holds); with ``resume``, first check
        that the folder holds this search (:class:`ResumeError` if it is another kernel's, target's or
        method's, whose compiles and timings would be taken for this one's)."""
        path = self.out / FOLDER_FILE
        if resume:
            earlier = read_identity(self.out)
            differ = [f"{k} {earlier[k]!r}, not {v!r}" for k, v in self.identity().items()
                      if k in earlier and earlier[k] != v]
            if differ:
                raise ResumeError(f"{self.out} holds a search of another problem ({'; '.join(differ)}): resume it "
                                  "with the same options, or give another --out")
        self.out.mkdir(parents=True, exist_ok=True)
        write_json(path, self.identity())

    def run(self, resume: bool = False, static_only: bool = False) -> dict:
        t0 = time.perf_counter()
        self.claim_folder(resume)
        if static_only:
            static = self.static(resume)
            result: dict[str, Any] = {"static": static}
        else:
            with self._using_executor():
                # the GPUs screen each config as soon as its variants are compiled, while the CPU
                # compiles the others (their workers start, and make their runners, meanwhile)
                with self._screen_sweep(resume) as sweep:
                    static = self.static(resume, on_ready=lambda cells: [sweep.add(c) for c in cells])
                screen = self._screened(sweep.out)
                best = self.best(screen)
                result = {"static": static, "screen": screen, "best": best,
                          "headline": self.headline(best, static, resume)}
                self.devices = devices_text([screen, result["headline"]], self.models_note)
        self.timings["total_s"] = round(time.perf_counter() - t0, 1)
        result["timings"] = dict(self.timings)
        write_json(self.out / "summary.json", {"kernel": self.kernel, "target": self.target.name,
                                               "shapes": self.shapes, "gpus": self.gpus, "gpu_model": self.gpu_model,
                                               "devices": getattr(self, "devices", None),
                                               "configs": [c.name for c in self.configs],
                                               "variants": [v.name for v in self.variants],
                                               "static": static_counts(static),
                                               "no_change": [{"config": r["config"], "variant": r["variant"]["name"],
                                                              "same_binary_as": r["same_binary_as"],
                                                              "reason": r["reason"]}
                                                             for r in static if r["status"] == "no-change"],
                                               "not_timed": [{"config": r["config"], "variant": r["variant"]["name"],
                                                              "status": r["status"], "reason": r["reason"],
                                                              **({"error": r["error"]} if "error" in r else {})}
                                                             for r in static if r["status"] not in ("ok", "no-change")],
                                               **({"reference": self.reference_name,
                                                   "reference_configs": [c.name for c in self._reference_configs],
                                                   "reference_static": static_counts(self.reference_static)}
                                                  if self.reference is not None else {}),
                                               **({"would_time": self.would_time(static)} if static_only else {}),
                                               "timings": self.timings, "best": result.get("best")})
        if static_only:
            result["would_time"] = self.would_time(static)
        write_text(self.out / "README.md", render(self, result) + "\n")
        if "headline" in result:
            write_figures(self, result)
        return result


def choose_baseline(headline: dict, base: str) -> dict:
    """Triton's best config of each headline cell: of the baseline's finalists (``BASE@CONFIG``
    entries) the fastest there (median time per launch). Sets the cell's ``baseline`` (that
    label) and ``baseline_finalists`` (each finalist's label, median and TFLOP/s). Where it is not
    the cell's first entry (the screen's pick, against which the rounds were timed), every entry's
    ``ratio_to_baseline`` is re-estimated against it from the same rounds (the times are paired
    by round) and keeps the cell's A/A floor; the A/A control stays the first entry against
    itself. Returns ``headline``, changed in place."""
    from ..base.stats import ratio_estimate
    from .worker import CONTROL
    for c in headline.get("cells", {}).values():
        entries = c.get("entries", {})
        first = f"{base}@{(c.get('cell') or {}).get('config')}"
        timed = [k for k, r in entries.items() if k.startswith(f"{base}@") and r.get("status") == "ok"]
        if not timed:
            continue
        chosen = min(timed, key=lambda k: (entries[k]["median_ms"], k != first))
        c["baseline"] = chosen
        c["baseline_finalists"] = [{"label": k, "median_ms": entries[k]["median_ms"], "tflops": entries[k].get("tflops")}
                                   for k in timed]
        if chosen == first:
            continue
        base_times = entries[chosen]["times_ms"]
        for label, rec in entries.items():
            if label == CONTROL or rec.get("status") != "ok" or len(rec.get("times_ms") or []) != len(base_times):
                continue
            rec["ratio_to_baseline"] = {**ratio_estimate(rec["times_ms"], base_times).with_floor(c.get("aa_floor"))
                                        .to_json(), "against": chosen}
    return headline


def check_reference(kernel: str, reference: str, shapes: list[dict], variant_names: list[str],
                    configs: list[TileConfig] | None) -> list[TileConfig]:
    """Refuse a reference kernel that cannot be timed beside ``kernel`` (ValueError, saying why):
    another problem (other shape keys, or a shape it does not take), the kernel itself, a captured
    launch, or a variant named like its entries; its configs (default: its spec's own)."""
    from ..kernels import get
    from ..program.launches import is_launch_ref
    if is_launch_ref(kernel) or is_launch_ref(reference):
        raise ValueError("a reference kernel is timed on the kernel's problem shapes: a captured launch has none")
    spec, ref = get(kernel), get(reference)
    if ref is spec:
        raise ValueError(f"the reference kernel is {spec.name} itself: name another kernel of the same problem")
    if set(ref.default_shape) != set(spec.default_shape):
        raise ValueError(f"reference kernel {ref.name} takes other shapes than {spec.name}: its shape keys are "
                         f"{', '.join(ref.default_shape)}, {spec.name}'s {', '.join(spec.default_shape)}; a reference "
                         "must take the same problem (the same shape keys and inputs)")
    for shape in shapes:
        ref.shape(shape)   # a dtype it does not take: KernelError (a ValueError) says which
    if REFERENCE in variant_names:
        raise ValueError(f"a variant named {REFERENCE!r} would be taken for the reference kernel's entries: rename it")
    configs = list(ref.configs.values()) if configs is None else list(configs)
    names = [c.name for c in configs]
    if not configs or len(set(names)) != len(names):
        raise ValueError(f"reference kernel {ref.name}: give configs with names that differ (got {names})")
    return configs


def _key(config: TileConfig, variant: Variant) -> str:
    """A candidate's key in static.jsonl: the full config (every meta-parameter and option, not its
    name) and the variant."""
    return f"{json.dumps(tile_json(config), sort_keys=True, separators=(',', ':'))}|{variant.name}"


def _head(config: TileConfig, variant: Variant) -> dict:
    return {"key": _key(config, variant), "config": config.name, "tile": tile_json(config), "variant": variant.to_json()}


def _warm_up(target: Target) -> None:
    """Import and cache what every compile needs once, in the parent, so each forked compile
    starts warm."""
    from ..bridge import compat
    from ..bridge import compile as _compile  # noqa: F401
    from .. import report as _report  # noqa: F401
    from ..ir import parse
    compat.warm_up([target])
    parse("module {\n}\n")


def _drop_unfinished_cache_writes(cache: Path) -> None:
    """Remove what compiles killed mid-write left in the kept Triton cache: Triton writes each file
    in a ``tmp.pid_<pid>_*`` folder and renames it into place, so such a folder is never read."""
    import shutil
    for d in cache.glob("*/*/tmp.pid_*"):
        shutil.rmtree(d, ignore_errors=True)


class _Ready:
    """Which configs have all their compiles in: ``keys`` maps a config name to the static keys it
    needs; ``then(name)`` is called once per config as its last key arrives (at once for configs
    an earlier run finished)."""

    def __init__(self, keys: dict[str, set], done: dict, then):
        self.missing = {name: set(k) - set(done) for name, k in keys.items()}
        self.owner = {key: name for name, k in keys.items() for key in k}
        self.then = then
        for name, left in self.missing.items():
            if not left:
                then(name)

    def arrived(self, rec: dict) -> None:
        name = self.owner.get(rec["key"])
        if name is None:
            return
        left = self.missing.get(name)
        if left is None or rec["key"] not in left:
            return
        left.discard(rec["key"])
        if not left:
            self.then(name)


# statuses of a static record, in the order the summaries count them
STATIC_STATUSES = ("ok", "no-change", "pruned", "rejected", "compile-error", "crashed")


def mark_unchanged(records: list[dict], variants: list[str]) -> list[dict]:
    """``records`` (one per config x variant) with each variant whose binary is byte for byte that
    of the baseline or of an earlier variant on the same config marked ``no-change``: the entry it
    equals (``same_binary_as``) and why nothing changed (what its passes said)."""
    order = {name: i for i, name in enumerate(variants)}
    by_config: dict[str, list[dict]] = {}
    for r in records:
        by_config.setdefault(r["key"].rsplit("|", 1)[0], []).append(r)
    out = []
    for group in by_config.values():
        seen: dict[str, str] = {}
        for r in sorted(group, key=lambda r: order.get(r["variant"]["name"], len(order))):
            sha, name = r.get("binary_sha256"), r["variant"]["name"]
            if r["status"] == "ok" and sha in seen:
                r = {**r, "status": "no-change", "same_binary_as": seen[sha],
                     "reason": f"same binary as {seen[sha]}: no change ({why_unchanged(r)})"}
            elif r["status"] == "ok" and sha:
                seen[sha] = name
            out.append(r)
    return out


def why_unchanged(rec: dict) -> str:
    """Why a variant left the binary as it was, from what its passes reported."""
    passes = rec.get("passes") or []
    if not passes:
        return "its pipeline edits leave the binary as it was"
    changed = [p["pass"] for p in passes if p["changed"]]
    if changed:
        return f"{', '.join(dict.fromkeys(changed))} changed the IR, but it compiles to the same binary"
    said = []
    for p in passes:
        notes = list(dict.fromkeys(p.get("notes") or []))
        more = f" (+{len(notes) - 2} more)" if len(notes) > 2 else ""
        said.append(f"{p['pass']}: " + ("; ".join(notes[:2]) + more if notes else "changed nothing"))
    return "; ".join(said)


def static_counts(static: list[dict]) -> dict:
    """How many candidates ended in each static status (every status named, zeros included)."""
    counts = {s: 0 for s in STATIC_STATUSES}
    for r in static:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts


def static_summary(static: list[dict]) -> str:
    """One sentence the console and the README share: how many candidates are timed and why the
    others are not."""
    n = static_counts(static)
    passed = n["ok"] + n["no-change"]
    text = f"{passed} of {len(static)} candidates passed static pruning"
    if n["no-change"]:
        text += f" ({n['no-change']} of them the same binary as another entry: no change, not timed)"
    why = [f"{n[s]} {label}" for s, label in (("pruned", "pruned"), ("rejected", "rejected by Triton's verifier"),
                                               ("compile-error", "failed to compile"),
                                               ("crashed", "crashed the compiler")) if n[s]]
    return text + ("; " + ", ".join(why) if why else "")


def _dims(shape: dict) -> str:
    return "x".join(str(v) for v in shape.values()) or "as captured"


def _static_one(job) -> dict:
    """Compile one candidate and judge it from its static report (runs in a worker process)."""
    kernel_ref, target, shape, tile, config_name, key, variant_json, cache = job
    from ..bridge.compile import compile_kernel
    from ..kernels import get
    from ..program.launches import is_launch_ref, load as load_launch
    from ..report import from_compile
    variant = Variant.from_json(variant_json)
    rec = {"key": key, "config": config_name, "tile": tile, "variant": variant_json}
    try:
        if is_launch_ref(kernel_ref):   # a captured launch: its TTIR at its own options
            res = load_launch(kernel_ref).recompile(target, variant)
        else:
            spec = get(kernel_ref)
            cfg = resolve_config(spec, config_name, tile)
            res = compile_kernel(spec, target, shape=shape, config=cfg, variant=variant, cache_dir=cache)
        rep = from_compile(res)
    except Exception as e:   # recorded as the reason this candidate is not timed: one line, and the whole text
        from ..base.user_errors import compact_reason, full_reason, user_error
        status = "rejected" if type(e).__name__ in ("VerifierError", "PassRejected") else "compile-error"
        return {**rec, "status": status, "reason": compact_reason(e), "error": full_reason(e),
                "in_user_code": user_error(e) is not None}
    r, occ, t = rep.resources, rep.occupancy, Target.parse(target)
    rec.update(registers=r.get("registers") or r.get("vgpr_count"), shared=r.get("shared"),
               spills=(r.get("spill_stores") or 0) + (r.get("spill_loads") or 0) + (r.get("vgpr_spill_count") or 0),
               occupancy=occ.to_json() if occ is not None else None,
               launch=rep.launch.to_json(),
               python_passes=[str(d) for _, p in res.python_results for d in p.diagnostics],
               passes=[{"pass": p.name, "changed": p.changed,
                        "notes": [d.message for d in p.diagnostics if d.severity in ("note", "warning")]}
                       for _, p in res.python_results],
               binary_sha256=res.binary_sha256)
    if not rep.launch.fits:
        return {**rec, "status": "pruned", "reason": f"does not launch on {t}: {rep.launch.why()}"}
    if rec["spills"]:
        return {**rec, "status": "pruned", "reason": f"spills {rec['spills']} bytes of registers"}
    return {**rec, "status": "ok"}


# ------------------------------------------------------------------------------------------------
# tables

def _ratio_cell(rec: dict, static: dict | None = None) -> str:
    """A variant's speedup with its interval, or why it has none: what static pruning said when it
    never reached the GPU (``static``: its static record), else the timed entry's status."""
    if not rec and static is not None and static["status"] != "ok":
        return _not_timed(static)
    return ratio_text(rec)


def _not_timed(static: dict) -> str:
    if static["status"] == "no-change":
        return f"same binary as {static['same_binary_as']}: no change"
    return f"not timed: {static['status']}"


def _binary_cell(static: dict | None) -> str:
    """Whether a variant changed the binary of a config (from its static record)."""
    if static is None:
        return "-"
    if static["status"] == "ok":
        return "changed"
    return _not_timed(static)


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _by_candidate(static: list[dict]) -> dict:
    """Static records by (config name, variant name): names are unique within a search."""
    return {(r["config"], r["variant"]["name"]): r for r in static}


def headline_rows(search: Search, result: dict) -> list[dict]:
    """One row per shape and variant: the library, Triton's best config, the variant on it (or, where
    its binary there is the baseline's, that), and the variant's own best config against Triton's
    best."""
    rows = []
    base = search.variants[0].name
    static = _by_candidate(result.get("static") or [])
    for c in result.get("headline", {}).get("cells", {}).values():
        cell = c.get("cell") or {}
        entries = c["entries"]
        shape = cell.get("shape") or {}
        b_label = c.get("baseline") or next((k for k in entries if k.startswith(f"{base}@")), None)
        if b_label is None:
            continue
        b = entries[b_label]
        lib = entries.get("library", {})
        best_cfg = b_label.split("@", 1)[1]
        for v in search.variants[1:]:
            own = result["best"].get(_dims(shape), {}).get(v.name)
            on_best = entries.get(f"{v.name}@{best_cfg}", {})
            on_own = entries.get(f"{v.name}@{own}", {}) if own else {}
            mine = [r for (_, name), r in static.items() if name == v.name]
            built = [r for r in mine if r["status"] in ("ok", "no-change")]   # the rest were pruned
            unchanged = bool(built) and all(r["status"] == "no-change" for r in built)
            where = "every config" if len(built) == len(mine) else "every config it compiled for"
            ref_label = cell.get("reference") or next((k for k in entries if k.startswith(f"{REFERENCE}@")), None)
            ref = entries.get(ref_label, {}) if ref_label else {}
            mine_best = on_own or on_best   # the variant at its own best config (Triton's best, where that is it)
            rows.append({"shape": shape, "variant": v.name, "library_tflops": lib.get("tflops"),
                         "best_config": best_cfg, "best_tflops": b.get("tflops"),
                         "binary": _binary_cell(static.get((best_cfg, v.name))),
                         "on_best_tflops": on_best.get("tflops"), "on_best": on_best,
                         "on_best_static": static.get((best_cfg, v.name)),
                         "own_config": own, "own_tflops": on_own.get("tflops"), "own": on_own,
                         "own_note": f"same binary as the baseline on {where}: no change" if unchanged else None,
                         "method": b.get("method"), "rounds": b.get("rounds"),
                         **({"reference_config": ref_label.split("@", 1)[1] if ref_label else None,
                             "reference_tflops": ref.get("tflops"), "reference": ref,
                             "vs_reference": mine_best if ref.get("status") == "ok" else {},
                             "vs_reference_note": _reference_note(ref_label, ref, mine_best, unchanged)}
                            if search.reference is not None else {})})
    return rows


def _reference_note(label: str | None, ref: dict, mine: dict, unchanged: bool) -> str | None:
    """Why a row has no ratio to the reference kernel (None where it has one)."""
    if label is None:
        return "reference not timed: none of its configs passed the screen"
    if ref.get("status") != "ok":
        return f"reference not timed: {ref.get('status', 'missing')}"
    if not mine:
        return "same binary as the baseline: no change" if unchanged else "variant not timed"
    return None


def render(search: Search, result: dict) -> str:
    import triton
    t = search.timings
    static = result["static"]
    by_candidate = _by_candidate(static)
    lines = [f"# {search.name}: {search.kernel} on {search.target}", "",
             f"- configs: {len(search.configs)}; variants: {', '.join(v.name for v in search.variants)} "
             f"(the first is the baseline); shapes: {', '.join(_dims(s) for s in search.shapes)}",
             f"- static pruning: {static_summary(static)} ({t.get('static_s')} s)",
             *([f"- reference kernel: {search.reference_name}, its own {len(search._reference_configs)} configs: "
                f"{static_summary(search.reference_static)}"] if search.reference is not None else []),
             f"- triton {triton.__version__}; wall time: static pruning {t.get('static_s', '-')} s, screening "
             f"{t.get('screen_s', '-')} s (it starts while the compiles run), headline {t.get('headline_s', '-')} s, "
             f"total {t.get('total_s', '-')} s",
             *([f"- {search.devices}; every cell's rounds ran on one GPU, and only cells of one GPU model are "
                "compared"] if getattr(search, "devices", None) else []), ""]
    if "headline" in result:
        env = (result["headline"].get("env") or [{}])[0]
        has_ref = search.reference is not None
        lines += ["## Headline: against Triton's tuned best", "",
                  "| shape (MxNxK) | library TFLOP/s | Triton's best config | its TFLOP/s | variant | its binary on that "
                  "config | variant on that config | speedup (95% CI) | variant's best config | its TFLOP/s | speedup vs "
                  "Triton's best (95% CI) |" + (" reference (its best config) TFLOP/s | variant vs reference (95% CI) |"
                                                if has_ref else ""),
                  "| --- | ---: | --- | ---: | --- | --- | ---: | --- | --- | ---: | --- |" + (" ---: | --- |"
                                                                                            if has_ref else "")]
        for r in headline_rows(search, result):
            f = lambda x: "-" if x is None else f"{x:.1f}"  # noqa: E731
            own = r["own_note"] or _ratio_cell(r["own"])
            ref = ""
            if has_ref:
                ref_tf = f"{f(r['reference_tflops'])} ({r['reference_config']})" if r["reference_config"] else "-"
                ref = f" {ref_tf} | {r['vs_reference_note'] or ratio_text(r['vs_reference'], 'ratio_to_reference')} |"
            lines.append(f"| {_dims(r['shape'])} | {f(r['library_tflops'])} | {r['best_config']} | {f(r['best_tflops'])} | "
                         f"{r['variant']} | {r['binary']} | {f(r['on_best_tflops'])} | "
                         f"{_ratio_cell(r['on_best'], r['on_best_static'])} | "
                         f"{r['own_config'] or '-'} | {f(r['own_tflops'])} | {own} |" + ref)
        clock = clock_note(result["headline"])
        lines += ["", f"{method_note(result['headline'])} The baseline is Triton's best config: of the "
                  f"{search.baseline_finalists} baseline config(s) fastest in the screen, the fastest in these rounds "
                  f"(finalists per shape: {finalists_text(result['headline'])}). Every timed entry "
                  "first matched the reference. A variant whose binary is the baseline's is not timed against it "
                  "(\"same binary: no change\")."
                  + (f" The reference kernel {search.reference_name} is timed at its fastest screened config in the "
                     "same rounds; \"variant vs reference\" = reference time / the variant's time at its own best "
                     "config - 1." if has_ref else ""),
                  f"GPU: {env.get('gpu')} (driver {env.get('driver')}, {env.get('sm_count')} SMs), torch "
                  f"{env.get('torch')}, triton {env.get('triton')}, CUDA {env.get('cuda_runtime')}, {env.get('date')}"
                  + (f"; {clock}" if clock else "") + ". Plot: `headline.png`; rows: `headline.csv`.", ""]
    if "screen" in result:
        lines += ["## Every config (screening rounds)", "",
                  f"{search.screen_rounds} interleaved rounds per cell: enough to rank configs, not to quote; the "
                  "headline above re-measures the winners head to head.", "",
                  "| shape | config | " + " | ".join(f"{v.name} TFLOP/s" for v in search.variants) + " | "
                  + " | ".join(f"{v.name} vs {search.variants[0].name}" for v in search.variants[1:]) + " |",
                  "| --- | --- | " + " | ".join("---:" for _ in search.variants) + " | "
                  + " | ".join("---" for _ in search.variants[1:]) + " |"]
        own_cells = [c for c in result["screen"]["cells"].values()
                     if search.reference is None or (c.get("cell") or {}).get("kernel") != search.reference]
        for c in sorted(own_cells,
                        key=lambda c: (_dims((c.get("cell") or {}).get("shape") or {}),
                                       -((c["entries"].get(search.variants[0].name) or {}).get("tflops") or 0))):
            cell, e = c.get("cell") or {}, c["entries"]
            tf = [(e.get(v.name) or {}).get("tflops") for v in search.variants]
            lines.append(f"| {_dims(cell.get('shape') or {})} | {cell.get('config')} | "
                         + " | ".join("-" if x is None else f"{x:.1f}" for x in tf) + " | "
                         + " | ".join(_ratio_cell(e.get(v.name) or {}, by_candidate.get((cell.get("config"), v.name)))
                                      for v in search.variants[1:]) + " |")
        lines.append("")
        if search.reference is not None:
            lines += reference_screen_lines(search, result["screen"])
    if "would_time" in result:
        lines += would_time_lines(search, result["would_time"])
    dropped = [r for r in static if r["status"] != "ok"] + \
        [{**r, "variant": {"name": f"{REFERENCE} ({search.reference_name})"}} for r in search.reference_static
         if r["status"] != "ok"]
    if dropped:
        lines += ["## Not timed (no change, static pruning, compile failures and crashes)", "",
                  "| config | variant | why |", "| --- | --- | --- |"]
        lines += [f"| {r['config']} | {r['variant']['name']} | "
                  f"{_md(r['reason'] if r['status'] == 'no-change' else r['status'] + ': ' + r['reason'])} |"
                  for r in dropped]
        lines.append("")
    lines += ["Files: `static.jsonl`, " + ("`reference_static.jsonl`, " if search.reference is not None else "")
              + "`screen*.jsonl`, `headline*.jsonl` (raw, one JSON line per result), "
              "`summary.json`."]
    return "\n".join(lines)


def finalists_text(headline: dict) -> str:
    """Each headline cell's baseline finalists with their TFLOP/s, the chosen one first; where the
    screen's pick lost, said so."""
    out = []
    for c in headline.get("cells", {}).values():
        fin = c.get("baseline_finalists") or []
        if not fin:
            continue
        dims = _dims((c.get("cell") or {}).get("shape") or {})
        chosen = c.get("baseline")
        tf = lambda r: "-" if r.get("tflops") is None else f"{r['tflops']:.1f}"  # noqa: E731
        ranked = sorted(fin, key=lambda r: r["label"] != chosen)
        text = ", ".join(f"{r['label'].split('@', 1)[1]} {tf(r)}" for r in ranked)
        first = (c.get("cell") or {}).get("config")
        if chosen.split("@", 1)[1] != first:
            text += f"; the screen's pick {first} was slower here, ratios are against {chosen.split('@', 1)[1]}"
        out.append(f"{dims}: {text}")
    return "; ".join(out) or "-"


def reference_screen_lines(search: Search, screen: dict) -> list[str]:
    """The reference kernel's screening cells: one row per shape and config."""
    lines = [f"### The reference kernel {search.reference_name} (screening rounds)", "",
             "| shape | config | TFLOP/s |", "| --- | --- | ---: |"]
    cells = [c for c in screen["cells"].values() if (c.get("cell") or {}).get("kernel") == search.reference]
    for c in sorted(cells, key=lambda c: (_dims((c.get("cell") or {}).get("shape") or {}),
                                          -((c["entries"].get(REFERENCE) or {}).get("tflops") or 0))):
        cell, e = c.get("cell") or {}, c["entries"].get(REFERENCE) or {}
        tf = e.get("tflops")
        lines.append(f"| {_dims(cell.get('shape') or {})} | {cell.get('config')} | "
                     + (f"{tf:.1f}" if tf is not None else f"not timed: {e.get('status') or c.get('status', 'missing')}")
                     + " |")
    return lines + [""]


def would_time_lines(search: Search, cells: list[dict]) -> list[str]:
    """The README section of a static-only run: every screening cell a GPU run would time, then
    what the headline would time of the winners."""
    lines = ["## What a GPU run would time", ""]
    if not cells:
        return lines + ["Nothing: no config's baseline passed static pruning (see below for why).", ""]
    lines += [f"Screening, {search.screen_rounds} interleaved rounds per cell ({len(cells)} cells); the entries of "
              "a cell are timed on the same inputs:", "", "| shape | config | entries |", "| --- | --- | --- |"]
    lines += [f"| {c['shape']} | {c['config']} | {', '.join(c['entries'])} |" for c in cells]
    lines += ["", f"Then per shape a headline cell of {search.rounds} rounds: the fastest baseline config (Triton's "
              "tuned best), each variant on it and on its own fastest config"
              + (f", the reference kernel {search.reference_name} at its fastest config" if search.reference else "")
              + (", and the library" if search.library else "") + ".", ""]
    return lines


def failure_lines(static: list[dict]) -> list[str]:
    """The distinct reasons candidates failed to compile, were rejected or crashed, each once with
    how many candidates it cost (for the console)."""
    counts: dict[str, int] = {}
    for r in static:
        if r["status"] in ("compile-error", "rejected", "crashed"):
            counts[f"{r['status']}: {r['reason']}"] = counts.get(f"{r['status']}: {r['reason']}", 0) + 1
    return [f"{why} ({n} candidate{'s' if n > 1 else ''})" for why, n in counts.items()]


def write_figures(search: Search, result: dict) -> None:
    """headline.csv and headline.png: per shape, the library, Triton's best and each variant."""
    rows = headline_rows(search, result)
    write_csv([{"shape": _dims(r["shape"]), "variant": r["variant"], "library_tflops": r["library_tflops"],
                "best_config": r["best_config"], "best_tflops": r["best_tflops"], "on_best_tflops": r["on_best_tflops"],
                "on_best_ratio": (r["on_best"].get("ratio_to_baseline") or {}).get("ratio"),
                "own_config": r["own_config"], "own_tflops": r["own_tflops"],
                "own_ratio": (r["own"].get("ratio_to_baseline") or {}).get("ratio"),
                **({"reference_config": r["reference_config"], "reference_tflops": r["reference_tflops"],
                    "vs_reference_ratio": (r["vs_reference"].get("ratio_to_reference") or {}).get("ratio")}
                   if search.reference is not None else {})} for r in rows],
              search.out / "headline.csv")
    groups: dict[str, dict[str, float | None]] = {}
    for r in rows:
        g = groups.setdefault(f"{_dims(r['shape'])}\n(best {r['best_config']})",
                              {"library": r["library_tflops"], "Triton's best": r["best_tflops"]})
        g[f"{r['variant']} on it"] = r["on_best_tflops"]
        g[f"{r['variant']}, its best"] = r["own_tflops"]
        if search.reference is not None:
            g[f"{search.reference_name} (reference), its best"] = r["reference_tflops"]
    plot_bars(list(groups.items()), search.out / "headline.png", f"{search.kernel} on {search.target}: TFLOP/s")


def load_variants(names: list[str], target: Target) -> list[Variant]:
    """The variants ``names`` refer to (:func:`irlab.bridge.named_variants.resolve`: named variants, variant
    files, ``+``-joined registered passes spelled ``pass{key=value,...}``)."""
    from ..bridge.named_variants import resolve
    return [resolve(name, target) for name in names]


def parse_option_sets(text: str | None) -> list[dict]:
    """``maxnreg=168;maxnreg=232,num_ctas=2`` -> [{}, {"maxnreg": 168}, {"maxnreg": 232, "num_ctas": 2}]: the
    extra compile options each config is also tried with (the empty set always first)."""
    sets: list[dict[str, object]] = [{}]
    for part in filter(None, (text or "").split(";")):
        opts: dict[str, object] = {}
        for kv in part.split(","):
            k, _, v = kv.partition("=")
            if not v:
                raise ValueError(f"option {kv!r}: expected NAME=VALUE")
            opts[k.strip()] = json.loads(v) if v.strip().lstrip("-").isdigit() else v.strip()
        sets.append(opts)
    return sets
