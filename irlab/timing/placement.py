"""Where the input tensors of a cell's entries live: placement is part of an entry's time.

A byte-identical binary timed as an entry of its own, on input tensors of its own (a copy of the
kernel file given as ``--reference``), read slower than the baseline in every round on a
memory-bound kernel (``docs/results/README.md``); the A/A control, the baseline timed again on the
same tensors, cannot see that. Two rules keep placement out of every comparison:

* entries whose inputs are interchangeable -- the same names, element types, shapes, strides and
  contents, and the same ones written (:func:`same_inputs`) -- read the very same tensors:
  variants, the library, and a reference kernel that makes its inputs the way the cell's kernel
  does;
* entries that need inputs of their own (a reference kernel with other arguments, the calibration's
  larger planted problem, its separately allocated control) cannot share them; the cell's input
  groups then take turns in the same memory: :class:`Arenas` holds one block per group, and in round
  ``r`` group ``g`` lives in block ``(g + r) mod G``, its data copied in before the round. Over the
  rounds every group reads from every block equally often.
"""
from __future__ import annotations

ALIGN = 4096   # bytes: each storage of a placed input set starts on a page boundary


def same_inputs(torch, a: dict, b: dict, outputs: frozenset = frozenset()) -> bool:
    """Whether two input sets are interchangeable: the same keys, and for each the same value -- a
    tensor of the same element type, shape, strides and device, with the same bytes (NaN included),
    except in ``outputs`` (what the kernels write: their contents before the launch do not count)."""
    if set(a) != set(b):
        return False
    for key, x in a.items():
        y = b[key]
        if torch.is_tensor(x) != torch.is_tensor(y):
            return False
        if not torch.is_tensor(x):
            if x != y:
                return False
            continue
        if (x.dtype, tuple(x.shape), x.stride(), x.device) != (y.dtype, tuple(y.shape), y.stride(), y.device):
            return False
        if key not in outputs and not bool(torch.equal(_bytes(torch, x), _bytes(torch, y))):
            return False
    return True


def _bytes(torch, t):
    """``t``'s elements as bytes (so that NaN equals NaN and -0.0 differs from 0.0)."""
    flat = t.contiguous().reshape(-1)
    return flat.view(torch.uint8) if flat.numel() else flat


def output_keys(torch, spec, inputs: dict) -> frozenset:
    """The keys of ``inputs`` that ``spec``'s kernel writes (its ``output``/``outputs``)."""
    try:
        written = list(spec.output_tensors(inputs).values())
    except Exception:   # a spec that names no output: nothing is known to be written
        return frozenset()
    ptrs = {o.untyped_storage().data_ptr() for o in written if torch.is_tensor(o)}
    return frozenset(k for k, v in inputs.items() if torch.is_tensor(v) and v.untyped_storage().data_ptr() in ptrs)


def _storages(torch, inputs: dict) -> dict:
    """The distinct storages of an input set's tensors (views of one buffer share one): data
    pointer -> bytes, in the order the tensors come."""
    out: dict[int, int] = {}
    for v in inputs.values():
        if torch.is_tensor(v):
            s = v.untyped_storage()
            out.setdefault(s.data_ptr(), s.nbytes())
    return out


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


class Arenas:
    """Blocks of device memory that input sets are laid out in (views with the set's own element
    types, shapes and strides), so that where an input group lives can change from round to round."""

    def __init__(self, torch, device: str = "cuda"):
        self.torch, self.device = torch, device

    def span(self, inputs: dict) -> int:
        """Bytes one input set takes in a block (each storage page-aligned)."""
        return sum(_aligned(n) for n in _storages(self.torch, inputs).values())

    def block(self, nbytes: int):
        return self.torch.empty(max(1, nbytes), dtype=self.torch.uint8, device=self.device)

    def place(self, pristine: dict, block, offset: int) -> dict:
        """A copy of ``pristine`` laid out in ``block`` from ``offset``: every tensor a view with the
        original's element type, shape and strides; values that are not tensors as they are."""
        torch = self.torch
        where, at = {}, offset
        for ptr, n in _storages(torch, pristine).items():
            where[ptr] = at
            at += _aligned(n)
        out = {}
        for key, v in pristine.items():
            if not torch.is_tensor(v):
                out[key] = v
                continue
            s = v.untyped_storage()
            base = block[where[s.data_ptr()]: where[s.data_ptr()] + s.nbytes()].view(v.dtype)
            out[key] = base.as_strided(v.shape, v.stride(), base.storage_offset() + v.storage_offset())
        self.fill(out, pristine)
        return out

    def fill(self, placed: dict, pristine: dict) -> None:
        """Copy ``pristine``'s data into ``placed`` (its copy made by :meth:`place`): whole storages,
        the bytes between a view's elements too."""
        torch = self.torch
        done = set()
        for key, v in pristine.items():
            if not torch.is_tensor(v) or v.untyped_storage().data_ptr() in done:
                continue
            done.add(v.untyped_storage().data_ptr())
            src = torch.empty(0, dtype=torch.uint8, device=v.device).set_(v.untyped_storage())
            block = torch.empty(0, dtype=torch.uint8, device=placed[key].device).set_(placed[key].untyped_storage())
            start = (placed[key].storage_offset() - v.storage_offset()) * v.element_size()   # where place() put it
            block[start: start + src.numel()].copy_(src)
