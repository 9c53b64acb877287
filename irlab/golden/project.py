"""The project goldens belong to: where its golden files live and which cases it keeps, from
``[tool.irlab]`` in its ``pyproject.toml``.

    [tool.irlab]
    golden_root = "golden"                         # default: golden/ in the project's folder
    kernels = ["kernels/my_gemm.py:SPEC"]          # kernel files (path.py[:NAME]) or kernel names
    targets = ["cuda:90", "hip:gfx942"]            # default: cuda:80, cuda:90, hip:gfx942, hip:gfx950
    variants = ["baseline", "my_variants.py:MINE", "optimize-epilogue"]   # default: baseline
    stages = ["ttir", "ttgir"]                     # default: ttgir
    passes_path = ["passes"]                       # folders of the project's own Python passes
    corpus = true                                  # also irlab's corpus cases (irlab's own repository)
    captures = ["tests/data/captures/llama2"]      # irlab capture runs (or kernel folders) and tritonparse
                                                   # traces: each kernel the program ran, recompiled from its
                                                   # captured TTIR for the target it ran on (irlab.golden.captured)
    executor = "ray"                               # where GPU commands run (default local: irlab.executor)

The project is the folder of the nearest ``pyproject.toml`` (looked for from the current folder
up by ``irlab golden``, from pytest's rootdir up by the plugin), else the current folder. Paths
in the table are relative to the pyproject.toml's folder. ``targets`` applies to ``kernels``; a
captured kernel is compiled for the target it was captured on, as each variant of ``variants``
defined there and each stage of ``stages``. Variants are what
:func:`irlab.bridge.named_variants.resolve` accepts; a named variant of the experiments that exists for only
some targets (``no-reorder`` is AMD's) is kept for those.

The golden root is the first that applies: ``--golden-root``; in pytest, the ini option
``irlab_golden_root``; ``golden_root`` here; ``golden/`` in the project's folder (in pytest, in
its rootdir).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..base.pyproject import toml_reader
from ..base.targets import DEFAULT_TARGETS

GOLDEN_STAGES = ("ttir", "ttgir")

# key -> (type, what a value is): every key [tool.irlab] may hold
KEYS = {
    "golden_root": (str, "a folder (a string)"),
    "kernels": (list, "a list of kernel files (path.py[:NAME]) or kernel names"),
    "targets": (list, "a list of targets such as \"cuda:90\", \"hip:gfx942\""),
    "variants": (list, "a list of variants: names, variant files (path.py[:NAME]) or passes"),
    "stages": (list, f"a list of stages ({', '.join(GOLDEN_STAGES)})"),
    "passes_path": (list, "a list of folders of Python passes"),
    "corpus": (bool, "true or false"),
    "captures": (list, "a list of capture folders (irlab capture) or tritonparse traces"),
    "executor": (str, "\"local\" or \"ray\": where GPU commands run (irlab.executor)"),
    "timing_methods_path": (list, "a list of folders of timing method files (irlab.timing.methods)"),
}
NON_EMPTY = ("targets", "variants", "stages")   # the defaults are used only when left out


class ConfigError(ValueError):
    """A pyproject.toml whose ``[tool.irlab]`` irlab cannot use; the message names the file."""


def _toml_loads(text: str) -> dict:
    tomllib = toml_reader()
    if tomllib is None:
        raise ConfigError("reading pyproject.toml on Python 3.10 needs the tomli package "
                          "(python -m pip install tomli)")
    return tomllib.loads(text)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in ``start`` or a folder above it."""
    start = Path(start).absolute()
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_settings(pyproject: Path) -> dict:
    """The ``[tool.irlab]`` table of ``pyproject`` ({} if it has none), its keys and types checked."""
    try:
        data = _toml_loads(pyproject.read_text())
    except OSError as e:
        raise ConfigError(f"{pyproject}: {e.strerror or e}") from None
    except ValueError as e:            # tomllib.TOMLDecodeError
        raise ConfigError(f"{pyproject}: not valid TOML: {e}") from None
    table = data.get("tool", {}).get("irlab", {}) if isinstance(data.get("tool"), dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.irlab] must be a table")
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"{pyproject}: [tool.irlab] has no key {key!r}; its keys: {', '.join(KEYS)}")
        kind, what = KEYS[key]
        if not isinstance(value, kind) or (isinstance(value, list) and not all(isinstance(v, str) and v for v in value)):
            raise ConfigError(f"{pyproject}: [tool.irlab] {key} must be {what}, not {value!r}")
        if key in NON_EMPTY and not value:
            raise ConfigError(f"{pyproject}: [tool.irlab] {key} is empty: leave it out for the default, or list "
                              f"at least one")
    return table


@dataclass(frozen=True)
class Root:
    """A golden root and what chose it (a root from the command line is repeated in the commands
    a failure suggests)."""

    path: Path
    source: str        # option | ini | pyproject | default


@dataclass(frozen=True)
class Project:
    dir: Path                                   # the pyproject.toml's folder, else the current one
    pyproject: Path | None = None
    settings: Mapping = field(default_factory=dict)

    @classmethod
    def find(cls, start: Path) -> "Project":
        """The project ``start`` is in: the nearest pyproject.toml's, else ``start`` alone."""
        pyproject = find_pyproject(start)
        if pyproject is None:
            return cls(Path(start).absolute())
        return cls(pyproject.parent, pyproject, read_settings(pyproject))

    def path(self, rel: str) -> Path:
        """A path of the table, relative to the pyproject.toml's folder."""
        return self.dir / Path(rel).expanduser()

    def golden_root(self, option: str | None = None, ini: Path | None = None,
                    default_dir: Path | None = None) -> Root:
        """Where the goldens live: ``option`` (--golden-root, relative to the current folder),
        ``ini`` (pytest's irlab_golden_root, already resolved), ``golden_root`` of the table,
        else ``golden/`` in ``default_dir`` (the project's folder unless given)."""
        if option:
            return Root(Path(option).expanduser().absolute(), "option")
        if ini is not None:
            return Root(ini, "ini")
        if "golden_root" in self.settings:
            return Root(self.path(self.settings["golden_root"]), "pyproject")
        return Root((default_dir or self.dir) / "golden", "default")

    @property
    def has_cases(self) -> bool:
        return bool(self.settings.get("kernels") or self.settings.get("corpus") or self.settings.get("captures"))

    def add_passes_path(self) -> None:
        """Make the project's own passes (``passes_path``) known by name."""
        from ..passkit.registry import add_pass_dirs
        dirs = [self.path(p) for p in self.settings.get("passes_path", [])]
        for d in dirs:
            if not d.is_dir():
                raise ConfigError(f"{self.pyproject}: [tool.irlab] passes_path names {d}, which is not a folder")
        add_pass_dirs(dirs)

    def cases(self, notes: list[str] | None = None) -> list:
        """The project's golden cases: every kernel x target x variant x stage of the table (and
        irlab's corpus cases with ``corpus = true``). Combinations left out (a target a kernel
        does not support, a named variant of other targets) are appended to ``notes``."""
        from . import suite
        notes = [] if notes is None else notes
        self.add_passes_path()
        out = suite.all_cases() if self.settings.get("corpus") else []
        ids = {c.id for c in out}
        stages = self._stages()
        refs = self.settings.get("variants", ["baseline"])
        out += self._captured_cases(stages, refs, ids, notes)
        if not self.settings.get("kernels"):
            return out
        targets = self._targets()
        variants = {(ref, t): self._variant(ref, t, notes) for ref in refs for t in targets}
        for ref in refs:
            if all(variants[ref, t] is None for t in targets):
                raise ConfigError(f"{self.pyproject}: [tool.irlab] variants: {ref!r} is a variant of none of "
                                  f"the targets ({', '.join(targets)}); `irlab variants` lists each target's")
        for spec, kernel_ref in self._kernels():
            for target in targets:
                if not spec.supports(target):
                    notes.append(f"{spec.name} is not compiled for {target}: {spec.unsupported[target]}")
                    continue
                names: dict[str, str] = {}
                for ref in refs:
                    v = variants[ref, target]
                    if v is None:
                        continue
                    if names.setdefault(v.name, ref) != ref:
                        raise ConfigError(f"{self.pyproject}: [tool.irlab] variants {names[v.name]!r} and {ref!r} "
                                          f"are both named {v.name!r}")
                    for stage in stages:
                        case = suite.Case(spec.name, target, v.name, stage, v.base_name, kernel_ref, v)
                        if case.id in ids:
                            raise ConfigError(f"{self.pyproject}: [tool.irlab] names the golden case {case.id} "
                                              "twice (two kernels of one name?)")
                        ids.add(case.id)
                        out.append(case)
        return out

    def _captured_cases(self, stages: list[str], refs: list[str], ids: set, notes: list[str]) -> list:
        """A case per kernel the captures' programs ran, variant (defined for its target) and stage."""
        from . import suite
        from .captured import CAPTURED, capture_name
        from ..program.launches import LaunchError, captured_kernels
        out, variants = [], {}
        names: dict[str, str] = {}   # a capture's name -> the entry that gave it
        for entry in self.settings.get("captures", []):
            path = self.path(entry)
            try:
                kernels = captured_kernels(path)
            except LaunchError as e:
                raise ConfigError(f"{self.pyproject}: [tool.irlab] captures: {e}") from None
            name = capture_name(path)
            if names.setdefault(name, entry) != entry:
                raise ConfigError(f"{self.pyproject}: [tool.irlab] captures {names[name]!r} and {entry!r} are both "
                                  f"named {name!r} (a case's name starts with it)")
            left = [k for k in kernels if not k.program]
            if left:
                notes.append(f"{len(left)} kernel(s) of capture {entry} ran only to be timed by an autotuner or a "
                             f"benchmark, not as the program's work: no goldens ({', '.join(k.name for k in left[:3])}"
                             + (", ..." if len(left) > 3 else "") + ")")
            for k in kernels:
                if not k.program:
                    continue
                target = k.target.name
                for ref in refs:
                    if (ref, target) not in variants:
                        variants[ref, target] = self._variant(ref, target, notes)
                    v = variants[ref, target]
                    if v is None:
                        continue
                    for stage in stages:
                        case = suite.Case(f"{name}~{k.name}", target, v.name, stage, v.base_name, CAPTURED + k.ref, v)
                        if case.id in ids:
                            raise ConfigError(f"{self.pyproject}: [tool.irlab] captures name the golden case "
                                              f"{case.id} twice")
                        ids.add(case.id)
                        out.append(case)
        return out

    # --- the table's entries, checked -----------------------------------------------------------
    def _targets(self) -> list[str]:
        """The targets, each one the installed Triton can compile for."""
        from ..bridge.compat import check_target
        from ..base.targets import Target, TargetError
        out = []
        for t in self.settings.get("targets", DEFAULT_TARGETS):
            try:
                target = Target.parse(t)
                check_target(target)
            except TargetError as e:
                raise ConfigError(f"{self.pyproject}: [tool.irlab] targets: {e}") from None
            out.append(target.name)
        return out

    def _stages(self) -> list[str]:
        stages = self.settings.get("stages", ["ttgir"])
        bad = [s for s in stages if s not in GOLDEN_STAGES]
        if bad:
            raise ConfigError(f"{self.pyproject}: [tool.irlab] stages: {bad[0]!r} is not a golden stage "
                              f"({', '.join(GOLDEN_STAGES)})")
        return list(stages)

    def _kernels(self) -> list[tuple]:
        """(spec, how a worker loads it again) for each kernel of the table."""
        from ..kernels import KernelError, get
        from ..base.pyfile import split_ref
        out = []
        seen: dict[str, str] = {}    # a kernel's name -> the reference that gave it
        for ref in self.settings.get("kernels", []):
            file_ref = split_ref(ref)
            if file_ref:
                path, name = file_ref
                ref = str(self.path(path)) + (f":{name}" if name else "")
            try:
                spec = get(ref)
            except KernelError as e:
                raise ConfigError(f"{self.pyproject}: [tool.irlab] kernels: {e}") from None
            if seen.setdefault(spec.name, ref) != ref:
                raise ConfigError(f"{self.pyproject}: [tool.irlab] kernels {seen[spec.name]!r} and {ref!r} are both "
                                  f"named {spec.name!r}")
            out.append((spec, ref))
        return out

    def _variant(self, ref: str, target: str, notes: list[str]):
        """The variant ``ref`` names for ``target``; None (with a note) for a named variant of
        other targets only."""
        from ..passkit.pass_api import PassError
        from ..base.pyfile import split_ref
        from ..passkit.variant import VariantError
        from ..bridge.named_variants import is_named, resolve
        file_ref = split_ref(ref)
        resolved = ref
        if file_ref:
            path, name = file_ref
            resolved = str(self.path(path)) + (f":{name}" if name else "")
        try:
            return resolve(resolved, target)
        except (VariantError, PassError) as e:
            if not file_ref and is_named(ref):
                notes.append(f"variant {ref} is not defined for {target}")
                return None
            raise ConfigError(f"{self.pyproject}: [tool.irlab] variants: {e}") from None


def load(start: Path | None = None) -> Project:
    """The project the current folder (or ``start``) is in."""
    return Project.find(Path.cwd() if start is None else start)
