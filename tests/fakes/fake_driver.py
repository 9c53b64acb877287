"""The GPU half of Triton's driver, without a GPU: Triton's own launch paths -- ``JITFunction.run``,
``CompiledKernel[grid](...)``, ``triton.autotune`` -- run unchanged on a CPU machine and reach a
launcher that calls the launch hooks exactly as the real one does (enter hook, the launch, exit
hook, each with the ``launch_metadata`` the caller computed), but runs nothing on a device.

``FakeDriver.launches`` lists what reached the launcher: (kernel name, grid, number of args). A
``on_launch(args)`` callback stands in for what the kernel does to its arguments (to check that a
capture saw them before the launch).
"""
from __future__ import annotations

import contextlib

from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver


class _Utils:
    def __init__(self, max_shared_mem: int = 232448):
        self.max_shared_mem = max_shared_mem

    def get_device_properties(self, device):
        return {"max_shared_mem": self.max_shared_mem, "multiprocessor_count": 132, "max_num_regs": 65536,
                "warpSize": 32, "sm_clock_rate": 1980000, "mem_clock_rate": 3201000, "mem_bus_width": 6144}

    def load_binary(self, name, kernel, shared, device):
        # no module handle: nothing for CompiledKernel.__del__ to unload once the fake is gone
        return None, 1, 32, 0, 1024

    def unload_module(self, module):
        pass


class FakeDriver:
    def __init__(self, target: GPUTarget = GPUTarget("cuda", 90, 32), max_shared_mem: int = 232448):
        self.target = target
        self.utils = _Utils(max_shared_mem)
        self.launches: list[tuple] = []
        self.on_launch = None
        fake = self

        class Launcher:
            def __init__(self, src, metadata):
                self.name = metadata.name

            def __call__(self, gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter_hook,
                         exit_hook, *args):
                if enter_hook is not None:
                    enter_hook(launch_metadata)
                fake.launches.append((self.name, (gx, gy, gz), len(args)))
                if fake.on_launch is not None:
                    fake.on_launch(args)
                if exit_hook is not None:
                    exit_hook(launch_metadata)

        self.launcher_cls = Launcher

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_benchmarker(self):
        """What triton.autotune times its configs with: one run each, equal times."""
        def bench(fn, quantiles=None, **kw):
            fn()
            return [1.0, 1.0, 1.0] if quantiles else 1.0
        return bench


@contextlib.contextmanager
def fake_gpu(target: GPUTarget = GPUTarget("cuda", 90, 32), max_shared_mem: int = 232448):
    """Triton's active driver is a :class:`FakeDriver` inside (the previous one restored after); its
    device gives a block ``max_shared_mem`` bytes of shared memory (an H100's by default)."""
    previous = driver._active
    fake = FakeDriver(target, max_shared_mem)
    driver.set_active(fake)
    _forget_device_properties()
    try:
        yield fake
    finally:
        driver._active = previous
        _forget_device_properties()


def _forget_device_properties() -> None:
    """Triton keeps each device's shared-memory limit (``max_shared_mem``, an lru_cache): a fake
    device with another limit must not get the one an earlier fake (or the real GPU) gave."""
    from triton.compiler import compiler
    cached = getattr(compiler, "max_shared_mem", None)
    if hasattr(cached, "cache_clear"):
        cached.cache_clear()


class FakeTensor:
    """Enough of a torch tensor for Triton's JIT and for irlab's launch records (no torch needed)."""

    def __init__(self, shape, stride=None, dtype="torch.float32", offset=0, ptr=1 << 20):
        self.shape = tuple(shape)
        self._stride = tuple(stride) if stride else tuple(_contiguous(self.shape))
        self.dtype, self._offset, self._ptr = dtype, offset, ptr
        self.device = "cuda:0"

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride

    def storage_offset(self):
        return self._offset

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self):
        return {"torch.float16": 2, "torch.bfloat16": 2, "torch.float32": 4, "torch.int32": 4}.get(self.dtype, 4)


def _contiguous(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return list(reversed(out))
