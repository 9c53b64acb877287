"""A 2-layer Llama (random weights built from its config: nothing downloaded) under
``torch.compile(mode="max-autotune-no-cudagraphs")``, run three times: the program irlab captures
on the GPU machine for its test data (tests/data/captures/llama2-h200). The first call compiles
and autotunes (pointwise, reduction and persistent-reduction kernels, GEMM templates and their
autotuning candidates); the other two are the program's steady state.

    TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 python -m irlab capture --profile --out runs/llama2 -- \\
        benchmarks/device/capture_llama.py
    python -m irlab top runs/llama2
    python -m irlab trim-capture runs/llama2 --out tests/data/captures/llama2-h200

``TORCHINDUCTOR_FORCE_DISABLE_CACHES=1`` makes Inductor compile and autotune again even where an
earlier run left its caches behind (otherwise the capture sees no autotuning).
"""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

config = LlamaConfig(vocab_size=8192, hidden_size=1024, intermediate_size=2816, num_hidden_layers=2,
                     num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=1024)
torch.manual_seed(0)
model = LlamaForCausalLM(config).to(device="cuda", dtype=torch.bfloat16).eval()
compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
ids = torch.randint(0, config.vocab_size, (4, 512), device="cuda")
with torch.no_grad():
    for _ in range(3):
        logits = compiled(ids).logits
torch.cuda.synchronize()
print(f"2-layer Llama, batch 4 x 512 tokens: logits {tuple(logits.shape)}, finite: {bool(logits.isfinite().all())}")
