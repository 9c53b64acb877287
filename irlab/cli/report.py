"""irlab report: the static report of a compile or of saved files, and the diff of two."""
from __future__ import annotations

from pathlib import Path

from .common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError, add_kernel_options, compile_from_args, err, out_file
from ..base.jsonio import write_json


BINARY_SUFFIXES = (".amdgcn", ".cubin")
METADATA_FILES = ("summary.json", "metadata.json")   # irlab compile --out; irlab capture


def _metadata_beside(path: Path) -> tuple[dict, Path | None]:
    """The compile metadata saved next to a binary: irlab's summary.json or metadata.json, or
    Triton's own <kernel>.json."""
    import json
    for candidate in [path.parent / n for n in METADATA_FILES] + [path.with_suffix(".json")]:
        if candidate.is_file():
            try:
                data = json.loads(candidate.read_text())
            except ValueError:
                continue
            if isinstance(data, dict) and ("shared" in data or "num_warps" in data):
                return data, candidate
    return {}, None


def report_file(path: Path, args):
    """The static report of a saved AMDGCN or cubin file, and a line saying where its assumptions
    (shared memory per block, warps) came from: an option, or the metadata beside it."""
    from .. import report
    if path.suffix not in BINARY_SUFFIXES or not path.is_file():
        raise UsageError(f"{path}: not an .amdgcn or .cubin file (irlab report FILE takes what irlab compile --out "
                         "or irlab capture wrote)")
    meta, source = _metadata_beside(path)
    found = {}
    for key, option in (("shared", args.shared), ("num_warps", args.num_warps)):
        if option is not None:
            found[key] = (option, f"--{key.replace('_', '-')}")
        elif key in meta:
            found[key] = (meta[key], str(source))
        else:
            what = {"shared": "shared-memory size", "num_warps": "warp count"}[key]
            raise UsageError(f"{path}: its {what} is not known: give --{key.replace('_', '-')} (there is no metadata "
                             f"JSON that says it beside the file)")
    (shared, from_shared), (warps, from_warps) = found["shared"], found["num_warps"]
    try:
        if path.suffix == ".amdgcn":
            text = path.read_text()
            arch = _one_architecture(path, _amdgcn_arch(text), args.arch, "--arch", meta, source) or "gfx942"
            rep = report.from_amdgcn(text, shared, warps, arch, path.stem, str(path))
        else:
            data = path.read_bytes()
            cap = _one_architecture(path, _cubin_capability(path, data), args.capability, "--capability", meta, source)
            ptx = path.with_suffix(".ptx")
            from ..bridge.compat import NVIDIA_TOOLS
            rep = report.from_cubin(data, ptx.read_text() if ptx.is_file() else None, shared, warps, cap,
                                    path.stem, str(path), tools=NVIDIA_TOOLS)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: {e}") from None
    return rep, f"{path}: shared memory {shared} B (from {from_shared}), {warps} warps (from {from_warps})"


def _cubin_capability(path: Path, data: bytes) -> int:
    """The SM the cubin's ELF header names; a UsageError where it is not a complete cubin."""
    from ..report.elf import cuda_capability, sections
    if sections(data) is None:
        raise UsageError(f"{path}: not a complete ELF object ({len(data)} bytes: cut short, or not a cubin)")
    cap = cuda_capability(data)
    if cap is None:
        raise UsageError(f"{path}: an ELF object, but not one for an NVIDIA GPU")
    return cap


def _one_architecture(path: Path, own, option, flag: str, meta: dict, source: Path | None):
    """The architecture of a binary: its own (the cubin's header, the AMDGCN's target line), which
    an option or the metadata beside it may repeat but not contradict (a contradiction is a
    UsageError: the report would describe another target than the binary's)."""
    said = [(option, flag)]
    target = str(meta.get("target", ""))
    if ":" in target:
        arch = target.split(":", 1)[1]
        said.append((int(arch) if arch.isdigit() else arch, f"the metadata beside it ({source})"))
    for value, where in said:
        if value is None or own is None or str(value) == str(own):
            continue
        theirs = f"sm_{value}" if flag == "--capability" else value
        mine = f"sm_{own}" if flag == "--capability" else own
        raise UsageError(f"{path}: the binary is for {mine}, but {where} says {theirs}: report it for {mine} (drop "
                         f"{flag}) or give the binary built for {theirs}")
    if own is not None:
        return own
    return next((value for value, _ in said if value is not None), None)


def what_passes_did(res, remarks: int = 6, explain: bool = False) -> list[str]:
    """What each Python pass of a compile's variant did -- the changes it made, counted by kind,
    its remarks and warnings, and how many declines it gave (with ``explain``, the declines too:
    why it left each op alone). Nothing for a variant without Python passes."""
    if not res.python_results:
        return []
    out = [f"what the passes of {res.variant.name} did:"]
    for stage, r in res.python_results:
        said = r.shown(explain)
        if r.changed:
            kinds: dict[str, int] = {}
            for c in r.changes:
                kinds[c.kind] = kinds.get(c.kind, 0) + 1
            counted = ", ".join(f"{n} {k}" for k, n in kinds.items())
            out.append(f"  {r.name} ({stage}): changed the IR: {len(r.changes)} changes ({counted})")
        else:
            out.append(f"  {r.name} ({stage}): did nothing" + ("" if said or r.declines else
                                                                  " (it said nothing about why)"))
        for d in said[:remarks]:
            out.append(f"    {d.severity}: {d.message}" + (f" ({d.location})" if d.location else ""))
        if len(said) > remarks:
            out.append(f"    ... and {len(said) - remarks} more (irlab compile --variant {res.variant.name} lists all)")
        if r.declines_line(explain):
            out.append(f"    {r.declines_line(explain)}")
    return out


def sameness(a, b) -> str:
    """Whether two compiles are the same: the same binary, the same TTGIR but another binary, or
    different."""
    if a.binary_sha256 == b.binary_sha256:
        return (f"identical: {b.variant.name} compiles to the same binary as {a.variant.name} "
                f"(sha256 {a.binary_sha256[:16]}); nothing above differs")
    try:
        same_ir = a.text("ttgir", locations=False) == b.text("ttgir", locations=False)
    except (KeyError, ValueError):
        same_ir = False
    if same_ir:
        return f"same TTGIR: {b.variant.name} and {a.variant.name} differ only after TTGIR (their binaries differ)"
    return f"different: {b.variant.name} changes the IR and the binary of {a.variant.name}"


def _amdgcn_arch(text: str) -> str | None:
    import re
    # amdgcn-amd-amdhsa--gfx942 (Triton 3.6), amdgpu9.42-amd-amdhsa-unknown-gfx942 (3.9)
    m = (re.search(r'\.amdgcn_target\s+"[^"]*?-(gfx[0-9a-f]+)\b', text)
         or re.search(r'amdhsa\S*?-(gfx[0-9a-f]+)\b', text))
    return m.group(1) if m else None


def _variant(name: str, target):
    """A named variant for the target, a variant file, or registered Python passes
    (:func:`irlab.bridge.named_variants.resolve`)."""
    from ..bridge.named_variants import resolve
    return resolve(name, target)


def contained_compile(source: str, doing: str, compile_one, *args, **kwargs):
    """``compile_one(*args, **kwargs)`` in a child process (:mod:`irlab.bridge.containment`), its
    CompileResult without the live compiled kernel (the report reads only its text and metadata);
    Triton aborting on it is :class:`CompileAborted`, its line naming ``source``."""
    from ..bridge.containment import TritonAborted, contained
    try:
        return contained(_without_kernel, compile_one, args, kwargs, doing=doing)
    except TritonAborted as e:
        raise CompileAborted(e.line(source)) from None


class CompileAborted(Exception):
    """Triton aborted compiling what a report asked for; the one line to print."""


def _without_kernel(compile_one, args, kwargs):
    res = compile_one(*args, **kwargs)
    res.compiled = None
    return res


def cmd_report(args) -> int:
    """Static report of one variant or file, or the diff of two (--vs); each compile runs in a
    child process, so that Triton aborting is one line (exit 2), not the end of irlab."""
    try:
        return _report(args)
    except CompileAborted as e:
        err(str(e))
        return EXIT_USAGE


def _report(args) -> int:
    from .. import report
    notes, compiles = [], []
    from ..program.launches import LaunchError, is_launch_ref, load
    if args.files and is_launch_ref(args.files[0]):
        if len(args.files) > 1:
            raise UsageError("a captured launch is compared with a variant: irlab report SOURCE --vs VARIANT")
        try:
            launch = load(args.files[0])
        except LaunchError as e:
            raise UsageError(str(e)) from None
        from .common import target_arg
        target = target_arg(args.target) if args.target else launch.target
        names = [args.variant or "baseline"] + ([args.vs] if args.vs else [])
        from ..bridge.pipeline import VerifierAbort, VerifierError
        try:
            compiles = [contained_compile(args.files[0], f"recompiling its TTIR as {n} for {target}",
                                          launch.recompile, target, _variant(n, target)) for n in names]
        except VerifierAbort as e:   # on the capture's own TTIR (exit 2), or on what a pass made of it
            err(e.line())
            return EXIT_USAGE if e.source else EXIT_FAIL
        except (LaunchError, VerifierError) as e:
            err(f"irlab report: {e}")
            return EXIT_FAIL
        reports = [report.from_compile(res) for res in compiles]
        notes.append(f"{launch.source}: its TTIR recompiled for {target} with options {launch.options}"
                     + (f"; the launch: {launch.picked}" if launch.picked else ""))
    elif args.files:
        if len(args.files) > 2:
            raise UsageError("irlab report takes one file, or two to compare (or FILE --vs FILE2)")
        paths = [Path(f) for f in args.files] + ([Path(args.vs)] if args.vs else [])
        if len(paths) > 2:
            raise UsageError("give two files, or one file and --vs FILE2")
        reports = []
        for p in paths:
            rep, note = report_file(p, args)
            reports.append(rep)
            notes.append(note)
    else:
        if not args.target:
            raise UsageError("give --target (and --kernel), or report on saved files: irlab report FILE [--vs FILE2]")
        from .common import target_arg
        target = target_arg(args.target)
        names = [args.variant or "baseline"] + ([args.vs] if args.vs else [])
        compiles = [contained_compile(args.kernel, f"compiling {n} for {target}", compile_from_args, args,
                                      variant=_variant(n, target)) for n in names]
        reports = [report.from_compile(res) for res in compiles]
    if len(reports) == 2:
        print(report.render_diff(reports[0], reports[1], markdown=args.markdown))
    else:
        print(reports[0].render())
    for res in compiles:
        for line in what_passes_did(res, explain=args.explain):
            print(line)
    if len(compiles) == 2:
        print(sameness(*compiles))
    for note in notes:
        print(f"assumed: {note}")
    if args.json:
        write_json(args.json, [r.to_json() for r in reports])
    return EXIT_OK


def register(sub) -> None:
    c = sub.add_parser("report", help="static report (registers, LDS, occupancy, hot-loop schedule); --vs diffs")
    c.add_argument("files", nargs="*", metavar="FILE", help="saved .amdgcn or .cubin files, or a captured launch "
                   "(irlab capture folder, tritonparse trace) to recompile (instead of a compile)")
    add_kernel_options(c, target_required=False)
    c.set_defaults(target=None)
    c.add_argument("--variant", default=None, help="variant to report (default baseline): a named variant "
                   "(`irlab variants`) or a registered pass")
    c.add_argument("--vs", default=None, metavar="VARIANT|FILE", help="diff against this variant (or file)")
    c.add_argument("--markdown", action="store_true", help="the side-by-side diff as a markdown table")
    c.add_argument("--json", type=out_file, default=None, metavar="FILE", help="also write the reports as JSON")
    c.add_argument("--explain", action="store_true", help="under what the passes did, also each decline (why a pass "
                   "left an op alone; without it, only their count)")
    g = c.add_argument_group("reports on files: what the binary alone does not say (default: the metadata JSON "
                             "beside it)")
    g.add_argument("--shared", type=int, default=None, help="shared memory (LDS) bytes per block")
    g.add_argument("--arch", default=None, help="AMD architecture (default: read from the AMDGCN; one that "
                   "contradicts it is refused)")
    g.add_argument("--capability", type=int, default=None, help="NVIDIA capability (default: read from the cubin's "
                   "ELF header; one that contradicts it is refused)")
    c.set_defaults(func=cmd_report)
