"""A 2-layer Llama (random weights built from its config: nothing downloaded) under
``torch.compile(mode="max-autotune-no-cudagraphs")``, run three times: the program irlab captures
on the GPU machine for its test data (tests/data/captures/llama2-h100). The first call compiles
and autotunes (pointwise, reduction and persistent-reduction kernels, GEMM templates and their
autotuning candidates); the other two are the program's steady state.

    TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 python -m irlab capture --profile --out runs/llama2 -- \\
        examples/models/llama.py
    python -m irlab top runs/llama2
    python -m irlab trim-capture runs/llama2 --out tests/data/captures/llama2-h100

``TORCHINDUCTOR_FORCE_DISABLE_CACHES=1`` makes Inductor compile and autotune again even where an
earlier run left its caches behind (otherwise the capture sees no autotuning).

By default every choice is Inductor's own (the realistic program): on an H100 max-autotune picked
cuBLAS for every GEMM, so the captured Triton kernels are the small pointwise and reduction ones
around them and the program's GPU time is almost all cuBLAS. ``--triton-gemms`` restricts the GEMM
backends to Triton's templates (``torch._inductor.config.max_autotune_gemm_backends = "TRITON"``):
every matmul of the model is then a ``triton_tem_`` kernel that autotuning chose among Triton
configs, the data for GEMM passes (optimize-epilogue, the interleaved load schedule) on a real
model:

    TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 python -m irlab capture --profile --out runs/llama2-triton -- \
        examples/models/llama.py --triton-gemms

A profiled capture files the kernels that autotuning launches besides Triton's (the L2-flushing
buffer fills before every timed run, cuBLAS candidates) under autotuning, not under the program's
time (``irlab top`` says how much that was).

The steady-state calls are the program's work (``irlab.region("step")``, the first call left out
as it compiles): ``irlab top`` ranks the kernels they launched, not the weights' initialization
(``--whole-program`` ranks everything), and ``irlab ab-model`` times them; the logits are checked
between its arms (``irlab.check``). Outside irlab both do nothing. The model-level A/B of a GEMM
pass needs the Triton GEMMs, and a GPU-bound forward call (a launch-bound one's region times the
CPU that launches):

    python -m irlab ab-model --variant optimize-epilogue -- examples/models/llama.py \
        --triton-gemms --steps 8 --batch 16 --seq 1024

``--mode default`` compiles without autotuning (no GEMM templates: cuBLAS). Without a GPU,
``--device cpu --mode eager --tiny`` runs the same program on a tiny config (nothing is compiled).
"""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

import irlab
from model_args import model_args

args = model_args(batch=4)
mode = args.mode

if args.tiny:
    config = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128)
else:
    config = LlamaConfig(vocab_size=8192, hidden_size=1024, intermediate_size=2816, num_hidden_layers=2,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=1024)
torch.manual_seed(0)
dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
model = LlamaForCausalLM(config).to(device=args.device, dtype=dtype).eval()
compiled = model if mode == "eager" else torch.compile(model, mode=mode)
ids = torch.randint(0, config.vocab_size, (args.batch, min(args.seq, config.max_position_embeddings)),
                    device=args.device)
with torch.no_grad():
    for _ in range(args.steps):
        with irlab.region("step"):
            logits = compiled(ids).logits
if args.device == "cuda":
    torch.cuda.synchronize()
irlab.check("logits", logits)
print(f"2-layer Llama, batch {args.batch} x {ids.shape[1]} tokens ({mode}{', Triton GEMMs' if args.triton_gemms else ''}): "
      f"logits {tuple(logits.shape)}, finite: {bool(logits.isfinite().all())}")
