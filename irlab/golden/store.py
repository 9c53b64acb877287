"""Where golden files live: one set per Triton version side by side, and FileCheck properties
shared by every version.

    golden/
      properties/<kernel>/<target>/<variant>.<stage>.check   // CHECK lines: hold on every version
      triton-3.6.0/<kernel>/manifest.json                    how each golden was produced
      triton-3.6.0/<kernel>/<target>/<variant>.<stage>       location-free IR
      triton-3.9.0/...

IR is exact to a Triton version, so each version has its own files; the properties are what must
survive an upgrade, so there is one copy of them. A variant whose IR equals its base variant's
has no file: its manifest entry says ``"unchanged_vs": "<base>"`` and its IR is the base's.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..bridge.compat import TRITON_VERSION
from ..base.jsonio import write_json

# irlab's own goldens (its corpus's, in its repository); a project's root: irlab.golden.project
GOLDEN_ROOT = Path(__file__).resolve().parent.parent.parent / "golden"
PROPERTIES = "properties"
SET_PREFIX = "triton-"
MANIFEST = "manifest.json"
IR_SUFFIXES = (".ttgir", ".ttir")


def version_key(version: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"[.+-]", version))


def recorded_versions(root: Path) -> list[str]:
    """The Triton versions ``root`` holds a golden set for, oldest first."""
    if not root.is_dir():
        return []
    found = [p.name[len(SET_PREFIX):] for p in root.iterdir() if p.is_dir() and p.name.startswith(SET_PREFIX)]
    return sorted(found, key=version_key)


@dataclass(frozen=True)
class GoldenSet:
    """The golden files one Triton version produced."""

    root: Path
    version: str

    @property
    def dir(self) -> Path:
        return self.root / f"{SET_PREFIX}{self.version}"

    def exists(self) -> bool:
        return self.dir.is_dir()

    def path(self, case_id: str) -> Path:
        return self.dir / case_id

    def manifest_path(self, kernel: str) -> Path:
        return self.dir / kernel / MANIFEST

    def manifest(self, kernel: str) -> dict:
        p = self.manifest_path(kernel)
        return json.loads(p.read_text()) if p.exists() else {}

    def kernels(self) -> list[str]:
        return sorted(p.parent.name for p in self.dir.glob(f"*/{MANIFEST}"))

    def entries(self) -> dict[str, dict]:
        """case id -> manifest entry, for every golden of the set."""
        out = {}
        for kernel in self.kernels():
            for key, entry in self.manifest(kernel).get("files", {}).items():
                out[f"{kernel}/{key}"] = entry
        return out

    def entry(self, case_id: str) -> dict | None:
        kernel, _, key = case_id.partition("/")
        return self.manifest(kernel).get("files", {}).get(key)

    def text(self, case_id: str) -> str | None:
        """The golden IR of ``case_id``, following ``unchanged_vs`` to the base's file; None if absent."""
        for _ in range(16):
            entry = self.entry(case_id) or {}
            base = entry.get("unchanged_vs")
            if not base:
                path = self.path(case_id)
                return path.read_text() if path.exists() else None
            case_id = with_variant(case_id, base)
        raise ValueError(f"{case_id}: unchanged_vs entries form a cycle in {self.dir}")

    def file_of(self, case_id: str) -> Path:
        """The file whose IR ``case_id``'s golden is (its own, or its base's)."""
        for _ in range(16):
            base = (self.entry(case_id) or {}).get("unchanged_vs")
            if not base:
                return self.path(case_id)
            case_id = with_variant(case_id, base)
        raise ValueError(f"{case_id}: unchanged_vs entries form a cycle in {self.dir}")

    def record(self, case_id: str, entry: dict, description: str | None = None) -> None:
        kernel, _, key = case_id.partition("/")
        manifest = self.manifest(kernel) or {"kernel": kernel, "triton": self.version, "files": {}}
        if description:
            manifest["description"] = description
        manifest["files"][key] = entry
        manifest["files"] = dict(sorted(manifest["files"].items()))
        self.manifest_path(kernel).parent.mkdir(parents=True, exist_ok=True)
        write_json(self.manifest_path(kernel), manifest)


def with_variant(case_id: str, variant: str) -> str:
    """``kernel/target/variant.stage`` with another variant."""
    head, _, name = case_id.rpartition("/")
    stage = name.rpartition(".")[2]
    return f"{head}/{variant}.{stage}"


def installed_set(root: Path) -> GoldenSet:
    return GoldenSet(root, TRITON_VERSION)


def set_for_check(root: Path) -> tuple[GoldenSet, bool]:
    """The set to compare the installed Triton's IR with: its own (True), or, when it has none
    yet, the newest recorded set not newer than it, else the oldest (False: differences are the
    upgrade's drift, not regressions)."""
    own = installed_set(root)
    versions = recorded_versions(root)
    if own.exists() or not versions:
        return own, True
    older = [v for v in versions if version_key(v) <= version_key(own.version)]
    return GoldenSet(root, older[-1] if older else versions[0]), False


def describe_set(root: Path) -> str:
    """One line saying which golden set a check compares with."""
    gs, own = set_for_check(root)
    if own:
        return f"comparing with the goldens of Triton {gs.version} ({gs.dir})"
    return (f"no goldens for Triton {TRITON_VERSION} yet; comparing with Triton {gs.version}'s ({gs.dir}): "
            "IR differences are the upgrade's drift, not regressions (FileCheck properties are still enforced); "
            f"record this version's set with `irlab golden update`")


# ------------------------------------------------------------------------------------------------
# properties

def properties_path(root: Path, case_id: str) -> Path:
    return root / PROPERTIES / f"{case_id}.check"


def split_header(text: str) -> tuple[str, str]:
    """(leading // comment lines, the rest)."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].lstrip().startswith("//"):
        i += 1
    return "".join(lines[:i]), "".join(lines[i:])


def checks_of(text: str) -> str:
    """The ``// CHECK...:`` lines of ``text``."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if re.match(r"\s*//\s*CHECK(-[A-Z]+)?:", line))


def properties(root: Path, case_id: str) -> str:
    """The FileCheck lines every version's IR of ``case_id`` must satisfy ('' if none)."""
    p = properties_path(root, case_id)
    return checks_of(p.read_text()) if p.exists() else ""
