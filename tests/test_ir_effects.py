"""Effects, not name lists: one table says what every op does, an op it does not know may do
anything, and no move crosses an op whose effects conflict -- the refusal names that op."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.ir.effects import Effect, conflict, effects, is_known
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass

PTR = "tensor<32x128x!tt.ptr<f16>, #blocked1>"
VAL = "tensor<32x128xf16, #blocked1>"

# ops that must stop the load from moving past them, written as a user could find them in IR
BLOCKERS = {
    "tt.call": "tt.call @clobber(%arg0) : (!tt.ptr<f16>) -> ()",
    "rocdl.barrier": '"rocdl.barrier"() : () -> ()',
    "amdg.async_wait": '%w = "amdg.async_wait"() {num_inst = 0 : i32} : () -> !ttg.async.token',
    "amdg.cond_barrier": '"amdg.cond_barrier"(%true) : (i1) -> ()',
    "amdg.memory_counter_wait": '"amdg.memory_counter_wait"() {load = 0 : i32} : () -> ()',
    "tt.elementwise_inline_asm": (f'%asm = "tt.elementwise_inline_asm"(%arg10) <{{asm_string = "st.global.b16 [$1], 0;",'
                                  f' constraints = "=r,l", packed_element = 1 : i32, pure = false}}> : ({PTR}) -> '
                                  f'tensor<32x128xi32, #blocked1>'),
    "gpu.printf": '"gpu.printf"() {format = "%d"} : () -> ()',
    "amdg.masked_store": f'"amdg.masked_store"(%arg10, %z) : ({PTR}, {VAL}) -> ()',
    "tt.descriptor_scatter": '"tt.descriptor_scatter"(%desc) : (!tt.tensordesc<tensor<1x128xf16>>) -> ()',
    "ttng.tmem_store": '"ttng.tmem_store"(%tmem) : (!ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>) -> ()',
    "foo.bar": '"foo.bar"() : () -> ()',
    "gpu.barrier": "gpu.barrier",
    "tt.store": f"tt.store %arg10, %z : {PTR}",
    "ttg.local_store": "ttg.local_store %z, %smem : tensor<32x128xf16, #blocked1> -> "
                       "!ttg.memdesc<32x128xf16, #shared1, #smem, mutable>",
    "tt.atomic_rmw": f"%old = tt.atomic_rmw fadd, acq_rel, gpu, %arg10, %z : ({PTR}, {VAL}) -> {VAL}",
}


@pytest.fixture(scope="module")
def gluon80():
    return compile_kernel(KERNELS["gluon_gemm_prefetch"], "cuda:80").text("ttgir", locations=False)


def _with_op_before_local_loads(text: str, op_text: str) -> str:
    """The op placed between the second global load and the local_loads it is sunk below."""
    m = ir.parse(text)
    body = m.first("scf.for").body
    first_ll = next(o for o in body.ops if o.name == "ttg.local_load")
    indent = first_ll.lead[first_ll.lead.rfind("\n") + 1:]
    support = (f"{indent}%z = arith.constant dense<0.000000e+00> : {VAL}\n{indent}%true = arith.constant true\n"
               f"{indent}%desc = ub.poison : !tt.tensordesc<tensor<1x128xf16>>\n"
               f"{indent}%tmem = ub.poison : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>\n"
               f"{indent}%smem = ub.poison : !ttg.memdesc<32x128xf16, #shared1, #smem, mutable>\n")
    at = text.index(first_ll.original_text)
    line_start = text.rfind("\n", 0, at) + 1
    text = text[:line_start] + support + indent + op_text + "\n" + text[line_start:]
    text = text.replace("#smem = #ttg.shared_memory",
                        "#smem = #ttg.shared_memory\n#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, "
                        "colStride = 1>", 1)
    return text.replace("  tt.func public", "  tt.func private @clobber(%p: !tt.ptr<f16>) {\n"
                        "    %c = arith.constant 0.000000e+00 : f16\n    tt.store %p, %c : !tt.ptr<f16>\n"
                        "    tt.return\n  }\n  tt.func public", 1)


@pytest.mark.parametrize("name", sorted(BLOCKERS))
def test_a_load_never_crosses_an_op_with_conflicting_effects(gluon80, name):
    text = _with_op_before_local_loads(gluon80, BLOCKERS[name])
    m = ir.parse(text)
    op = next(o for o in m.walk() if o.name == name and o.enclosing("scf.for") is not None)
    res = run_pass(make_pass("interleave-global-loads"), m)
    assert not res.changed and str(m) == text
    message = " | ".join(d.message for d in res.diagnostics)
    assert f"would cross {ir.describe(op)}" in message and f"line {op.line}" in message, message


def test_a_pure_op_between_does_not_stop_the_move_and_attributes_count(gluon80):
    for op_text in ("%neg = arith.negf %z : " + VAL,
                    f'%asm = "tt.elementwise_inline_asm"(%z) <{{asm_string = "mov.b16 $0, $1;", constraints = "=h,h", '
                    f'packed_element = 1 : i32, pure = true}}> : ({VAL}) -> {VAL}'):
        m = ir.parse(_with_op_before_local_loads(gluon80, op_text))
        assert run_pass(make_pass("interleave-global-loads"), m, verify=False).changed


def test_the_table_knows_every_op_triton_prints(corpus):
    """Every op in the TTIR and TTGIR of every corpus kernel, on every target, at num_stages 1-3."""
    unknown = set()
    files = [f for f in corpus["files"] if ".noloc." in f.name]
    assert {f.suffix for f in files} == {".ttir", ".ttgir"} and len(files) >= 2 * len(KERNELS), files
    for f in files:
        unknown |= {o.name for o in ir.parse(f.read_text()).walk() if not is_known(o)}
    assert not unknown, f"ops missing from irlab.ir.effects: {sorted(unknown)}"


def test_unknown_calls_and_impure_asm_have_every_effect():
    m = ir.parse('"foo.bar"() : () -> ()\ntt.call @f() : () -> ()\n"gpu.printf"() {format = "x"} : () -> ()\n')
    for op in m.ops:
        assert effects(op) == Effect.ALL
    m = ir.parse('%a = "tt.elementwise_inline_asm"(%x) <{pure = false}> : (f32) -> f32\n'
                 '%b = "tt.elementwise_inline_asm"(%x) <{pure = true}> : (f32) -> f32\n')
    assert effects(m.ops[0]) == Effect.ALL and effects(m.ops[1]) == Effect.NONE


def test_the_crossing_rule():
    RG, WG, RS, WS, SYNC = (Effect.READ_GLOBAL, Effect.WRITE_GLOBAL, Effect.READ_SHARED, Effect.WRITE_SHARED,
                            Effect.SYNC)
    assert not conflict(RG, RS) and not conflict(RG, RG) and not conflict(Effect.NONE, SYNC)
    assert conflict(RG, WS) and conflict(WG, RS) and conflict(RG, SYNC) and conflict(RS, WG)
    assert conflict(Effect.NONE, Effect.SCHEDULE)
    # an op with regions has the effects of the ops inside it
    m = ir.parse("scf.if %c {\n  tt.store %p, %v : !tt.ptr<f16>\n}\n")
    assert Effect.WRITE_GLOBAL in effects(m.ops[0])


RG, WG, RS, WS, SYNC = (Effect.READ_GLOBAL, Effect.WRITE_GLOBAL, Effect.READ_SHARED, Effect.WRITE_SHARED,
                        Effect.SYNC)

# LLVM-dialect accesses as Triton prints them (the test below has Triton parse and print them first)
LLVM_ACCESSES = {
    "%a = llvm.load %g : !llvm.ptr<1> -> i32": RG,
    "%b = llvm.load %s : !llvm.ptr<3> -> i32": RS,
    "%c = llvm.load %f : !llvm.ptr -> i32": RG | RS,       # the generic address space: either memory
    "%d = llvm.load volatile %g : !llvm.ptr<1> -> i32": RG | SYNC,
    "%e = llvm.load %g atomic acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32": RG | SYNC,
    '%h = llvm.load %s atomic syncscope("agent") monotonic {alignment = 4 : i64} : !llvm.ptr<3> -> i32': RS | SYNC,
    "%i = llvm.load %s invariant : !llvm.ptr<3> -> i32": RS,
    "llvm.store %v, %g : i32, !llvm.ptr<1>": WG,
    "llvm.store %s, %g : !llvm.ptr<3>, !llvm.ptr<1>": WG,  # a shared-memory pointer stored to global memory
    "llvm.store volatile %v, %s : i32, !llvm.ptr<3>": WS | SYNC,
    "llvm.store %v, %g atomic release {alignment = 4 : i64} : i32, !llvm.ptr<1>": WG | SYNC,
    "%j = llvm.atomicrmw add %s, %v monotonic : !llvm.ptr<3>, i32": RS | WS | SYNC,
    "%k = llvm.cmpxchg %g, %v, %v acq_rel monotonic : !llvm.ptr<1>, i32": RG | WG | SYNC,
    'llvm.fence syncscope("workgroup") release': SYNC,
}


def test_attributes_decide_what_an_llvm_access_does(tmp_path):
    from irlab.bridge.services import TritonServices
    body = "\n".join(f"    {line}" for line in LLVM_ACCESSES)
    text = (f"module {{\n  llvm.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %f: !llvm.ptr, %v: i32) {{\n{body}\n"
            "    llvm.return\n  }\n}\n")
    mod, refused = TritonServices().parse(text)
    assert refused is None, refused
    printed = mod.str_nodebug()
    ops = [o for o in ir.parse(printed).walk() if o.name.startswith(("llvm.load", "llvm.store", "llvm.atomicrmw",
                                                                       "llvm.cmpxchg", "llvm.fence"))]
    assert [effects(o) for o in ops] == list(LLVM_ACCESSES.values())
    # the generic form names the same attributes as properties
    generic = ir.parse('%a = "llvm.load"(%g) <{alignment = 4 : i64, ordering = 4 : i64}> : (!llvm.ptr<1>) -> i32\n'
                       '%b = "llvm.load"(%s) <{volatile_}> : (!llvm.ptr<3>) -> i32\n'
                       '%c = "llvm.load"(%s) <{alignment = 4 : i64}> : (!llvm.ptr<3>) -> i32\n'
                       '"llvm.store"(%v, %g) <{alignment = 4 : i64, ordering = 5 : i64}> : (i32, !llvm.ptr<1>) -> ()\n')
    assert [effects(o) for o in generic.ops] == [RG | SYNC, RS | SYNC, RS, WG | SYNC]


def test_a_volatile_load_synchronizes_so_no_load_crosses_it():
    m = ir.parse("tt.func @f(%p: !tt.ptr<f16>, %q: !tt.ptr<f16>) {\n"
                 "  %a = tt.load %p {isVolatile = true} : !tt.ptr<f16>\n  %b = tt.load %q : !tt.ptr<f16>\n"
                 "  %c = tt.load %p : !tt.ptr<f16>\n  tt.return\n}\n")
    volatile, plain, other, _ = m.first("tt.func").body.ops
    assert effects(volatile) == RG | SYNC and effects(plain) == effects(other) == RG
    rw = ir.Rewriter(m)
    assert rw.check_move(other, plain, after=False) is None   # two plain loads may swap
    why = rw.check_move(plain, volatile, after=False)
    assert why is not None and "would cross %a = tt.load (line 2), which reads global memory, synchronizes " \
                               "(a volatile load)" in why, why


@pytest.mark.parametrize("name", [
    "arith.addf", "math.exp2", "tt.dot", "tt.trans", "ttg.convert_layout", "ttg.memdesc_index", "nvws.aref.create",
    "rocdl.mfma.f32.32x32x8f16", "rocdl.cvt.pk.f32.fp8", "rocdl.workitem.id.x", "nvvm.read.ptx.sreg.tid.x",
    "nvvm.convert.f32x2.to.bf16x2", "nvvm.mma.sync", "llvm.add", "llvm.intr.fma", "llvm.intr.vector.reduce.fadd",
    "llvm.getelementptr", "gpu.thread_id",
])
def test_pure_ops_stay_pure(name):
    assert effects(ir.parse(f'"{name}"() : () -> ()\n').ops[0]) == Effect.NONE


def test_the_direction_of_every_global_memory_row_follows_its_name():
    """Each row of the effect table for an op that moves data between registers and global memory
    says which way it goes, as its name does: a store or scatter writes global memory (and, unless
    it also reduces, does not read it); a load or gather reads it and writes nothing. A store
    marked as a read would let a pass move a load across it."""
    from irlab.ir.effects import _EFFECT_OPS
    from irlab.ir.effects import Effect as E
    checked = 0
    for name, eff in _EFFECT_OPS.items():
        last = name.rsplit(".", 1)[-1]
        if "atomic" in name or "local" in last or "tmem" in last or "shared" in last:
            continue
        if last.endswith(("store", "scatter")):
            assert E.WRITE_GLOBAL in eff and E.READ_GLOBAL not in eff, f"{name}: {eff.describe()}"
            checked += 1
        elif last.endswith(("load", "gather")) and not (eff & (E.READ_SHARED | E.WRITE_SHARED)):
            assert E.READ_GLOBAL in eff and not (eff & (E.WRITE_GLOBAL | E.WRITE_SHARED)), f"{name}: {eff.describe()}"
            checked += 1
    assert checked >= 8, checked


def test_separate_memories_lets_a_global_access_cross_shared_memory_and_async_copy_bookkeeping():
    """The opt-in rule of the schedule passes' moves (``across_memories``): global and shared memory
    are different memories, a register load and an async copy into shared memory only both read
    global memory, and ``ttg.async_commit_group`` touches no memory. Nothing else is separate."""
    from irlab.ir.effects import separate_memories
    m = ir.parse(
        "tt.func @f(%p: tensor<64x!tt.ptr<f16>, #b>, %q: tensor<64x!tt.ptr<f16, 3>, #b>, %s: !ttg.memdesc<64xf16, #sh, #smem, mutable>, %v: tensor<64xf16, #b>) {\n"
        "  %a = tt.load %p : tensor<64x!tt.ptr<f16>, #b>\n"
        "  tt.store %p, %v : tensor<64x!tt.ptr<f16>, #b>\n"
        "  %vol = tt.load %p {isVolatile = true} : tensor<64x!tt.ptr<f16>, #b>\n"
        "  %lds = tt.load %q : tensor<64x!tt.ptr<f16, 3>, #b>\n"
        "  ttg.local_store %v, %s : tensor<64xf16, #b> -> !ttg.memdesc<64xf16, #sh, #smem, mutable>\n"
        "  %cp = ttg.async_copy_global_to_local %p, %s : tensor<64x!tt.ptr<f16>, #b> -> <64xf16, #sh, #smem, mutable>\n"
        "  %g = ttg.async_commit_group tokens %cp\n"
        "  %w = ttg.async_wait %g {num = 0 : i32}\n"
        "  gpu.barrier\n"
        "  tt.return\n}\n")
    load, store, volatile, lds_ptr, local_store, copy, commit, wait, barrier, _ = m.first("tt.func").body.ops
    sep = separate_memories
    assert sep(load, local_store) and sep(local_store, store) and sep(store, local_store)
    assert sep(load, copy) and sep(copy, load)           # both read global; only the copy writes, to shared
    assert sep(load, commit) and sep(store, commit) and sep(commit, load)
    assert not sep(store, copy)                          # the copy reads global memory the store may write
    assert not sep(local_store, copy)                    # both write shared memory
    assert not sep(load, wait) and not sep(load, barrier) and not sep(load, store)
    assert not sep(volatile, local_store) and not sep(volatile, copy) and not sep(volatile, commit)
    assert not sep(lds_ptr, local_store)                 # a pointer into shared memory (address space 3)
    assert not sep(local_store, commit)                  # commit: only global accesses are let across
