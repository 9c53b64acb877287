"""A variant to compare Liger-Kernel's RMSNorm (liger_rms_norm.py) with: Triton's ``coalesce`` pass
dropped, so the row's loads and stores keep the layout the kernel's ``tl.arange`` gives them
instead of the vectorized one ``coalesce`` picks: how much of the kernel's speed is that pass's."""
from irlab.passkit.variant import Drop, Variant

NO_COALESCE = Variant.baseline().then(Drop("ttgpuir.coalesce"), name="no-coalesce",
                                      description="Triton's coalesce pass dropped")
