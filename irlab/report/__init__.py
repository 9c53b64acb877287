"""Static kernel reports without a GPU: registers, spills, LDS/shared memory, occupancy and the hot
loop's instruction schedule, for AMDGCN and NVIDIA SASS; diffs of two variants and tables of several."""
from .occupancy import amd_occupancy, nvidia_occupancy
from .static import StaticReport, diff_rows, from_amdgcn, from_compile, from_cubin, render_diff, render_table

__all__ = ["StaticReport", "amd_occupancy", "diff_rows", "from_amdgcn", "from_compile", "from_cubin",
           "nvidia_occupancy", "render_diff", "render_table"]
