"""lab.verify_outputs has a shape for every corpus kernel, including ones added after it."""
from __future__ import annotations

from lab import verify_outputs as vo
from irlab.kernels import KERNELS


def test_every_corpus_kernel_has_a_shape_to_be_verified_on():
    for name, spec in KERNELS.items():
        shape = vo.shape_for(name, spec)
        assert shape and set(shape) == set(spec.default_shape), name
    assert "gemm_persistent_tma" not in vo.SHAPES     # the kernel that was missed: its own default shape
    assert vo.shape_for("gemm_persistent_tma", KERNELS["gemm_persistent_tma"]) == \
        dict(KERNELS["gemm_persistent_tma"].default_shape)
