"""What irlab knows of each GPU it compiles for, in one table: a :class:`~irlab.base.targets.Target`
carries its :class:`TargetFacts` (``target.facts``), and the report, search, the passes and the
bridge ask them instead of taking the target's name apart.

A family (``hip``, ``cuda``) gives the facts every architecture of it shares: its ISA and binary
stages, how the static report reads its ISA, Triton's backend for it, whether AMDGPU scheduling
pins reach its assembly. An architecture in :data:`ARCHS` adds what is known of that chip: its
occupancy model and launch limits (:class:`AmdArch`, :class:`NvidiaArch`, whose numbers
:mod:`irlab.report.occupancy` computes with), whether it has TMA, and the named variants the
experiments compile for it. An architecture that is not in the table gets its family's facts and
no occupancy model: the report says it is not modelled rather than borrowing a neighbour's numbers.

The numbers, after the documents the occupancy module cites: gfx942 (MI300X) and gfx90a have 512
unified VGPRs per SIMD allocated in granules of 8, 8 waves per SIMD, 4 SIMDs and 64 KiB of LDS per
CU; gfx950 (MI350 series) the same but 160 KiB of LDS. sm_80 and sm_90 have 64 K registers per SM
(allocated per warp in units of 256), 64 warps and 32 blocks per SM, 1024 threads per block, and
163 KiB (sm_80) / 227 KiB (sm_90) of shared memory a block may opt in to.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TypedDict


@dataclass(frozen=True)
class AmdArch:
    """An AMD CU's occupancy model and launch limits."""
    name: str = "gfx942"
    vgprs_per_simd: int = 512
    vgpr_granule: int = 8
    max_waves_per_simd: int = 8
    simds_per_cu: int = 4
    lds_per_cu: int = 65536           # also the most one work-group may have
    max_waves_per_cu: int = 32
    max_workgroup_size: int = 1024

    @property
    def max_shared_per_block(self) -> int:
        return self.lds_per_cu


@dataclass(frozen=True)
class NvidiaArch:
    """An NVIDIA SM's occupancy model and launch limits."""
    name: str
    regs_per_sm: int = 65536
    reg_alloc_unit: int = 256
    max_regs_per_thread: int = 255
    max_warps_per_sm: int = 64
    max_blocks_per_sm: int = 32
    smem_per_sm: int = 0
    smem_per_block_max: int = 0
    smem_alloc_unit: int = 128
    smem_reserved_per_block: int = 1024
    max_threads_per_block: int = 1024

    @property
    def max_shared_per_block(self) -> int:
        return self.smem_per_block_max


# Each named variant a target gets, with the variant it is built on (None: it is built on nothing,
# Triton's own pipeline or edits of it); :mod:`irlab.bridge.named_variants` holds the recipes.
# On AMD Triton already runs its own versions of the documents' ideas (reorder_instructions,
# optimize_epilogue, block ping-pong), so the documents' baselines switch those off first and
# irlab's passes run on them.
AMD_VARIANTS = (("baseline", None), ("no-reorder", None), ("no-optimize-epilogue", None),
                ("interleave-global-loads", "no-reorder"), ("optimize-epilogue", "no-optimize-epilogue"),
                ("cancel-transposes", "baseline"), ("interleave-pinned", "no-reorder"),
                ("interleave-pinned-barriers", "no-reorder"))
# The AMD schedule passes that replaced the interleave upstream, each on Triton's pipeline with its
# own schedule passes off (no-amd-schedule); amd-schedule and amd-schedule-3.6 are all of them where
# Triton 3.9 and 3.6 run theirs
AMD_SCHEDULE_VARIANTS = (("no-amd-schedule", None), ("amd-schedule", "no-amd-schedule"),
                         ("amd-schedule-3.6", "no-amd-schedule"), ("move-up-prologue-loads", "no-amd-schedule"),
                         ("sink-layout-conversions", "no-amd-schedule"), ("hoist-layout-conversions", "no-amd-schedule"),
                         ("block-pingpong", "no-amd-schedule"), ("block-pingpong-masked", "no-amd-schedule"))
# irlab's in-thread-transpose runs on Triton's own pipeline; where Triton runs its own in-thread
# transpose (gfx942), on the pipeline without it
AMD_ITT_VARIANTS = (("in-thread-transpose", "baseline"),)
GFX942_ITT_VARIANTS = (("no-in-thread-transpose", None), ("in-thread-transpose", "no-in-thread-transpose"))
NVIDIA_VARIANTS = (("baseline", None), ("interleave-global-loads", "baseline"), ("optimize-epilogue", "baseline"),
                   ("cancel-transposes", "baseline"))
# Hopper: persistent TMA GEMMs made from a tile-per-program kernel (usable by name; not compiled
# by the experiments or the golden suite until a GPU has measured them)
HOPPER_CANDIDATES = (("persistent-tma", None), ("persistent-tma-flatten", None), ("persistent-tma-split", None),
                     ("persistent-tma-ws", None), ("persistent-tma-ws-split", None))


@dataclass(frozen=True)
class TargetFacts:
    """Everything irlab asks of a target, whatever the question's floor."""
    family: str                 # cuda | hip
    warp_size: int
    isa_stage: str              # the stage whose text is the target's assembly: amdgcn | ptx
    binary_stage: str           # the stage that holds the binary: hsaco | cubin
    isa: str                    # the ISA the static report reads: amdgcn (the stage's text) | sass
    disassembler: str | None    # what turns the binary into that ISA (None: the ISA stage is already it)
    assembler: str | None       # what assembles the ISA stage into the binary (None: LLVM itself)
    triton_backend: str         # Triton's backend for the family: amd | nvidia
    llvm_triple: str
    llvm_processor: str         # gfx942 | sm_90
    sched_pins: bool            # AMDGPU scheduling barriers (rocdl.sched.*) reach the assembly
    pc_sampling: bool           # Proton samples program counters on it (CUPTI: NVIDIA only)
    proton_backend: str         # Proton's kernel-time backend: cupti | roctracer
    occupancy: AmdArch | NvidiaArch | None = None   # None: not modelled
    tma: bool = False           # tensor memory accelerator (Hopper's tensor descriptors)
    variants: tuple = ()        # the named variants the experiments and goldens compile, each on its base
    candidates: tuple = ()      # named variants beyond those, usable by name
    block_pingpong: bool = False   # Triton's AMD backend runs block ping-pong on register-staged loops

    @property
    def modelled(self) -> bool:
        """Whether irlab knows this architecture's occupancy and launch limits."""
        return self.occupancy is not None

    @property
    def max_shared_per_block(self) -> int | None:
        """The LDS / shared memory one work-group (block) may have, or None where not known."""
        return self.occupancy.max_shared_per_block if self.occupancy is not None else None


def _amd(arch: str) -> TargetFacts:
    m = re.match(r"gfx(\d+)", arch)
    major = int(m.group(1)[:-2] or 0) if m else 0
    # RDNA (gfx10 and later) runs wave32; CDNA and older GCN run wave64
    return TargetFacts(family="hip", warp_size=32 if major >= 10 else 64, isa_stage="amdgcn", binary_stage="hsaco",
                       isa="amdgcn", disassembler=None, assembler=None, triton_backend="amd",
                       llvm_triple="amdgcn-amd-amdhsa", llvm_processor=arch, sched_pins=True, pc_sampling=False,
                       proton_backend="roctracer", variants=AMD_VARIANTS + AMD_SCHEDULE_VARIANTS + AMD_ITT_VARIANTS)


def _nvidia(arch: str) -> TargetFacts:
    return TargetFacts(family="cuda", warp_size=32, isa_stage="ptx", binary_stage="cubin", isa="sass",
                       disassembler="nvdisasm", assembler="ptxas", triton_backend="nvidia",
                       llvm_triple="nvptx64-nvidia-cuda", llvm_processor=f"sm_{arch}", sched_pins=False,
                       pc_sampling=True, proton_backend="cupti", variants=NVIDIA_VARIANTS)


FAMILIES = {"hip": _amd, "cuda": _nvidia}


class ArchFacts(TypedDict, total=False):
    """What one chip adds to its family's facts: the :class:`TargetFacts` fields it sets."""
    occupancy: AmdArch | NvidiaArch
    tma: bool
    variants: tuple
    candidates: tuple
    block_pingpong: bool


# (family, arch) -> what that chip adds to its family's facts
ARCHS: dict[tuple[str, str], ArchFacts] = {
    ("hip", "gfx90a"): {"occupancy": AmdArch("gfx90a")},
    ("hip", "gfx942"): {"occupancy": AmdArch("gfx942"), "block_pingpong": True,
                     "variants": AMD_VARIANTS + AMD_SCHEDULE_VARIANTS + GFX942_ITT_VARIANTS},
    ("hip", "gfx950"): {"occupancy": AmdArch("gfx950", lds_per_cu=163840)},
    ("cuda", "80"): {"occupancy": NvidiaArch("sm_80", smem_per_sm=167936, smem_per_block_max=166912)},
    ("cuda", "90"): {"occupancy": NvidiaArch("sm_90", smem_per_sm=233472, smem_per_block_max=232448),
                     "tma": True, "candidates": HOPPER_CANDIDATES},
}


def facts_for(family: str, arch: str) -> TargetFacts:
    """The facts of ``family:arch``; ValueError for a family irlab does not know."""
    make = FAMILIES.get(family)
    if make is None:
        raise ValueError(f"no facts for the target family {family!r} (known: {', '.join(FAMILIES)})")
    return replace(make(arch), **ARCHS.get((family, arch), {}))


def models(family: str) -> dict[str, AmdArch | NvidiaArch]:
    """The architectures of ``family`` with an occupancy model, by architecture."""
    return {arch: facts["occupancy"] for (fam, arch), facts in ARCHS.items() if fam == family and "occupancy" in facts}
