"""lds-transposes: every trip through shared memory (LDS), every transpose, and the redundant ones.

AMD's guides walk through the FA-decode int4 IR by hand: the dequantized values are "stored in
shared memory for the transpose operation", "loaded from LDS to register again", and after a few
elementwise ops "stored in LDS again" -- LDS used twice. This pass does that reading for any IR:

* Every shared-memory trip, per value chain: a register value written (``ttg.local_alloc %v``,
  ``ttg.local_store``) and read back (``ttg.local_load``), through any views (``memdesc_index``,
  ``memdesc_trans``, loop-carried buffers); global data staged into LDS (async copies, pipelined
  ``local_store`` of a load); LDS buffers read directly by an MMA; and every ``convert_layout``
  that goes through LDS -- which Triton decides, not this pass: it runs Triton's own shared-memory
  allocation on a copy of the module and reads which converts got scratch space. In the old
  syntax (``#triton_gpu`` shared-encoded tensors) a convert to or from a shared encoding *is* an
  LDS write or read.
* Every transpose, classified: ``tt.trans`` on registers and ``memdesc_trans`` are free views
  (the layout or the shared-memory addresses are permuted, no data moves); a shared-to-shared
  ``tt.trans`` only changes addresses; a convert between blocked layouts of different order moves
  data.
* Redundant patterns: transpose pairs that cancel (separated only by elementwise or broadcast
  ops), a transpose immediately converted again, and two LDS trips on one value chain (joined only
  by elementwise ops) where one carries a transpose the other trip could absorb.

With ``fix=true`` it removes transpose pairs that cancel (directly, or across elementwise ops,
which are re-typed). Findings go to the pass result's ``data["findings"]`` (JSON) and are
printed as a table by ``LdsTransposes.render_table``.
"""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from typing import ClassVar

from irlab.ir import BlockArgument, MemDescType, Operation, OpResult, TensorType
from irlab.ir.printer import text_with
from irlab.opinfo import (ASYNC_COPIES, BROADCASTS, CONVERTS, ELEMENTWISE, GLOBAL_LOADS, LOCAL_LOADS,
                          SHARED_VIEWS, STAGING, base_name)
from irlab.pass_api import ModulePass, PassContext, option
from irlab.registry import register

MMA_FROM_SMEM = frozenset({"ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttg.warp_group_dot"})


def _layout(t):
    return getattr(t, "layout", None)


def _is_shared_tensor(t) -> bool:
    """A tensor with a shared encoding: the old syntax's way of saying 'this lives in LDS'."""
    return isinstance(t, TensorType) and t.layout is not None and t.layout.is_shared


def _order(op: Operation):
    o = op.attr("order")
    return list(o) if isinstance(o, list) else None


def _compose_identity(o1, o2) -> bool:
    if o1 is None or o2 is None or len(o1) != len(o2):
        return False
    return [o1[i] for i in o2] == list(range(len(o1)))


@register
@dataclass(frozen=True)
class LdsTransposes(ModulePass):
    name: ClassVar[str] = "lds-transposes"
    summary: ClassVar[str] = "report every shared-memory (LDS) trip and transpose; flag redundant ones; fix=true " \
                             "removes transpose pairs that cancel"

    fix: bool = option(False, "remove transpose pairs that cancel")
    ask_triton: bool = option(True, "decide which converts go through LDS with Triton's shared-memory allocation "
                              "(off: report them as undecided)")

    def run(self, ctx: PassContext) -> None:
        m = ctx.module
        findings: list[dict] = []
        scratch, why_not = self._scratch_converts(m) if self.ask_triton else (None, "ask_triton=false")
        trips = self._trips(m, scratch, why_not, findings)
        self._transposes(m, scratch, findings)
        self._cancelling_pairs(ctx, m, findings)
        self._absorbable(trips, findings)
        for i, f in enumerate(findings, 1):
            f["id"] = i
        ctx.data["findings"] = findings
        ctx.data["lds_decided_by"] = "Triton's shared-memory allocation" if scratch is not None else \
            f"layout kinds only ({why_not})"
        ctx.data["summary"] = {k: sum(1 for f in findings if f["kind"] == k) for k in
                               dict.fromkeys(f["kind"] for f in findings)}
        if not findings:
            ctx.note("no shared-memory trips and no transposes in this IR")
        for f in findings:
            sev = "warning" if f["kind"] in ("cancelling-transposes", "transpose-then-convert", "absorbable-trip") \
                else "remark"
            msg = f"[{f['kind']}] {f['detail']}"
            (ctx.warning if sev == "warning" else ctx.remark)(msg, f.pop("_op", None))

    # ------------------------------------------------------------------------------------------
    # which converts go through LDS: ask Triton

    def _scratch_converts(self, m) -> tuple[set | None, str]:
        if m.fragment:
            return None, "a fragment of ops cannot be handed to Triton's allocator"
        target = m.target or ""
        if not target:
            return None, "the module names no ttg.target"
        try:
            from triton._C.libtriton import amd, ir, nvidia, passes
        except ImportError:  # pragma: no cover
            return None, "Triton is not importable"
        converts = [op for op in m.walk() if base_name(op) in CONVERTS]
        if not converts:
            return set(), ""
        context = ir.context()
        ir.load_dialects(context)
        nvidia.load_dialects(context)
        amd.load_dialects(context)
        from irlab.bridge.pipeline import captured_stderr
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "copy.ttgir")
            with open(path, "w") as f:
                f.write(str(m))
            with captured_stderr() as err:
                try:
                    mod = ir.parse_mlir_module(path, context)
                except RuntimeError:
                    mod = None
            if mod is None:
                return None, f"Triton could not parse the module ({(err[0] if err else '').strip()[:200]})"
            mod.context = context
            pm = ir.pass_manager(context)
            if target.startswith("cuda:"):
                cap = int(target.split(":")[1])
                nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, cap, _ptx_version(cap))
            elif target.startswith("hip:"):
                amd.passes.ttgpuir.add_allocate_shared_memory(pm)
            else:
                passes.ttgpuir.add_allocate_shared_memory(pm)
            with captured_stderr():
                try:
                    pm.run(mod, "irlab-lds-transposes-allocation")
                except RuntimeError as e:
                    return None, f"Triton's shared-memory allocation failed on a copy: {e}"
            annotated = mod.str_nodebug()
        from irlab import ir as irlab_ir
        cm = irlab_ir.parse(annotated, "<allocated copy>")
        copies = [op for op in cm.walk() if base_name(op) in CONVERTS]
        if len(copies) != len(converts):
            return None, "the allocated copy does not line up with the module"
        return {id(orig) for orig, c in zip(converts, copies) if "allocation.offset" in c.attributes}, ""

    # ------------------------------------------------------------------------------------------
    # shared-memory trips

    def _root(self, v, depth=0):
        """The allocation a memory-descriptor value points into (through views and loop-carried values)."""
        if depth > 32 or v is None:
            return None
        if isinstance(v, OpResult):
            op = v.op
            if op.name == "ttg.local_alloc":
                return op
            if base_name(op) in SHARED_VIEWS:
                return self._root(op.operands[0], depth + 1)
            if op.name == "scf.for":  # result k <- init k
                return self._root(op.operands[3 + v.number], depth + 1)
            return None
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op
            if owner is not None and owner.name == "scf.for" and v.number >= 1:
                return self._root(owner.operands[3 + v.number - 1], depth + 1)
        return None

    def _value_origin(self, v) -> str:
        """Where a value written to LDS comes from: global (a load, maybe through staging ops) or compute."""
        seen = 0
        while isinstance(v, OpResult) and seen < 6:
            if v.op.name in GLOBAL_LOADS:
                return "global"
            if v.op.name in STAGING:
                v, seen = v.op.operands[0], seen + 1
                continue
            break
        return "register"

    def _trips(self, m, scratch, why_not, findings) -> list[dict]:
        trips: list[dict] = []
        by_root: dict = {}

        def buffer(root) -> dict:
            """What is known of one LDS allocation: who writes it, reads it, views it, feeds an MMA from it."""
            return by_root.setdefault(id(root), {"root": root, "writes": [], "reads": [], "views": [], "mma": []})

        ops = list(m.walk())
        for op in ops:
            n = base_name(op)
            if n == "ttg.local_alloc":
                entry = buffer(op)
                if op.operands:
                    entry["writes"].append(op)
            elif n == "ttg.local_store" or n in ASYNC_COPIES:  # (value or source pointers, destination buffer)
                root = self._root(op.operands[1])
                if root is not None:
                    buffer(root)["writes"].append(op)
            elif n in LOCAL_LOADS or n in MMA_FROM_SMEM:
                for v in op.operands[:1] if n in LOCAL_LOADS else op.operands[:2]:
                    if isinstance(v.type, MemDescType):
                        root = self._root(v)
                        if root is not None:
                            entry = buffer(root)
                            entry["reads" if n in LOCAL_LOADS else "mma"].append(op)
                            self._collect_views(v, entry["views"])
        for entry in by_root.values():
            writes, reads, mma = entry["writes"], entry["reads"], entry["mma"]
            if not writes or not (reads or mma):
                continue
            origins = {("global" if w.name in ASYNC_COPIES else self._value_origin(w.operands[0])) for w in writes}
            transposes = [v for v in entry["views"] if base_name(v) in ("ttg.memdesc_trans",)]
            if mma and not reads:
                kind = "lds-operand"
                what = "read directly by the MMA from shared memory"
            elif origins == {"register"}:
                kind = "lds-round-trip"
                what = "a register value written to LDS and read back into registers"
            else:
                kind = "lds-staging"
                what = "global data staged in LDS (pipelined load) and read into registers"
            trip = {"kind": kind, "write": [self._ref(w) for w in writes], "read": [self._ref(r) for r in reads + mma],
                    "through": [self._ref(v) for v in transposes],
                    "buffer": str(entry["root"].result.type) if entry["root"].results else "",
                    "_writes": writes, "_reads": reads + mma, "_transposes": transposes}
            trip["detail"] = (f"{what}: {', '.join(trip['write'])} -> " +
                              (f"[{', '.join(trip['through'])}] -> " if trip["through"] else "") +
                              f"{', '.join(trip['read'])} (buffer {trip['buffer']})")
            trips.append(trip)
        # old syntax: convert_layout to a shared-encoded tensor (write), shared views, convert back (read)
        for op in ops:
            if base_name(op) not in CONVERTS or not op.results:
                continue
            src, dst = op.operand_types[0] if op.operand_types else None, op.result.type
            if _is_shared_tensor(dst) and not _is_shared_tensor(src):
                reads, views = [], []
                self._old_syntax_reads(op.result, reads, views)
                if reads:
                    trip = {"kind": "lds-round-trip", "write": [self._ref(op)], "read": [self._ref(r) for r in reads],
                            "through": [self._ref(v) for v in views], "buffer": str(dst),
                            "_writes": [op], "_reads": reads, "_transposes": views}
                    trip["detail"] = (f"a register value converted into shared memory and back (old syntax: a "
                                      f"convert to a #shared encoding is an LDS write): {self._ref(op)} -> " +
                                      (f"[{', '.join(trip['through'])}] -> " if views else "") +
                                      f"{', '.join(trip['read'])}")
                    trips.append(trip)
        for n, t in enumerate(trips, 1):
            t["trip"] = n
            findings.append({"kind": t["kind"], "op": t["write"][0], "line": t["_writes"][0].line,
                             "location": t["_writes"][0].location(), "detail": f"trip #{n}: {t['detail']}",
                             "_op": t["_writes"][0], "trip": n})
        # converts through LDS scratch (decided by Triton)
        for op in ops:
            if base_name(op) not in CONVERTS or not op.results:
                continue
            src, dst = (op.operand_types[0] if op.operand_types else None), op.result.type
            if _is_shared_tensor(src) or _is_shared_tensor(dst):
                continue  # old-syntax LDS write/read, reported as a trip
            if scratch is None:
                decided = f"undecided ({why_not})"
                kind = "convert-undecided"
            elif id(op) in scratch:
                decided, kind = "through LDS scratch (Triton allocated it shared memory)", "convert-through-lds"
            else:
                continue  # register-only or warp-shuffle conversion: no LDS
            findings.append({"kind": kind, "op": self._ref(op), "line": op.line, "location": op.location(),
                             "detail": f"{self._ref(op)} {_layout_text(src)} -> {_layout_text(dst)}: {decided}",
                             "_op": op})
        return trips

    def _collect_views(self, v, out):
        while isinstance(v, OpResult) and base_name(v.op) in SHARED_VIEWS:
            if v.op not in out:
                out.append(v.op)
            v = v.op.operands[0]

    def _old_syntax_reads(self, v, reads, views, depth=0):
        if depth > 8:
            return
        for u in v.uses:
            op = u.op
            if op.name == "tt.trans" and _is_shared_tensor(op.result.type):
                views.append(op)
                self._old_syntax_reads(op.result, reads, views, depth + 1)
            elif base_name(op) in CONVERTS and not _is_shared_tensor(op.result.type):
                reads.append(op)

    # ------------------------------------------------------------------------------------------
    # transposes

    def _transposes(self, m, scratch, findings):
        for op in m.walk():
            n = base_name(op)
            if n == "tt.trans" and op.results:
                src = op.operand_types[0] if op.operand_types else None
                if _is_shared_tensor(src):
                    cls, why = "free view", "shared-to-shared: only the addresses change (old syntax)"
                else:
                    cls, why = "free view", "on registers: lowers to nothing, the result layout is the permuted source layout"
                findings.append({"kind": "transpose", "op": self._ref(op), "line": op.line,
                                 "location": op.location(), "classification": cls,
                                 "detail": f"{self._ref(op)} order {_order_text(op)}: {cls} -- {why}", "_op": op})
                users = op.result.users
                # on registers, a convert right after the transpose moves the data the transpose avoided moving
                # (after a shared-to-shared transpose, the convert back is simply the trip's LDS read)
                if len(users) == 1 and base_name(users[0]) in CONVERTS and not _is_shared_tensor(src) \
                        and not _is_shared_tensor(users[0].result.type):
                    cv = users[0]
                    findings.append({"kind": "transpose-then-convert", "op": self._ref(op), "line": op.line,
                                     "location": op.location(),
                                     "detail": f"{self._ref(op)} is immediately converted by {self._ref(cv)}: the data "
                                               "moves in the convert; the transpose could be folded into it", "_op": op})
            elif n == "ttg.memdesc_trans":
                findings.append({"kind": "transpose", "op": self._ref(op), "line": op.line,
                                 "location": op.location(), "classification": "free view",
                                 "detail": f"{self._ref(op)} order {_order_text(op)}: free view -- permutes shared-memory "
                                           "offsets, no data moves", "_op": op})
            elif n in CONVERTS and op.results and op.operand_types:
                src, dst = _layout(op.operand_types[0]), _layout(op.result.type)
                if src is not None and dst is not None and src.kind == dst.kind == "blocked" \
                        and src.order and dst.order and src.order != dst.order:
                    where = "through LDS" if scratch is not None and id(op) in scratch else (
                        "in registers/shuffles" if scratch is not None else "LDS use undecided")
                    findings.append({"kind": "transpose", "op": self._ref(op), "line": op.line,
                                     "location": op.location(), "classification": "data movement",
                                     "detail": f"{self._ref(op)} changes layout order {src.order} -> {dst.order}: a "
                                               f"data-moving transpose ({where})", "_op": op})

    def _cancelling_pairs(self, ctx, m, findings):
        for t2 in [op for op in m.walk() if base_name(op) in ("tt.trans", "ttg.memdesc_trans")]:
            if t2.parent is None:
                continue
            chain, v = [], t2.operands[0]
            t1 = None
            while isinstance(v, OpResult) and len(chain) < 8:
                op = v.op
                if base_name(op) == base_name(t2):
                    t1 = op
                    break
                if (op.name in ELEMENTWISE or op.name in BROADCASTS) and len(op.result.uses) == 1:
                    tensor_ins = [x for x in op.operands if isinstance(x.type, TensorType)]
                    if len(tensor_ins) != 1:
                        break
                    chain.append(op)
                    v = tensor_ins[0]
                    continue
                break
            if t1 is None or not _compose_identity(_order(t1), _order(t2)):
                continue
            between = f" across {len(chain)} elementwise/broadcast op(s)" if chain else ""
            f = {"kind": "cancelling-transposes", "op": self._ref(t2), "line": t2.line, "location": t2.location(),
                 "detail": f"{self._ref(t1)} and {self._ref(t2)} cancel{between}", "_op": t2, "fixed": False}
            if self.fix:
                fixed, why = self._fix_pair(ctx, t1, t2, list(reversed(chain)))
                f["fixed"] = fixed
                f["detail"] += " -- removed" if fixed else f" -- not removed: {why}"
            findings.append(f)

    def _fix_pair(self, ctx, t1, t2, chain) -> tuple[bool, str]:
        rw = ctx.rewriter
        src = t1.operands[0]
        if any(op.name in BROADCASTS for op in chain):
            return False, "a broadcast sits between them (its shape would change)"
        if len(t1.result.uses) != 1 and chain:
            return False, f"{self._ref(t1)} has other uses"
        if not chain:
            if str(src.type) != str(t2.result.type):
                return False, f"types differ ({src.type} vs {t2.result.type})"
            current = src
        else:
            # elementwise ops between: re-type them from the transposed type to the source's type
            tt, st, out = t1.result.type, src.type, t2.result.type
            if not all(isinstance(t, TensorType) for t in (tt, st, out)) or st.shape != out.shape \
                    or st.encoding_text != out.encoding_text:
                return False, "the types around the pair do not line up"
            current, prev = src, t1.result
            for op in chain:
                edits = {u.span: current.ref for u in op.uses if u.value is prev}
                text = _retype_shape(text_with(op, edits), tt, st)
                new = rw.replace_op(op, text, reason="re-typed: the transposes around it cancel",
                                    allow_type_change=True)
                prev, current = op.result, new[-1].result
            if str(current.type) != str(t2.result.type):
                return False, f"after re-typing the chain its type {current.type} differs from {t2.result.type}"
        rw.replace_all_uses(t2.result, current, reason="transposes cancel")
        rw.erase(t2, reason="cancelling transpose")
        if not t1.result.uses:
            rw.erase(t1, reason="cancelling transpose")
        return True, ""

    # ------------------------------------------------------------------------------------------
    def _absorbable(self, trips, findings):
        """Two LDS trips on one value chain, joined only by elementwise/broadcast ops (or, in a fragment,
        following each other in program order), one of them carrying a transpose."""
        for a in trips:
            for b in trips:
                if a is b or not a["_reads"] or not b["_writes"]:
                    continue
                if not (a["_transposes"] or b["_transposes"]):
                    continue
                link = self._linked(a["_reads"], b["_writes"])
                if link is None:
                    continue
                which = a if a["_transposes"] else b
                other = b if which is a else a
                findings.append({
                    "kind": "absorbable-trip", "op": which["_transposes"][0] and self._ref(which["_transposes"][0]),
                    "line": which["_transposes"][0].line, "location": which["_transposes"][0].location(),
                    "detail": f"trips #{a['trip']} and #{b['trip']} are on one value chain ({link}); the transpose "
                              f"{self._ref(which['_transposes'][0])} in trip #{which['trip']} could be done by trip "
                              f"#{other['trip']}'s write and read, saving a trip through LDS",
                    "_op": which["_transposes"][0], "trips": [a["trip"], b["trip"]]})

    def _linked(self, reads, writes) -> str | None:
        targets = {id(w) for w in writes}
        for r in reads:
            if not r.results:
                continue
            frontier, seen, steps = [r.result], set(), 0
            while frontier and steps < 64:
                v = frontier.pop()
                steps += 1
                for u in v.uses:
                    if id(u.op) in targets:
                        return "joined by elementwise ops"
                    if (u.op.name in ELEMENTWISE or u.op.name in BROADCASTS or base_name(u.op) in CONVERTS) \
                            and u.op.results and id(u.op) not in seen:
                        seen.add(id(u.op))
                        frontier.append(u.op.result)
        # a fragment hides the values in between; fall back to program order (same block, or top level)
        r0, w0 = reads[-1], writes[0]
        m = r0.module
        if m is None or not m.fragment or r0.parent is not w0.parent:
            return None
        order = r0.parent.ops if r0.parent is not None else m.ops
        if order.index(r0) < order.index(w0):
            return "one follows the other in program order; the values between are defined outside this fragment"
        return None

    # ------------------------------------------------------------------------------------------
    @staticmethod
    def render_table(findings: list[dict]) -> str:
        """The findings as a readable table: id, kind, op, IR line, source location, detail."""
        rows = [("#", "finding", "op", "line", "source", "detail")]
        for f in findings:
            rows.append((str(f.get("id", "")), f["kind"], f.get("op") or "", str(f.get("line", "")),
                         f.get("location") or "-", f["detail"]))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        return "\n".join("  ".join(r[i].ljust(widths[i]) for i in range(5)) + "  " + r[5] for r in rows)

    @staticmethod
    def _ref(op: Operation) -> str:
        res = op.results[0].ref if op.results else ""
        return f"{res + ' = ' if res else ''}{op.name}"



def _order_text(op: Operation) -> str:
    o = _order(op)
    if o is not None:
        return str(o)
    t = op.operand_types[0] if op.operand_types else None
    return "[1, 0] (implicit: the old tt.trans swapped the two dims)" if getattr(t, "rank", 0) == 2 else "?"


def _layout_text(t) -> str:
    if isinstance(t, (TensorType, MemDescType)):
        return t.encoding_text or str(t)
    return str(t)


def _retype_shape(text: str, old: TensorType, new: TensorType) -> str:
    """Replace tensor types of ``old``'s shape and encoding (any element type) by ``new``'s."""
    old_dims = "".join(f"{d}x" for d in old.shape)
    new_dims = "".join(f"{d}x" for d in new.shape)
    pat = re.compile(r"tensor<" + re.escape(old_dims) + r"([^,<>]+(?:<[^<>]*>)?), " + re.escape(old.encoding_text) + ">")
    return pat.sub(lambda mm: f"tensor<{new_dims}{mm.group(1)}, {new.encoding_text}>", text)


def _ptx_version(capability: int) -> int:
    try:
        from triton.backends.nvidia.compiler import get_ptxas_version, ptx_get_version
        return ptx_get_version(get_ptxas_version(capability))
    except Exception:  # pragma: no cover - the allocation only needs a plausible version
        return 86
