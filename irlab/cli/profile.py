"""irlab profile: Proton's view of a kernel and its variants, side by side -- kernel time, PC
samples and stall reasons on the hot loop's instructions, and intra-kernel scopes per warp
(:mod:`irlab.profile`)."""
from __future__ import annotations

import time
from pathlib import Path

from .common import (EXIT_FAIL, EXIT_OK, KERNEL_HELP, UsageError, add_executor_options, err, executor_from_args,
                     out_folder, parse_shape, target_arg)


def register(sub) -> None:
    c = sub.add_parser("profile", help="Proton profiles of a kernel's variants: kernel time, PC-sampling stall "
                                       "reasons on the hot loop, scopes per warp with a timeline (GPU)",
                       description=__doc__.split("\n\n")[0])
    c.add_argument("--kernel", required=True, help=KERNEL_HELP + "; or a captured launch (irlab capture folder "
                   "FOLDER[#N], tritonparse trace TRACE[#KERNEL[:N]])")
    c.add_argument("--variants", default="baseline", help="comma-separated, the first is the reference (baseline "
                   "is put first if not named): named variants (`irlab variants`), registered passes with options "
                   "('pass{key=value,...}'), '+'-joined; VARIANT@CONFIG gives one entry its own tile config")
    c.add_argument("--shape", default=None, help="problem shape: M=4096,N=4096,K=4096 or 4096x4096x4096")
    c.add_argument("--config", default=None, help="tile config of every entry (default: the kernel's default)")
    c.add_argument("--target", default=None, help="target (default: this machine's GPU)")
    c.add_argument("--scopes", default="kloop,epilogue", help="scopes to record per warp: kloop, epilogue, "
                   "NAME=OP[#K] (the K-th op named OP); scopes the kernel's source opens with "
                   "triton.profiler.language.enter_scope are recorded too")
    c.add_argument("--modes", default="time,pcsampling,scopes", help="sessions to run: time, pcsampling, scopes")
    c.add_argument("--launches", type=int, default=20, help="launches per entry in the time session (a quarter "
                   "of that under PC sampling)")
    c.add_argument("--scope-buffer", default="global", choices=("global", "shared"),
                   help="where Proton keeps scope records (global: leaves the kernel's shared memory as it is)")
    c.add_argument("--pc-interval", type=int, default=0, help="PC sampling period (Proton's interval knob; 0: "
                   "its default)")
    c.add_argument("--out", type=out_folder, default=None, help="results folder (default runs/profile/<kernel>-<time>)")
    c.add_argument("--compile-only", action="store_true", help="no GPU: compile every entry as the sessions "
                   "would (scopes instrumented, PTX relined) and say where the scopes go and what they cost")
    add_executor_options(c)
    c.set_defaults(func=cmd_profile)


def _entries(args, target, spec) -> list[dict]:
    from ..bridge.named_variants import resolve
    from ..passkit.spelling import flat_form, split_list
    names = split_list(args.variants)
    if not names or names[0].split("@")[0] != "baseline":
        names = ["baseline"] + names
    entries, labels = [], set()
    for name in names:
        ref, _, config = name.partition("@")
        config = config or args.config
        if spec is not None and config is not None:
            from ..kernels import KernelError
            try:
                spec.config(config)
            except KernelError as e:
                raise UsageError(str(e)) from None
        elif spec is None and config is not None:
            raise UsageError("a captured launch is replayed with its recorded options: no @CONFIG or --config")
        flat = flat_form(ref) + (f"@{name.partition('@')[2]}" if "@" in name else "")   # the label it had before braces
        label = flat.replace(":", "_").replace("+", "_").replace("@", "_").replace("=", "-")
        if label in labels:
            raise UsageError(f"--variants names {name!r} twice")
        labels.add(label)
        try:
            variant = resolve(ref, target)
        except ValueError as e:
            raise UsageError(str(e)) from None
        entries.append({"label": label, "variant": variant.to_json(), "config": config})
    return entries


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def cmd_profile(args) -> int:
    from ..program.launches import LaunchError, is_launch_ref, load
    from ..profile.report import MODES, collect, modes_for, render, run_sessions
    from ..profile.run import Job
    from ..base.targets import current_target
    if not args.compile_only and not _has_gpu():
        raise UsageError("irlab profile runs Proton on a GPU and this machine has none (install torch with CUDA or "
                         "ROCm: pip install 'irlab[gpu]'); --compile-only checks the profiled builds without one")
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise UsageError(f"--modes: {', '.join(bad) or 'none given'}: choose from {', '.join(MODES)}")
    from ..passkit.pass_api import PassError
    from ..passkit.registry import make_pass
    try:
        make_pass("proton-scopes", {"scopes": args.scopes})
    except PassError as e:
        raise UsageError(f"--scopes: {e}") from None
    spec = None
    if is_launch_ref(args.kernel):
        try:
            launch = load(args.kernel)
        except LaunchError as e:
            raise UsageError(str(e)) from None
        if args.shape:
            raise UsageError("a captured launch is replayed as recorded: no --shape")
        target = target_arg(args.target) if args.target else (current_target() or launch.target)
        name = launch.name
    else:
        from .common import kernel_arg
        spec = kernel_arg(args.kernel)
        target = target_arg(args.target) if args.target else current_target()
        if target is None:
            raise UsageError("give --target with --compile-only on a machine without a GPU")
        if not spec.supports(target.name):
            raise UsageError(f"kernel {spec.name} cannot be compiled for {target}: {spec.unsupported[target.name]}")
        if not args.compile_only and not spec.timeable:
            raise UsageError(f"kernel {spec.name} cannot be run: its KernelSpec gives no make_inputs and launch_args")
        name = spec.name
    shape = parse_shape(args.shape, list(spec.default_shape)) if args.shape and spec else None
    if spec is not None and shape is not None:
        from ..kernels import KernelError
        try:
            spec.shape(shape)
        except KernelError as e:
            raise UsageError(str(e)) from None
    entries = _entries(args, target, spec)
    if spec is not None and not args.compile_only:   # a misnamed launch argument is said before any GPU work
        from ..timing.gate import check_names
        check_names(spec, spec.shape(shape), spec.config(getattr(args, "config", None)), target)
    out = Path(args.out or f"runs/profile/{name}-{time.strftime('%Y%m%d-%H%M%S')}")
    job = Job(args.kernel, shape, target.name, entries, str(out), launches=args.launches, scopes=args.scopes,
              scope_buffer=args.scope_buffer, pc_interval=args.pc_interval)
    if args.compile_only:
        from ..profile.check import compile_check
        return compile_check(job, print)
    modes, notes = modes_for(target, modes)
    with executor_from_args(args) as executor:
        log = lambda m: err(f"irlab profile: {m}")   # noqa: E731
        results = run_sessions(job, modes, log=log, gpu_model=executor.choose_model(args.gpu_model, log))
    data = collect(job, results)
    from ..executor import Device
    notes = notes + ["sessions ran on: " + ", ".join(
        f"{mode} {Device.from_json(r['device']).label()} ({r['device'].get('name') or 'unknown GPU'})"
        for mode, r in results.items() if r.get("device"))]
    from ..base.jsonio import write_json
    from ..timing.gpu import environment
    env = environment()
    text = render(job, data, env, "irlab profile " + " ".join(_argv(args)), notes)
    (out / "README.md").write_text(text)
    write_json(out / "results.json", {"env": env, "job": job.to_json(), "data": data})
    print(text)
    print(f"irlab profile: results in {out}/README.md")
    return EXIT_FAIL if data["errors"] else EXIT_OK


def _argv(args) -> list[str]:
    out = ["--kernel", args.kernel, "--variants", args.variants]
    for flag, value in (("--shape", args.shape), ("--config", args.config), ("--target", args.target)):
        if value:
            out += [flag, value]
    if args.scopes != "kloop,epilogue":
        out += ["--scopes", args.scopes]
    if args.modes != "time,pcsampling,scopes":
        out += ["--modes", args.modes]
    return out
