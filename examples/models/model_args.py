"""The command line the example models share (``bert.py``, ``llama.py``): how the model is compiled
(``--mode``, ``--triton-gemms``), how much work a call is (``--batch``, ``--seq``, ``--steps``) and
where it runs (``--device``, ``--tiny``). Imported from beside the scripts (a script's folder is
first on ``sys.path``, under python and under irlab alike)."""
import argparse


def model_args(batch: int, argv=None) -> argparse.Namespace:
    """The parsed options, ``batch`` sequences per call by default. ``--triton-gemms`` is applied
    here (Inductor's GEMM backends restricted to Triton) before the model is compiled."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="max-autotune-no-cudagraphs", help="torch.compile mode, or eager (no compile)")
    parser.add_argument("--triton-gemms", action="store_true",
                        help="GEMMs as Triton templates only (max_autotune_gemm_backends = TRITON), not cuBLAS")
    parser.add_argument("--steps", type=int, default=3, help="calls of the compiled model (the first compiles)")
    parser.add_argument("--batch", type=int, default=batch, help="sequences per call")
    parser.add_argument("--seq", type=int, default=512, help="tokens per sequence")
    parser.add_argument("--device", default="cuda", help="cuda, or cpu (with --mode eager: a check without a GPU)")
    parser.add_argument("--tiny", action="store_true", help="a tiny config (a check of the program, not a workload)")
    args = parser.parse_args(argv)
    if args.triton_gemms:
        import torch._inductor.config as inductor_config
        inductor_config.max_autotune_gemm_backends = "TRITON"
    return args
