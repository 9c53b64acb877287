"""Kernels the timing calibration (``irlab calibrate``, :mod:`irlab.timing.calibration`) runs beside
the corpus's GEMM and softmax, so that it spans elementwise, reduction, normalization and
attention kernels from a few microseconds to milliseconds. Kernel files (one kernel each), not
corpus kernels: the calibration names them by path, and they have no golden IR."""
