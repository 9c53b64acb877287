"""Seeded fuzzing of ``irlab ir check`` and every pass that rewrites, on mutations of the golden
TTIR/TTGIR of both Triton versions and of the passes' own FileCheck inputs (``passes/tests``:
hand-made IR for the shapes a pass acts on that no golden file has, one source per module)
(tests/test_ir_fuzz.py runs it; run it as a script to write the table of outcomes):

    python -m tests.ir_fuzzing --inputs 600 --out docs/results/fuzz

Mutations are syntactic (truncation, deleted, duplicated and swapped lines, undefined names,
garbage bytes, spliced lines) and semantic, the kind that tempt a pass into an unsafe rewrite or
break the IR in ways only a verifier sees: swapped operands, another layout alias, a result name
defined twice, a dropped yield value, a changed attribute value, an inserted barrier, atomic,
volatile load or cancelling transpose pair, a bad value of one layout parameter (tests/fuzz_layouts.py:
the layouts Triton's parser accepts and its C++ asserts on). Each mutated file goes through ``ir check`` and every
rewriting pass through the CLI's ``main``; a run must end with exit 0, 1 or 2 and no traceback,
and an output a pass says it rewrote must parse back with irlab and print byte for byte (and, for
a sample, pass Triton's parser and verifier once more).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import sys
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests import fuzz_launch_contract as launch_contract
from tests.fuzz_layouts import mutate_layout

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
VERSIONS = ("3.6.0", "3.9.0")
# the compiler output a pass is given: Triton's own stages, and the AMD baselines with Triton's
# epilogue, reordering, schedule passes and in-thread transpose switched off (where optimize-epilogue,
# the interleave, the schedule passes and in-thread-transpose act)
SOURCE_NAMES = ("baseline.ttir", "baseline.ttgir", "no-optimize-epilogue.ttgir", "no-reorder.ttgir",
                "no-in-thread-transpose.ttgir", "no-amd-schedule.ttgir")
PASS_TESTS = ROOT / "passes" / "tests"

# every pass that rewrites, with options that make it act
PASSES = (
    ("cancel-transposes", ()),
    ("descriptor-loads", ("store=true",)),
    ("in-thread-transpose", ()),
    ("interleave-global-loads", ()),
    ("interleave-global-loads", ("pin=barriers",)),
    ("loop-attributes", ("warp_specialize=true", "num_stages=2")),
    ("optimize-epilogue", ()),
    ("persistent-tiles", ()),
    ("pin-order", ("order=global_load:1,local_load",)),
    ("wgmma-wait-pendings", ("pendings=0",)),
    ("move-up-prologue-loads", ("select=staged",)),
    ("sink-layout-conversions", ()),
    ("hoist-layout-conversions", ()),
    ("block-pingpong", ("loop_variant_masks=allow",)),
)
OUTCOMES = ("ok", "rewritten", "declined", "error exit 2", "pass error exit 1", "other")   # ok: ir check only
INPUT_TIMEOUT_S = 60   # one input through every command; a child still running after that has hung
VERIFY_SAMPLE = 4   # every 4th rewritten output goes through Triton's parser and verifier once more


@dataclass(frozen=True)
class Source:
    path: Path
    text: str
    readable: bool     # the installed Triton accepts the unmutated file (else its mutants run unverified)
    module: int | None = None   # for a FileCheck file: which of its modules (split at ``// -----``)

    @property
    def name(self) -> str:
        if self.module is None:
            return str(self.path.relative_to(GOLDEN))
        return f"{self.path.relative_to(ROOT)}#{self.module}"


def sources(services=None) -> list[Source]:
    """The golden TTIR/TTGIR of both versions, then every module of the passes' FileCheck files,
    each marked by whether the installed Triton reads it (3.9's AMD TTGIR and 3.6's differ in
    syntax: each Triton rejects the other's)."""
    if services is None:
        from irlab.bridge.services import TritonServices
        services = TritonServices()
    out = []
    for version in VERSIONS:
        for path in sorted((GOLDEN / f"triton-{version}").rglob("*")):
            if path.name in SOURCE_NAMES:
                text = path.read_text()
                out.append(Source(path, text, services.verify(text, str(path)) is None))
    from irlab.ir import split_input
    for path in sorted(PASS_TESTS.glob("*/*.mlir")):
        for i, (_, text) in enumerate(split_input(path.read_text())):
            if "tt.func" in text:
                out.append(Source(path, text, services.verify(text, str(path)) is None, i))
    return out


# ------------------------------------------------------------------------------------------------
# mutations

OP_LINE = re.compile(r"^(\s+)(?:%[\w.$-]+(?::\d+)? = )?[a-z_]+\.[a-z_.]+")
DEF = re.compile(r"^(\s+)%([\w.$-]+)(:\d+)? = ")
REF = re.compile(r"%[\w.$-]+(?:#\d+)?")
ALIAS_DEF = re.compile(r"^#([\w.$-]+) = ", re.M)
I32_ATTR = re.compile(r"(\b[\w.]+ = )(-?\d+)( : i32)")
PTR_ARG = re.compile(r"(%arg\d+): !tt\.ptr<(f16|f32|i32)>")
TRANS = re.compile(r"^(\s+)(%[\w.$-]+) = tt\.trans (%[\w.$-]+) (\{order = array<i32: 1, 0>\}) : (\S+, [^>]*>|\S+) -> "
                   r"(\S+, [^>]*>|\S+)$", re.M)

SYNTACTIC = ("truncate", "delete", "duplicate", "swap", "undefined", "garbage", "splice")
SEMANTIC = ("swap-operands", "layout-alias", "duplicate-result-name", "drop-yield-value", "attribute-value",
            "insert-barrier", "insert-atomic", "volatile-load", "transpose-pair", "layout-parameter")


def _op_lines(lines: list[str]) -> list[int]:
    """Indexes of lines that start an op inside a function (where an op may be inserted before)."""
    return [i for i, line in enumerate(lines) if OP_LINE.match(line) and not line.lstrip().startswith("tt.func")]


def mutate(text: str, rng: random.Random, kind: str | None = None) -> tuple[str, str]:
    """(the mutation's kind, the mutated text); a semantic mutation that finds nothing to change
    falls back to a syntactic one."""
    kind = kind or rng.choice(SYNTACTIC + SEMANTIC * 2)
    lines = text.splitlines(keepends=True)
    new = _SEMANTIC[kind](text, lines, rng) if kind in _SEMANTIC else None
    if new is not None:
        return kind, new
    if kind in _SEMANTIC:
        kind = rng.choice(SYNTACTIC)
    return kind, _syntactic(kind, text, lines, rng)


def _syntactic(kind: str, text: str, lines: list[str], rng: random.Random) -> str:
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if kind == "truncate":
        return text[:rng.randrange(len(text))]
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(j, lines[i])
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "undefined":
        lines[i] = lines[i].replace("%", "%nope_", 1)
    elif kind == "garbage":
        at = rng.randrange(len(text))
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))).decode("latin-1")
        return text[:at] + junk + text[at:]
    else:   # a piece of one line pasted into another
        a, b = sorted((rng.randrange(len(lines[i]) + 1), rng.randrange(len(lines[i]) + 1)))
        lines[j] = lines[j][: len(lines[j]) // 2] + lines[i][a:b] + lines[j][len(lines[j]) // 2:]
    return "".join(lines)


def _swap_operands(text, lines, rng):
    cands = [i for i, line in enumerate(lines) if " = " in line and len(REF.findall(line.split(" = ", 1)[1])) >= 2]
    if not cands:
        return None
    i = rng.choice(cands)
    head, rest = lines[i].split(" = ", 1)
    a, b = REF.findall(rest)[:2]
    if a == b:
        return None
    rest = rest.replace(a, "\0", 1).replace(b, a, 1).replace("\0", b, 1)
    lines[i] = f"{head} = {rest}"
    return "".join(lines)


def _layout_alias(text, lines, rng):
    names = ALIAS_DEF.findall(text)
    cands = [i for i, line in enumerate(lines) if not line.startswith("#")
             and any(f"#{n}" in line for n in names)]
    if len(names) < 2 or not cands:
        return None
    i = rng.choice(cands)
    used = [n for n in names if re.search(rf"#{re.escape(n)}\b", lines[i])]
    old = rng.choice(used)
    new = rng.choice([n for n in names if n != old])
    lines[i] = re.sub(rf"#{re.escape(old)}\b", f"#{new}", lines[i], count=1)
    return "".join(lines)


def _duplicate_result_name(text, lines, rng):
    defs = [(i, m) for i, line in enumerate(lines) if (m := DEF.match(line))]
    if len(defs) < 2:
        return None
    (i, a), (j, b) = rng.sample(defs, 2)
    lines[j] = lines[j].replace(f"%{b.group(2)}", f"%{a.group(2)}", 1)
    return "".join(lines)


def _drop_yield_value(text, lines, rng):
    cands = [i for i, line in enumerate(lines) if line.lstrip().startswith("scf.yield %") and " : " in line]
    if not cands:
        return None
    i = rng.choice(cands)
    values, types = lines[i].rstrip("\n").split(" : ", 1)
    head, refs = values.split("scf.yield ", 1)
    refs = [r.strip() for r in refs.split(",")]
    types = _split_types(types)
    if len(refs) != len(types):
        return None
    k = rng.randrange(len(refs))
    del refs[k], types[k]
    lines[i] = f"{head}scf.yield" + (f" {', '.join(refs)} : {', '.join(types)}" if refs else "") + "\n"
    return "".join(lines)


def _split_types(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<({[" and 1 or 0
        depth -= ch in ">)}]" and 1 or 0
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def _attribute_value(text, lines, rng):
    cands = [(i, m) for i, line in enumerate(lines) if not line.startswith("#")
             for m in I32_ATTR.finditer(line)]
    cands += [(i, m) for i, line in enumerate(lines) for m in re.finditer(r"(array<i32: )(\d+, \d+)(>)", line)]
    if not cands:
        return None
    i, m = rng.choice(cands)
    if m.group(1) == "array<i32: ":
        new = ", ".join(reversed(m.group(2).split(", ")))
    else:
        new = str(rng.choice([v for v in (0, 1, 2, 3, 4, 8, 16, 64, -1, 999) if str(v) != m.group(2)]))
    lines[i] = lines[i][:m.start(2)] + new + lines[i][m.end(2):]
    return "".join(lines)


def _insert(lines, rng, make):
    cands = _op_lines(lines)
    if not cands:
        return None
    i = rng.choice(cands)
    indent = OP_LINE.match(lines[i]).group(1)
    lines[i:i] = [indent + op + "\n" for op in make()]
    return "".join(lines)


def _insert_barrier(text, lines, rng):
    return _insert(lines, rng, lambda: ["gpu.barrier"])


def _insert_atomic(text, lines, rng):
    args = PTR_ARG.findall(text)
    if not args:
        return None
    ptr, elem = rng.choice(args)
    value = {"f16": "0.000000e+00 : f16", "f32": "0.000000e+00 : f32", "i32": "0 : i32"}[elem]
    kind = "add" if elem == "i32" else "fadd"
    return _insert(lines, rng, lambda: [f"%fz_c = arith.constant {value}",
                                        f"%fz_a = tt.atomic_rmw {kind}, relaxed, gpu, {ptr}, %fz_c : "
                                        f"(!tt.ptr<{elem}>, {elem}) -> {elem}"])


def _volatile_load(text, lines, rng):
    cands = [i for i, line in enumerate(lines) if re.search(r"= tt\.load [^{]* : ", line)]
    if not cands:
        return None
    i = rng.choice(cands)
    lines[i] = re.sub(r"(= tt\.load [^{]*?) : ", r"\1 {isVolatile = true} : ", lines[i], count=1)
    return "".join(lines)


def _transpose_pair(text, lines, rng):
    """A transpose pair that cancels, fed to a real transpose: ``trans(trans(x))`` in place of x."""
    hits = list(TRANS.finditer(text))
    if not hits:
        return None
    m = rng.choice(hits)
    indent, res, src, order, src_t, res_t = m.groups()
    pair = (f"{indent}%fz_t1 = tt.trans {src} {order} : {src_t} -> {res_t}\n"
            f"{indent}%fz_t2 = tt.trans %fz_t1 {order} : {res_t} -> {src_t}\n")
    line = m.group(0).replace(f"tt.trans {src} ", "tt.trans %fz_t2 ", 1)
    return text[:m.start()] + pair + line + text[m.end():]


_SEMANTIC = {"swap-operands": _swap_operands, "layout-alias": _layout_alias,
             "duplicate-result-name": _duplicate_result_name, "drop-yield-value": _drop_yield_value,
             "attribute-value": _attribute_value, "insert-barrier": _insert_barrier,
             "insert-atomic": _insert_atomic, "volatile-load": _volatile_load, "transpose-pair": _transpose_pair,
             "layout-parameter": lambda text, lines, rng: mutate_layout(text, rng)}   # tests/fuzz_layouts.py


# ------------------------------------------------------------------------------------------------
# running

@dataclass
class Run:
    seed: int
    source: str
    mutation: str
    command: str          # "ir check" or the pass with its options
    code: int | None      # None: an exception escaped main
    outcome: str
    detail: str = ""      # the first error line, the exception


@dataclass
class Campaign:
    runs: list[Run] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # broken invariants, each with its reproducer

    def counts(self) -> dict[str, Counter]:
        out: dict[str, Counter] = {}
        for r in self.runs:
            out.setdefault(r.command, Counter())[r.outcome] += 1
        return out


def _call(argv: list[str]) -> tuple[int | None, str, str]:
    from irlab.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:   # argparse
            code = e.code if isinstance(e.code, int) else 2
        except BaseException:     # noqa: BLE001 - what escaped is the finding
            code = None
            err.write(traceback.format_exc())
    return code, out.getvalue(), err.getvalue()


def command_name(name: str, options: tuple) -> str:
    return name + (f"{{{','.join(options)}}}" if options else "")


def run_input(campaign: Campaign, seed: int, src: Source, work: Path, services, verify_every: int = VERIFY_SAMPLE):
    from irlab import ir
    rng = random.Random(seed)
    src, kind, text = launch_contract.contract_input(seed) or (src, *mutate(src.text, rng))
    path = work / f"m{seed}{src.path.suffix}"
    path.write_bytes(text.encode("latin-1", "replace") if not text.isascii() else text.encode())
    reproducer = f"seed {seed}: {kind} of {src.name}"

    def record(command, code, outcome, detail=""):
        campaign.runs.append(Run(seed, src.name, kind, command, code, outcome, detail))

    def check_exit(command, code, out, err) -> bool:
        ok = True
        if code not in (0, 1, 2) or "Traceback" in out + err:
            campaign.problems.append(f"{command} on {reproducer}: exit {code}\n{err[-3000:]}")
            ok = False
        elif code == 2 and not (f"{path}:" in err and ": error: " in err):
            campaign.problems.append(f"{command} on {reproducer}: exit 2 without file:line:col: error\n{err[-2000:]}")
        return ok

    verify = ["--no-verify"] if not src.readable else []
    if src.readable:
        code, out, err = _call(["ir", "check", str(path)])
        ok = check_exit("ir check", code, out, err)
        record("ir check", code, "other" if not ok else {0: "ok", 2: "error exit 2"}.get(code, "other"),
               _first_error(err))
    for name, options in PASSES:
        command = command_name(name, options)
        result, output = work / f"m{seed}.{name}.json", work / f"m{seed}.{name}.out"
        for f in (result, output):
            f.unlink(missing_ok=True)
        argv = ["pass", name, str(path), "-q", "--json", str(result), "-o", str(output), *verify]
        for o in options:
            argv += ["--option", o]
        code, out, err = _call(argv)
        if not check_exit(command, code, out, err):
            record(command, code, "other", _first_error(err))
            continue
        if code != 0:
            record(command, code, "error exit 2" if code == 2 else "pass error exit 1", _first_error(err))
            continue
        changed = any(r["changed"] for r in json.loads(result.read_text()))
        record(command, code, "rewritten" if changed else "declined")
        produced = output.read_text()
        launch_contract.after_pass(record, campaign.problems, name, kind, changed, produced, reproducer, seed)
        if not changed:
            if produced != text:
                campaign.problems.append(f"{command} on {reproducer}: it says it changed nothing, but its output "
                                         "differs from its input")
            continue
        try:
            again = ir.parse(produced, str(output))
        except ir.IRParseError as e:
            campaign.problems.append(f"{command} on {reproducer}: its output does not parse back: {e}")
            continue
        if str(again) != produced:
            campaign.problems.append(f"{command} on {reproducer}: its output does not print back byte for byte")
        n = sum(1 for r in campaign.runs if r.outcome == "rewritten")
        if src.readable and n % verify_every == 0:
            rejected = services.verify(produced, str(output))
            if rejected is not None:
                campaign.problems.append(f"{command} on {reproducer}: Triton rejects the output it said it "
                                         f"verified: {rejected.first}")


def _first_error(err: str) -> str:
    line = next((x for x in err.splitlines() if "error" in x), err.strip().splitlines()[0] if err.strip() else "")
    return line[:300]


def campaign(seeds, work: Path, srcs: list[Source] | None = None) -> Campaign:
    """Every seed's input, each in a child process of its own: Triton's native parser can abort or
    crash on some malformed IR, and that must become a recorded finding, not the end of the run."""
    from irlab.bridge.services import TritonServices
    services = TritonServices()
    srcs = srcs if srcs is not None else sources(services)
    c = Campaign()
    for seed in seeds:
        _run_isolated(c, seed, source_of(seed, srcs), work, services)
    return c


def source_of(seed: int, srcs: list[Source]) -> Source:
    """The source a seed mutates: consecutive seeds step through the sources 7 at a time, so that a
    short run of seeds already spans kernels, targets and both versions."""
    return srcs[(seed * 7) % len(srcs)]


def _run_isolated(c: Campaign, seed: int, src: Source, work: Path, services) -> None:
    import os
    import signal
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:   # the child: run the input, report each run as it ends, exit without cleanup
        os.close(read)
        code = 0
        try:
            mine = _Reporting(write)
            run_input(mine, seed, src, work, services)
        except BaseException:   # noqa: BLE001
            os.write(write, (json.dumps({"problem": traceback.format_exc()}) + "\n").encode())
            code = 1
        os._exit(code)
    os.close(write)
    data, hung = _read_until(read, INPUT_TIMEOUT_S)
    if hung:
        os.kill(pid, signal.SIGKILL)
    os.close(read)
    lines = data.decode().splitlines()
    _, status = os.waitpid(pid, 0)
    done = []
    for line in lines:
        item = json.loads(line)
        if "problem" in item:
            c.problems.append(item["problem"])
        else:
            c.runs.append(Run(**item))
            done.append(item["command"])
    if os.WIFSIGNALED(status):
        commands = (["ir check"] if src.readable else []) + [command_name(n, o) for n, o in PASSES]
        crashed = next((cmd for cmd in commands if cmd not in done), "?")
        what = f"no answer in {INPUT_TIMEOUT_S} s" if hung else f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
        c.runs.append(Run(seed, src.name, "?", crashed, None, "other", what))
        c.problems.append(f"{crashed} on seed {seed} ({src.name}): {what}")


def _read_until(fd: int, timeout_s: float) -> tuple[bytes, bool]:
    """What the child writes to ``fd`` until it closes it; (data, True) if it is still open after
    ``timeout_s`` seconds."""
    import os
    import select
    import time
    chunks, deadline = [], time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return b"".join(chunks), True
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)


class _Reporting(Campaign):
    """A campaign that also writes each run and problem to a pipe as it is recorded."""

    def __init__(self, fd: int):
        super().__init__()
        self.fd = fd
        self.runs = _Sink(fd, lambda r: r.__dict__)
        self.problems = _Sink(fd, lambda p: {"problem": p})


class _Sink(list):
    def __init__(self, fd, encode):
        super().__init__()
        self.fd, self.encode = fd, encode

    def append(self, item):
        super().append(item)
        import os
        os.write(self.fd, (json.dumps(self.encode(item)) + "\n").encode())


# ------------------------------------------------------------------------------------------------
# the table

def table(c: Campaign) -> str:
    counts = c.counts()
    head = "| command | " + " | ".join(OUTCOMES) + " | runs |\n| --- |" + " ---: |" * (len(OUTCOMES) + 1) + "\n"
    rows = []
    for command, n in counts.items():
        rows.append(f"| `{command}` | " + " | ".join(str(n.get(o, 0)) for o in OUTCOMES) + f" | {sum(n.values())} |")
    return head + "\n".join(rows) + "\n"


def write_results(c: Campaign, out: Path, n_inputs: int, srcs: list[Source]) -> None:
    import platform

    import triton
    out.mkdir(parents=True, exist_ok=True)
    version = triton.__version__
    mutations = Counter(r.mutation for r in c.runs if r.command == command_name(*PASSES[0]))
    exit1 = Counter(re.sub(r"'[^']*'|%[\w#.]+|\d+", "_", r.detail)[:160] for r in c.runs
                    if r.outcome == "pass error exit 1")
    import subprocess
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    data = {"triton": version, "python": platform.python_version(), "irlab_commit": commit or None, "inputs": n_inputs,
            "sources": {s.name: s.readable for s in srcs},
            "counts": {k: dict(v) for k, v in c.counts().items()}, "mutations": dict(mutations),
            "pass_errors": dict(exit1), "problems": c.problems}
    (out / f"counts-triton-{version}.json").write_text(json.dumps(data, indent=1) + "\n")
    _write_readme(out)


def _write_readme(out: Path) -> None:
    """README.md from every counts-*.json in ``out`` (one section per Triton version)."""
    parts = ["# Fuzzing `ir check` and the rewriting passes\n",
             "Generated by `python -m tests.ir_fuzzing --inputs 600 --out docs/results/fuzz` (run it once with each "
             "Triton; each run writes its `counts-triton-VERSION.json` and rewrites this file from all of them). "
             "The same campaign is `python -m pytest -m campaign tests/test_ir_fuzz.py`; a 24-input slice of it runs "
             "in CI.\n",
             "Each input is one seeded mutation of a golden TTIR/TTGIR file of Triton 3.6.0 or 3.9.0 "
             f"(`{'`, `'.join(SOURCE_NAMES)}` of every kernel and target) or of one module of a pass's FileCheck "
             "file (`passes/tests/*/*.mlir`). Every input goes through `ir check` and "
             "every pass below through the CLI's `main`. Outcomes: *rewritten* (exit 0, the pass changed the IR, "
             "Triton's verifier accepted the output and it parses back with irlab byte for byte), *declined* (exit "
             "0, unchanged), *ok* (`ir check` only: exit 0), *error exit 2* (the input is malformed or Triton rejects it: "
             "`file:line:col: error`), *pass error exit 1* (the pass stopped or Triton rejected what it produced), "
             "*other* (a traceback or another exit code: none is allowed). Sources the running Triton cannot read "
             "even unmutated (each version's AMD TTGIR syntax is rejected by the other) skip `ir check` and run "
             "the passes with `--no-verify`.\n",
             "Found with it: Triton 3.6.0 and 3.9.0 abort, segfault or hang in their verifier on a `tt.expand_dims` "
             "whose `axis` is outside [0, rank] (three of the first 600 inputs, all attribute-value mutations). irlab now "
             "refuses such an op at its line before Triton sees it (`irlab/ir/triton_guards.py`), and the campaign "
             "runs each input in a child process with a time limit, so a crash or hang of native code is counted "
             "under *other* instead of ending the run.\n", launch_contract.README]
    for path in sorted(out.glob("counts-triton-*.json")):
        d = json.loads(path.read_text())
        c = Campaign()
        for command, counts in d["counts"].items():
            for outcome, n in counts.items():
                c.runs.extend(Run(0, "", "", command, 0, outcome) for _ in range(n))
        readable = sum(d["sources"].values())
        parts.append(f"## Triton {d['triton']} (Python {d['python']}, irlab commit {d.get('irlab_commit')})\n")
        parts.append(f"{d['inputs']} inputs from {len(d['sources'])} source files ({readable} readable by this "
                     f"Triton); mutations: " + ", ".join(f"{k} {v}" for k, v in sorted(d["mutations"].items())) + ".\n")
        parts.append(table(c))
        if d["pass_errors"]:
            parts.append("Pass errors (exit 1), by message (names and numbers blanked):\n")
            parts.extend(f"- {n} x `{msg}`" for msg, n in sorted(d["pass_errors"].items(), key=lambda kv: -kv[1]))
            parts.append("")
        parts.append(f"Broken invariants: {len(d['problems'])}" + (
            "".join(f"\n- {p.splitlines()[0]}" for p in d["problems"]) if d["problems"] else "") + "\n")
    (out / "README.md").write_text("\n".join(parts))


def main(argv=None) -> int:
    import tempfile
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inputs", type=int, default=600)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "fuzz")
    args = p.parse_args(argv)
    srcs = sources()
    with tempfile.TemporaryDirectory(prefix="irlab-fuzz-") as d:
        c = campaign(range(args.first_seed, args.first_seed + args.inputs), Path(d), srcs)
    write_results(c, args.out, args.inputs, srcs)
    print(table(c))
    for problem in c.problems:
        print(problem, file=sys.stderr)
    return 1 if c.problems else 0


if __name__ == "__main__":
    sys.exit(main())
