"""``irlab search-model``: which variant, on which of a program's hot kernels, is worth shipping --
decided kernel by kernel on the GPU and confirmed on the whole program.

From a capture with a profile (``irlab capture --profile``):

1. **Hot kernels** (:func:`irlab.program.hot.hot_kernels`): those covering 90% of the captured
   Triton kernels' GPU time, at most 20 (or the ``top`` hottest), each with its hottest program
   launch.
2. **Candidates**: every variant that could act on it -- each rewriting pass with the option sets
   that make it act (:func:`irlab.timing.differential.variant_refs`) and the target's named
   variants, one of each set of identical edits; a variant that declares its own launch grid is
   not tried (a program launches its kernels with its own grids). With ``configs="neighbours"``
   also the neighbouring configs of the captured one: ``num_warps`` doubled and halved,
   ``num_stages`` one more and one less (the tile sizes are compiled into the captured TTIR), each
   with the baseline and with every variant that acted on the captured config.
3. **Static**: every candidate compiled for the target (:meth:`irlab.timing.search.Search.static`):
   a variant whose passes changed nothing is "not applicable" with their reasons; one whose binary
   is the baseline's (or another candidate's) is "no change"; what spills, needs more shared
   memory than a block may have, fits no block, fails to compile or is rejected by Triton's
   verifier is pruned with the reason.
4. **Verified** on the GPU (:mod:`irlab.timing.differential`, :mod:`irlab.timing.launch_verify`):
   each survivor's outputs against the captured baseline's on the captured launch's inputs (and
   on a remainder where the kernel's arguments allow one); only ``identical`` or ``close`` go on.
5. **Timed** against the captured baseline in one cell per kernel (:func:`irlab.timing.harness.run_sweep`:
   interleaved rounds, every entry's output checked first, the baseline timed again as the A/A
   control).
6. **Chosen**: per kernel, the fastest candidate whose improvement is *called* with its whole 95%
   interval beyond the cell's A/A floor (``ci95[1] < 1 - floor``); a gain within the floor, or an
   interval that reaches into it, never replaces the baseline. The choices make one **mixed
   variant** (:mod:`irlab.passkit.mixed`), written to ``mixed-variant.json``.
7. **Confirmed**: the program run as the baseline and as the mixed variant in a model-level A/B
   (:class:`irlab.program.model_ab.ModelAB`): the end-to-end ratio with its interval and A/A, and
   every launch's outputs compared with the baseline's.

Every phase appends its results as they finish and goes on from them with ``resume``; the
decision is computed again from those files each time, so an interrupted search loses nothing it
finished. ``README.md`` and ``search_model.json`` are rewritten after every phase.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..base.jsonio import write_json, write_text
from ..base.stats import MIN_EFFECT, MIN_ROUNDS
from ..base.targets import Target
from ..kernels.spec import TileConfig
from ..passkit.mixed import KernelChoice, KernelIdentity, MixedVariant
from ..passkit.spelling import respell
from ..passkit.variant import Variant, VariantError
from ..program.derived import bound_arguments, write_derived
from ..program.hot import HotSet, hot_kernels
from ..program.launches import load
from .differential import Group, rewriting_passes, variant_refs
from .plan import DEFAULT_RUNNER, Cell, Entry, Plan
from .methods import DEFAULT as DEFAULT_METHOD

BASELINE = "baseline"
MIXED_FILE = "mixed-variant.json"
RESULT_FILE = "search_model.json"
HEADER_FILE = "header.json"
EXPERIMENT = "search-model"
_SAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


class SearchModelError(ValueError):
    """A search that cannot start or go on (the message says why and what to do)."""


@dataclass(frozen=True)
class Candidate:
    label: str                 # how tables name it: the variant's spelling, @wNsS at another config
    spelling: str              # name{k=v}: what the mixed variant file holds
    ref: str                   # what variant resolution reads (the spelling)
    config: str                # wNsS
    options: tuple = ()        # compile options that differ from the captured launch's


def config_label(options: dict) -> str:
    return f"w{options.get('num_warps')}s{options.get('num_stages')}"


def neighbours(options: dict, target: Target) -> list[dict]:
    """The configs next to ``options``: num_warps doubled and halved (a power of 2 a block can
    hold), num_stages one more and one less (at least 1)."""
    nw, ns = int(options.get("num_warps") or 4), int(options.get("num_stages") or 1)
    most = 1024 // (target.warp_size or 32)
    out = [{"num_warps": w, "num_stages": ns} for w in (nw * 2, nw // 2) if 1 <= w <= most and w != nw]
    out += [{"num_warps": nw, "num_stages": s} for s in (ns + 1, ns - 1) if s >= 1 and s != ns]
    return out


def candidate_refs(target: Target, only: list[str] | None) -> tuple[list[tuple[str, Variant]], list[str]]:
    """(spelling, variant) of every variant to try -- ``only`` (variant references), or every
    rewriting pass with the option sets that make it act and the target's named variants -- one of
    each set of identical edits; and what was left out, with why."""
    from ..bridge.named_variants import named_for, resolve
    from ..bridge.variant_identity import variant_key
    refs = list(only) if only else [ref for _, ref in variant_refs(rewriting_passes())] + \
        [v.name for v in named_for(target.name) if not v.is_baseline]
    out: list[tuple[str, Variant]] = []
    seen: dict[str, str] = {}       # variant key -> the spelling tried for those edits
    notes: list[str] = []
    for ref in refs:
        variant = resolve(ref, target)
        spelling = respell(ref)
        if variant.launch is not None:
            notes.append(f"{spelling}: not tried: it declares its own launch grid ({variant.launch.describe()}), "
                         "which a program's own launches do not use")
            continue
        key = variant_key(variant)
        if key in seen:
            if only:
                notes.append(f"{spelling}: the same edits as {seen[key]}: tried once, as {seen[key]}")
            continue
        seen[key] = spelling
        out.append((spelling, variant))
    return out, notes


@dataclass
class ModelSearch:
    """``irlab search-model``: see the module docstring."""

    run_dir: Path
    target: Target
    out: Path
    program: list[str] | None = None        # the program's command, for the confirming model A/B
    top: int | None = None
    coverage: float = 0.9
    limit: int = 20
    region: str | None = None
    whole_program: bool = False
    configs: str = "captured"               # captured | neighbours
    variants: list[str] | None = None       # only these (variant references); default: every applicable one
    rounds: int = MIN_ROUNDS                # timing rounds per kernel cell (from MIN_ROUNDS on: an A/A floor)
    method: str = DEFAULT_METHOD
    gpus: list[str] | None = None
    jobs: int = 4                           # verify groups side by side
    workers: int | None = None              # static compiles side by side
    runner: str | None = None               # the timing runner (module:Class); default the GPU's
    model_rounds: int = 10
    model_runner: Callable | None = None    # runs one arm of the model A/B (default: irlab run in a process)
    resume: bool = False
    log: Callable[[str], None] = field(default=lambda msg: None)

    def __post_init__(self):
        self.run_dir, self.out = Path(self.run_dir), Path(self.out)
        if self.configs not in ("captured", "neighbours"):
            raise SearchModelError(f"configs must be 'captured' or 'neighbours', not {self.configs!r}")
        if self.rounds < 1 or self.model_rounds < 1:
            raise SearchModelError("rounds must be at least 1")

    # --- the whole search -----------------------------------------------------------------------
    def run(self) -> dict:
        self._start()
        state: dict[str, Any] = {"phase": "hot kernels"}
        try:
            hot = self._hot()
            state.update(self._candidates(hot))
            self._finish(hot, state, "static")
            static = self._static(hot, state)
            self._finish(hot, state, "verify")
            verified = self._verify(hot, state, static)
            self._finish(hot, state, "timing")
            timed = self._time(hot, state, verified)
            choices = self._choose(hot, state, timed)
            self._finish(hot, state, "model A/B")
            model = self._confirm(hot, state, choices)
            state["model_ab"] = model
            return self._finish(hot, state, "done")
        except KeyboardInterrupt:
            if "hot" in state:
                self._finish(state["hot"], state, state.get("phase", "?"), interrupted=True)
            raise

    def _start(self) -> None:
        header = {"run": str(self.run_dir.resolve()), "target": self.target.name, "top": self.top,
                  "coverage": self.coverage, "limit": self.limit, "region": self.region,
                  "whole_program": self.whole_program, "configs": self.configs, "variants": self.variants,
                  "rounds": self.rounds, "method": self.method}   # the model A/B checks its own on resume
        path = self.out / HEADER_FILE
        if self.resume:
            if not path.is_file():
                raise SearchModelError(f"nothing to resume in {self.out}: no {HEADER_FILE} of an earlier search-model")
            before = json.loads(path.read_text())
            differ = [k for k, v in header.items() if before.get(k) != v]
            if differ:
                raise SearchModelError(f"the search in {self.out} ran with other arguments ({', '.join(differ)}): "
                                       "resume it with the same ones, or give another --out")
            self.log(f"resuming the search in {self.out}")
            return
        if self.out.exists() and any(self.out.iterdir()):
            raise SearchModelError(f"{self.out} holds an earlier search: --resume to go on with it, or another --out")
        self.out.mkdir(parents=True, exist_ok=True)
        write_json(path, header)

    # --- 1: hot kernels -------------------------------------------------------------------------
    def _hot(self) -> HotSet:
        from ..program.ranking import RankingError
        try:
            hot = hot_kernels(self.run_dir.resolve(), self.top, self.coverage, self.limit, self.region,
                              self.whole_program, need_profile=True)
        except RankingError as e:
            raise SearchModelError(str(e)) from None
        if not hot.kernels:
            raise SearchModelError(f"{self.run_dir}: no captured Triton kernel ran as the program's own work")
        write_json(self.out / "hot.json", hot.to_json())
        self.log(f"{len(hot.kernels)} hot kernel(s): {hot.rule}"
                 + (f"; they cover {hot.covered:.1%} of it" if hot.covered is not None else ""))
        return hot

    # --- 2: candidates --------------------------------------------------------------------------
    def _candidates(self, hot: HotSet) -> dict:
        try:
            refs, notes = candidate_refs(self.target, self.variants)
        except (VariantError, KeyError) as e:
            raise SearchModelError(str(e)) from None
        kernels = []
        for i, k in enumerate(hot.kernels):
            launch = load(k.ref)
            captured = {"num_warps": launch.options.get("num_warps"), "num_stages": launch.options.get("num_stages")}
            # label -> (the launch it replays, the options changed from the captured ones)
            configs: dict[str, tuple[str, tuple[tuple[str, object], ...]]] = {config_label(captured): (k.ref, ())}
            if self.configs == "neighbours":
                for opts in neighbours(captured, self.target):
                    label = config_label(opts)
                    changed = tuple(sorted((o, v) for o, v in opts.items() if captured.get(o) != v))
                    ref = write_derived(launch, self.out / "launches" / f"{i:02d}-{label}", options=opts)
                    configs[label] = (ref + "#0", changed)
            full = {config_label(captured): (captured["num_warps"], captured["num_stages"])}
            full.update({config_label(o): (o["num_warps"], o["num_stages"]) for o in
                         (neighbours(captured, self.target) if self.configs == "neighbours" else [])})
            kernels.append({"kernel": k.kernel, "ref": k.ref, "captured": config_label(captured),
                            "configs": {c: {"ref": r, "options": dict(o)} for c, (r, o) in configs.items()},
                            "configs_full": full})
        self.log(f"{len(refs)} variant(s) to try on each" + (" at the captured config and its neighbours"
                                                            if self.configs == "neighbours" else ""))
        return {"hot": hot, "refs": refs, "candidate_notes": notes, "kernels": kernels}

    # --- 3: static ------------------------------------------------------------------------------
    def _static(self, hot: HotSet, state: dict) -> dict:
        """Per kernel: label -> (Candidate, static record). The captured config first (every
        variant), then its neighbours (the baseline and the variants that acted on it)."""
        from .search import Search
        state["phase"] = "static"
        out = {}
        for i, k in enumerate(state["kernels"]):
            self.log(f"static [{i + 1}/{len(state['kernels'])}] {k['kernel']}")
            records = {}
            acted = None        # the variants that acted on the captured config (tried at its neighbours)
            for config, info in k["configs"].items():
                names = [BASELINE] + [s for s, _ in state["refs"] if acted is None or s in acted]
                variants = [Variant.baseline()] + [v for s, v in state["refs"] if acted is None or s in acted]
                renamed = [Variant(_name(n), v.edits, v.description) for n, v in zip(names, variants)]
                tile = TileConfig(config, {}, *k["configs_full"][config])
                def static_log(m: str, c: str = config) -> None:
                    self.log(f"static {c}: {m.strip().removeprefix('static: ')}")
                search = Search(info["ref"], self.target, [{}], [tile], renamed, self.out / "static" / f"{i:02d}-{config}",
                                name="static", workers=self.workers, log=static_log)
                got = search.static(resume=self.resume)
                for name, rec in zip(names, got):
                    label = name if config == k["captured"] else f"{name}@{config}"
                    records[label] = (Candidate(label, name, name, config,
                                                tuple(sorted(info["options"].items()))), rec)
                if acted is None:
                    acted = {n for n, rec in zip(names, got) if rec["status"] == "ok" and n != BASELINE}
            _same_binary_across_configs(records, k["captured"])
            out[k["kernel"]] = records
        state["static"] = {kernel: {label: _static_row(c, r) for label, (c, r) in recs.items()}
                           for kernel, recs in out.items()}
        return out

    # --- 4: verify ------------------------------------------------------------------------------
    def _verify(self, hot: HotSet, state: dict, static: dict) -> dict:
        """Per kernel: the labels whose outputs matched the captured baseline's."""
        from . import differential as d
        state["phase"] = "verify"
        groups, notes, kernel_of = [], [], {}
        for i, k in enumerate(state["kernels"]):
            ok = [c for c, r in static[k["kernel"]].values() if r["status"] == "ok" and c.label != BASELINE]
            if not ok:
                continue
            launch = load(k["ref"])
            groups.append(Group(k["ref"], "captured", {}, tuple([(BASELINE, BASELINE)] + [
                (c.label, c.ref, _other(k, c)) if c.options else (c.label, c.ref) for c in ok])))
            values, why = bound_arguments(launch)
            if values:    # the same candidates on a remainder, each at its own config
                where = self.out / "launches"
                rem = [(BASELINE, BASELINE)] + [
                    (c.label, c.ref, write_derived(launch, where / f"{i:02d}-remainders-{c.config}", values=values,
                                                   options=dict(c.options)) + "#0") if c.options else (c.label, c.ref)
                    for c in ok]
                groups.append(Group(write_derived(launch, where / f"{i:02d}-remainders", values=values) + "#0",
                                    "captured", dict(values), tuple(rem)))
            else:
                notes.append(f"{k['kernel']}: verified on its captured arguments only (" + ("; ".join(why) or
                             "it takes no integer argument") + ")")
            for g in groups[-2 if values else -1:]:
                kernel_of[g.kernel] = k["kernel"]
        state["verify_notes"] = notes
        rows = []
        if groups:
            self.log(f"verify: {len(groups)} group(s), {sum(len(g.variants) - 1 for g in groups)} candidate run(s) on "
                     "the GPU against the captured baseline")
            try:
                rows = d.run(groups, self.out / "verify", self.jobs, True, log=lambda m: self.log(f"verify: {m}"))
            except d.Interrupted:
                raise KeyboardInterrupt from None
        verdicts: dict[str, dict[str, list]] = {}
        for r in rows:
            kernel = kernel_of.get(r.get("kernel", ""))   # a row names its group's kernel (a launch ref)
            if kernel is None or r.get("variant") == BASELINE:
                continue
            verdicts.setdefault(kernel, {}).setdefault(r["variant"], []).append(r)
        state["verify"] = {kernel: {label: _verify_row(rs) for label, rs in per.items()}
                           for kernel, per in verdicts.items()}
        return {kernel: [label for label, v in per.items() if v["passed"]] for kernel, per in state["verify"].items()}

    # --- 5: timing ------------------------------------------------------------------------------
    def _time(self, hot: HotSet, state: dict, verified: dict) -> dict:
        from .harness import collect, run_sweep
        state["phase"] = "timing"
        cells = []
        for k in state["kernels"]:
            labels = verified.get(k["kernel"]) or []
            if not labels:
                continue
            static = state["static"][k["kernel"]]
            entries = [Entry(BASELINE, variant_spec=Variant.baseline().to_json())]
            for label in labels:
                row = static[label]
                variant = _resolve(row["ref"], self.target)
                other = k["configs"][row["config"]]["ref"] if row["options"] else None
                entries.append(Entry(label, variant_spec=Variant(_name(label), variant.edits).to_json(), kernel=other))
            cells.append(Cell(EXPERIMENT, k["ref"], {}, k["captured"], entries))
        state["cells"] = {c.key: c.kernel for c in cells}
        if not cells:
            state["timing"] = {}
            return {}
        self.log(f"timing: {len(cells)} cell(s) (one per kernel with a verified candidate), {self.rounds} rounds each"
                 + (", the baseline timed again as the A/A control" if self.rounds >= MIN_ROUNDS else
                    f" (fewer than {MIN_ROUNDS}: ranking only, nothing is called)"))
        plan = Plan(cells, self.method, self.rounds)
        path = run_sweep(plan, self.out / "timing.jsonl", resume=self.resume,
                         gpus=self.gpus, log=lambda m: self.log(f"timing: {m}"), runner=self.runner or DEFAULT_RUNNER)
        got = collect(path)
        by_kernel = {}
        for c in cells:
            res = got["cells"].get(c.key)
            if res is not None:
                by_kernel[next(k["kernel"] for k in state["kernels"] if k["ref"] == c.kernel)] = res
        state["timing"] = {kernel: _timing_rows(res) for kernel, res in by_kernel.items()}
        state["timing_env"] = (got.get("env") or [{}])[0]
        return by_kernel

    # --- 6: the choice --------------------------------------------------------------------------
    def _choose(self, hot: HotSet, state: dict, timed: dict) -> MixedVariant | None:
        state["phase"] = "choice"
        choices, notes = {}, {}
        for k in state["kernels"]:
            rows = state["timing"].get(k["kernel"], {})
            winners = [(r["ratio"], label) for label, r in rows.items() if r.get("wins")]
            k["choice"] = None
            if not winners:
                continue
            _, label = min(winners)
            row = state["static"][k["kernel"]][label]
            k["choice"] = label
            if k["kernel"] in choices:   # two hot folders of one kernel name: the hotter one's choice stands
                continue
            variant = _resolve(row["ref"], self.target)
            choices[k["kernel"]] = KernelChoice(row["spelling"], variant, tuple(sorted(row["options"].items())),
                                                _identity(k["ref"], variant))
            r = rows[label]
            notes[k["kernel"]] = (f"{r['ratio']:.4f} [{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}] of the captured "
                                  f"baseline's time, A/A floor {r['aa_floor']:.2%}, {r['rounds']} rounds")
        path = self.out / MIXED_FILE
        if not choices:
            path.unlink(missing_ok=True)
            state["mixed"] = None
            return None
        mixed = MixedVariant(f"search-model-{_SAFE.sub('-', self.run_dir.resolve().name)}",
                             tuple(sorted(choices.items())), f"irlab search-model of {self.run_dir}: each kernel's "
                             "fastest candidate whose whole 95% interval lies beyond its cell's A/A floor",
                             str(path), notes)
        write_json(path, mixed.to_json())
        state["mixed"] = str(path)
        self.log(f"choice: {len(choices)} kernel(s) get a variant: " + ", ".join(
            f"{k} -> {c.describe()}" for k, c in mixed.kernels) + f"; written to {path}")
        return mixed

    # --- 7: the model A/B -----------------------------------------------------------------------
    def _confirm(self, hot: HotSet, state: dict, mixed: MixedVariant | None) -> dict:
        from ..program.model_ab import ModelAB, SubprocessRunner
        state["phase"] = "model A/B"
        if mixed is None:
            return {"skipped": "no kernel has a called improvement: the captured choices stand, nothing to confirm"}
        if not self.program:
            return {"skipped": "no program given (irlab search-model RUN -- script.py args): the mixed variant was "
                               "not confirmed on the whole program"}
        self.log(f"model A/B: the program as the baseline and as {MIXED_FILE}, {self.model_rounds} rounds")
        ab = ModelAB(list(self.program), str(self.out / MIXED_FILE), self.out / "model-ab", rounds=self.model_rounds,
                     runner=self.model_runner or SubprocessRunner(list(self.program), self.target.name),
                     resume=self.resume and (self.out / "model-ab").is_dir(),
                     progress=lambda m: self.log(f"model A/B: {m}"))
        from ..program.model_ab import ResumeError
        try:
            result = ab.run()
        except ResumeError as e:
            raise SearchModelError(f"the model A/B in {self.out / 'model-ab'}: {e}") from None
        return {k: result.get(k) for k in ("variant", "rounds", "rounds_done", "measure", "end_to_end", "aa",
                                           "gpu_time", "correctness", "error", "kernels", "partial", "mixed")
                if k in result} | {"folder": str(self.out / "model-ab")}

    # --- the report -----------------------------------------------------------------------------
    def _finish(self, hot: HotSet, state: dict, phase: str, interrupted: bool = False) -> dict:
        from .model_search_report import render, to_json
        data = to_json(self, hot, state, phase, interrupted)
        write_json(self.out / RESULT_FILE, data)
        write_text(self.out / "README.md", render(data))
        return data


# ------------------------------------------------------------------------------------------------
# helpers

def _name(label: str) -> str:
    """A variant name from a label (no spaces or slashes)."""
    return label.replace(" ", "_").replace("/", "_")


def _resolve(ref: str, target: Target) -> Variant:
    from ..bridge.named_variants import resolve
    return Variant.baseline() if ref == BASELINE else resolve(ref, target)


def _identity(ref: str, variant: Variant) -> KernelIdentity | None:
    """The identity of the captured kernel a choice was made for (its TTIR and captured config), by
    which the program's run recognises it whatever Inductor names it there; None where the variant
    changes the TTIR stage before a compile can be recognised, or the capture has no config (it is
    then taken by name)."""
    from ..bridge.mixed import recognisable_after_ttir
    if not recognisable_after_ttir(variant):
        return None
    launch = load(ref)
    num_warps, num_stages = launch.options.get("num_warps"), launch.options.get("num_stages")
    if num_warps is None or num_stages is None:   # a capture that did not record its config
        return None
    return KernelIdentity.of(launch.ttir, launch.name, num_warps, num_stages)


def _other(kernel: dict, c: Candidate) -> str | None:
    """The launch a candidate at another config runs on (None: the captured launch)."""
    return kernel["configs"][c.config]["ref"] if c.options else None


def _same_binary_across_configs(records: dict, captured: str) -> None:
    """A candidate at a neighbouring config whose binary is one already seen (the captured
    baseline's, or another candidate's) is no change there either."""
    seen: dict[str, str] = {}   # binary sha256 -> the label first seen with it
    for label, (_, rec) in sorted(records.items(), key=lambda kv: (kv[1][0].config != captured, kv[0])):
        sha = rec.get("binary_sha256")
        if rec["status"] != "ok" or not sha:
            continue
        if sha in seen:
            rec.update(status="no-change", same_binary_as=seen[sha],
                       reason=f"same binary as {seen[sha]}: no change")
        else:
            seen[sha] = label


def _static_row(c: Candidate, rec: dict) -> dict:
    """What the static phase says of a candidate: its state, and why."""
    row = {"label": c.label, "spelling": c.spelling, "ref": c.ref, "config": c.config, "options": dict(c.options),
           "status": rec["status"], "binary_sha256": rec.get("binary_sha256"), "registers": rec.get("registers"),
           "shared": rec.get("shared")}
    passes = rec.get("passes") or []
    if c.label == BASELINE:
        row["state"] = "baseline" if rec["status"] in ("ok", "no-change") else f"baseline {rec['status']}"
        row["why"] = rec.get("reason", "")
    elif rec["status"] == "no-change" and passes and not any(p["changed"] for p in passes):
        notes = [n for p in passes for n in dict.fromkeys(p.get("notes") or [])]
        row["state"] = "not applicable"
        row["why"] = "; ".join(f"{p['pass']}: " + ("; ".join(list(dict.fromkeys(p.get('notes') or []))[:3])
                                                    or "changed nothing") for p in passes) if notes else \
            "its passes changed nothing"
    elif rec["status"] == "no-change":
        row["state"] = "no change"
        row["why"] = rec.get("reason", "")
    elif rec["status"] == "ok":
        row["state"] = "compiled"
        row["why"] = ""
    else:
        row["state"] = rec["status"]
        row["why"] = rec.get("reason", "")
    return row


def _verify_row(rows: list[dict]) -> dict:
    verdicts = [r.get("verdict") for r in rows]
    bad = [r for r in rows if r.get("verdict") not in ("identical", "close")]
    return {"verdicts": verdicts, "passed": not bad and bool(rows),
            "why": "; ".join(f"{r.get('verdict')}: {r.get('reason') or ''}".rstrip(": ") for r in bad)[:600]}


def _timing_rows(cell: dict) -> dict:
    """Per timed entry: its ratio to the captured baseline, interval, A/A floor, and whether it
    wins (a called improvement whose whole interval lies beyond the A/A floor)."""
    from .worker import CONTROL
    floor = cell.get("aa_floor")
    out = {}
    for label, rec in cell.get("entries", {}).items():
        if label in (BASELINE, CONTROL):
            if label == CONTROL and rec.get("status") == "ok":
                out[label] = {"status": "ok", **_ratio(rec)}
            continue
        if rec.get("status") != "ok":
            out[label] = {"status": rec.get("status"), "why": (rec.get("reason") or "")[:400], "wins": False}
            continue
        r = _ratio(rec)
        beyond = floor is not None and r["ci95"] is not None and r["ci95"][1] < 1 - max(floor, MIN_EFFECT)
        out[label] = {"status": "ok", **r, "aa_floor": floor, "wins": bool(r["called"] and r["ratio"] < 1 and beyond),
                      "median_ms": rec.get("median_ms")}
    return out


def _ratio(rec: dict) -> dict:
    j = rec.get("ratio_to_baseline") or {}
    return {"ratio": j.get("ratio"), "ci95": j.get("ci95"), "called": bool(j.get("called")),
            "verdict": j.get("verdict"), "rounds": j.get("rounds"), "median_ms": rec.get("median_ms")}
