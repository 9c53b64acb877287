"""Occupancy, computed the way the source documents teach it, for AMD CDNA3/CDNA4 and NVIDIA sm_80/sm_90.

AMD (MI300X, gfx942; the same rules on MI350-series, gfx950, except its LDS), after the documents:

* VGPRs are allocated in granules of 8 out of 512 per SIMD (EU): a kernel reporting 170 VGPRs
  is allocated 176, and 3 x 176 > 512, so only 2 waves per EU fit. With ``.vgpr_count`` the
  unified count (arch + accumulation VGPRs), this reproduces AMD's table (<=64: 8 waves, <=72:
  7, <=80: 6, <=96: 5, <=128: 4, <=168: 3, <=256: 2, else 1).
* VGPR-limited workgroups per CU = floor(waves_per_EU x 4 / waves_per_workgroup).
* LDS-limited workgroups per CU = floor(LDS per CU / LDS bytes per workgroup): 64 KiB on gfx942
  and gfx90a, 160 KiB on gfx950. gfx950 keeps gfx942's register file (512 unified VGPRs per
  SIMD, arch VGPRs and AGPRs together, granule 8) and its 8 waves per SIMD; LLVM's
  ``; Occupancy:`` line in the AMDGCN agrees with the VGPR limit computed here on both.
* Wave-slot-limited workgroups per CU = floor(32 / waves_per_workgroup).
* Occupancy = the minimum of the three; waves per EU = workgroups x waves_per_workgroup / 4.

NVIDIA (the CUDA occupancy calculator's rules): registers are allocated per warp in units of 256
(registers per thread x 32, rounded up) out of 64 K per SM; shared memory per block is rounded
up to 128 bytes plus 1 KiB the driver reserves per block; at most 64 warps and 32 blocks per SM.

Before any of that, whether one work-group (block) can be launched at all (:func:`amd_launch_fit`,
:func:`nvidia_launch_fit`): at most 1024 work-items (threads) in it, and no more than the binary
itself states (AMD's ``.max_flat_workgroup_size``: LLVM clamps a 2048-item request to 1024, and the
runtime refuses the launch); its LDS or shared memory within what one work-group may have; its
registers within the register file (an AMD work-group's waves share the CU's four SIMDs, 512
VGPRs each; an NVIDIA block's warps the SM's 64 K registers). A config that fails one of these
has no occupancy: it does not run.

The numbers of each architecture are its target's facts (:mod:`irlab.base.target_facts`, the one
table of them); this module holds the arithmetic.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..base.target_facts import AmdArch, NvidiaArch
from ..base.targets import Target


def _amd_model(arch: str) -> AmdArch | None:
    """The occupancy model of ``arch`` (``gfx942``) as its target's facts give it, or None."""
    model = Target("hip", arch).facts.occupancy
    return model if isinstance(model, AmdArch) else None


def _nvidia_model(capability: int) -> NvidiaArch | None:
    model = Target("cuda", str(capability)).facts.occupancy
    return model if isinstance(model, NvidiaArch) else None


@dataclass(frozen=True)
class AmdOccupancy:
    vgprs: int
    vgprs_allocated: int
    lds_bytes: int
    waves_per_workgroup: int
    waves_per_eu_by_vgpr: int
    workgroups_by_vgpr: int
    workgroups_by_lds: int | None      # None: the kernel uses no LDS
    workgroups_by_wave_slots: int
    workgroups_per_cu: int
    waves_per_cu: int
    waves_per_eu: float
    limiter: str
    lds_per_cu: int = 65536

    def to_json(self) -> dict:
        return asdict(self)

    def explain(self) -> str:
        lds = "no LDS" if self.workgroups_by_lds is None else \
            f"LDS {self.lds_bytes} B -> floor({self.lds_per_cu}/{self.lds_bytes}) = {self.workgroups_by_lds} WG/CU"
        return (f"VGPRs {self.vgprs} -> allocated {self.vgprs_allocated} -> {self.waves_per_eu_by_vgpr} waves/EU -> "
                f"floor({self.waves_per_eu_by_vgpr}x4/{self.waves_per_workgroup}) = {self.workgroups_by_vgpr} WG/CU; "
                f"{lds}; wave slots {self.workgroups_by_wave_slots} WG/CU; occupancy {self.workgroups_per_cu} WG/CU = "
                f"{self.waves_per_cu} waves/CU = {self.waves_per_eu:g} waves/EU (limited by {self.limiter})")


def amd_occupancy(vgprs: int, lds_bytes: int, waves_per_workgroup: int, arch: str = "gfx942") -> AmdOccupancy:
    a = _amd_model(arch) or AmdArch(arch)
    if vgprs <= 0:
        raise ValueError("VGPR count must be positive")
    alloc = math.ceil(vgprs / a.vgpr_granule) * a.vgpr_granule
    waves_eu = min(a.max_waves_per_simd, a.vgprs_per_simd // alloc)
    wg_vgpr = (waves_eu * a.simds_per_cu) // waves_per_workgroup
    wg_lds = a.lds_per_cu // lds_bytes if lds_bytes > 0 else None
    wg_slots = a.max_waves_per_cu // waves_per_workgroup
    limits = {"VGPRs": wg_vgpr, "wave slots": wg_slots}
    if wg_lds is not None:
        limits["LDS"] = wg_lds
    occ = min(limits.values())
    limiter = " and ".join(k for k, v in limits.items() if v == occ)
    return AmdOccupancy(vgprs, alloc, lds_bytes, waves_per_workgroup, waves_eu, wg_vgpr, wg_lds, wg_slots, occ,
                        occ * waves_per_workgroup, occ * waves_per_workgroup / a.simds_per_cu, limiter, a.lds_per_cu)


@dataclass(frozen=True)
class NvidiaOccupancy:
    registers: int
    registers_per_warp: int
    smem_bytes: int
    smem_per_block_allocated: int
    warps_per_block: int
    blocks_by_registers: int
    blocks_by_smem: int | None
    blocks_by_warps: int
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float      # warps per SM / max warps per SM
    limiter: str

    def to_json(self) -> dict:
        return asdict(self)

    def explain(self) -> str:
        smem = "no shared memory" if self.blocks_by_smem is None else \
            f"smem {self.smem_bytes} B (+1 KiB reserved, 128 B units) = {self.smem_per_block_allocated} B -> " \
            f"{self.blocks_by_smem} blocks/SM"
        return (f"{self.registers} regs/thread -> {self.registers_per_warp} per warp -> {self.blocks_by_registers} "
                f"blocks/SM; {smem}; warps {self.blocks_by_warps} blocks/SM; {self.blocks_per_sm} blocks x "
                f"{self.warps_per_block} warps = {self.warps_per_sm} warps/SM ({self.occupancy:.1%}, limited by "
                f"{self.limiter})")


def nvidia_occupancy(registers: int, smem_bytes: int, warps_per_block: int, capability: int) -> NvidiaOccupancy:
    a = _nvidia_model(capability) or _nvidia_model(90 if capability >= 90 else 80)
    assert a is not None, "the target facts model sm_80 and sm_90"
    regs_warp = math.ceil(max(registers, 1) * 32 / a.reg_alloc_unit) * a.reg_alloc_unit
    blocks_regs = (a.regs_per_sm // regs_warp) // warps_per_block
    if smem_bytes > 0:
        per_block = math.ceil((smem_bytes + a.smem_reserved_per_block) / a.smem_alloc_unit) * a.smem_alloc_unit
        blocks_smem = a.smem_per_sm // per_block if smem_bytes <= a.smem_per_block_max else 0
    else:
        per_block, blocks_smem = a.smem_reserved_per_block, None
    blocks_warps = a.max_warps_per_sm // warps_per_block
    limits = {"registers": blocks_regs, "warps": blocks_warps, "blocks": a.max_blocks_per_sm}
    if blocks_smem is not None:
        limits["shared memory"] = blocks_smem
    blocks = min(limits.values())
    limiter = " and ".join(k for k, v in limits.items() if v == blocks)
    warps = blocks * warps_per_block
    return NvidiaOccupancy(registers, regs_warp, smem_bytes, per_block, warps_per_block, blocks_regs, blocks_smem,
                           blocks_warps, blocks, warps, warps / a.max_warps_per_sm, limiter)


# ------------------------------------------------------------------------------------------------
# whether one work-group can launch at all

@dataclass(frozen=True)
class LaunchFit:
    """Whether a compiled kernel can be launched on its target: every launch limit it exceeds (none:
    it fits), and the limits that were not known for the target and so not checked."""
    over: tuple = ()
    unknown: tuple = ()

    @property
    def fits(self) -> bool:
        return not self.over

    def __bool__(self) -> bool:
        return self.fits

    def why(self) -> str:
        """``""`` where it fits, else every limit it exceeds, on one line."""
        return "; ".join(self.over)

    def explain(self) -> str:
        text = "fits" if self.fits else f"DOES NOT LAUNCH: {self.why()}"
        return text + (f" (not checked: {', '.join(self.unknown)})" if self.unknown else "")

    def to_json(self) -> dict:
        return {"fits": self.fits, "over": list(self.over), "unknown": list(self.unknown)}


def amd_launch_fit(arch: str, waves_per_workgroup: int, vgprs: int | None, lds_bytes: int, wavefront_size: int = 64,
                   max_flat_workgroup_size: int | None = None) -> LaunchFit:
    """Whether one work-group of ``waves_per_workgroup`` waves fits an AMD CU: its size within the
    hardware's 1024 work-items and the binary's ``max_flat_workgroup_size``, its LDS within the
    architecture's, its VGPRs within the SIMDs' register files."""
    a, over, unknown = _amd_model(arch), [], []
    items = waves_per_workgroup * wavefront_size
    limit, source = AmdArch().max_workgroup_size, "the hardware's maximum"
    if max_flat_workgroup_size is not None and max_flat_workgroup_size <= limit:
        limit, source = max_flat_workgroup_size, "the binary's max_flat_workgroup_size"
    if items > limit:
        over.append(f"a work-group of {items} work-items ({waves_per_workgroup} waves x {wavefront_size} lanes) "
                    f"is over {source} of {limit}")
    if a is None:
        unknown.extend([f"LDS and VGPR limits of {arch}"])
        return LaunchFit(tuple(over), tuple(unknown))
    if lds_bytes > a.lds_per_cu:
        over.append(f"needs {lds_bytes} B of LDS, over the {a.lds_per_cu} B a work-group may have on {arch}")
    if vgprs:
        alloc = math.ceil(vgprs / a.vgpr_granule) * a.vgpr_granule
        per_simd = math.ceil(waves_per_workgroup / a.simds_per_cu)
        if per_simd * alloc > a.vgprs_per_simd:
            over.append(f"{waves_per_workgroup} waves of {alloc} VGPRs put {per_simd} waves on each of the "
                        f"{a.simds_per_cu} SIMDs, {per_simd * alloc} VGPRs over the {a.vgprs_per_simd} of its "
                        "register file")
    else:
        unknown.append("VGPRs (not in the metadata)")
    return LaunchFit(tuple(over), tuple(unknown))


def nvidia_launch_fit(capability: int, warps_per_block: int, registers: int | None, smem_bytes: int,
                      threads: int | None = None) -> LaunchFit:
    """Whether one block fits an NVIDIA SM: at most 1024 threads, its registers within the SM's
    register file, its shared memory within what a block may have (known for the capabilities
    the target facts model, :mod:`irlab.base.target_facts`; the others are not checked and the answer
    says so)."""
    a, over, unknown = _nvidia_model(capability), [], []
    base = a or NvidiaArch(f"sm_{capability}")
    threads = threads or warps_per_block * 32
    if threads > base.max_threads_per_block:
        over.append(f"a block of {threads} threads ({warps_per_block} warps) is over the {base.max_threads_per_block} "
                    "a block may have")
    if registers:
        per_warp = math.ceil(registers * 32 / base.reg_alloc_unit) * base.reg_alloc_unit
        if per_warp * warps_per_block > base.regs_per_sm:
            over.append(f"{warps_per_block} warps x {per_warp} registers need {per_warp * warps_per_block} registers, "
                        f"over the {base.regs_per_sm} of an SM")
    else:
        unknown.append("registers (not reported)")
    if a is None:
        unknown.append(f"the shared memory a block may have on sm_{capability}")
    elif smem_bytes > a.smem_per_block_max:
        over.append(f"needs {smem_bytes} B of shared memory, over the {a.smem_per_block_max} B a block may have on "
                    f"{a.name}")
    return LaunchFit(tuple(over), tuple(unknown))
