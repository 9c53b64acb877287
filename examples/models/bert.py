"""A 4-layer BERT encoder (random weights built from its config: nothing downloaded) under
``torch.compile(mode="max-autotune-no-cudagraphs")``: the encoder beside the decoder of
``examples/models/llama.py``, for model-scale searches over two families (bidirectional attention,
GELU MLPs, LayerNorm instead of RMSNorm, no causal mask or rotary tables).

    TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 python -m irlab capture --profile --out runs/bert -- \\
        examples/models/bert.py --triton-gemms
    python -m irlab search-model runs/bert -- examples/models/bert.py --triton-gemms --steps 8

The forward calls are the program's work (``irlab.region("step")``, the first left out as it
compiles); the last hidden states are checked between the arms of an A/B (``irlab.check``).
``--triton-gemms`` makes every GEMM a Triton template (Inductor picks cuBLAS for them otherwise).
``--steps`` changes only how often the compiled model is called, not what it compiles: a capture
with 3 steps and an A/B with 8 run the same kernels.

Without a GPU, ``--device cpu --mode eager --tiny`` runs the same program on a tiny config (the
script checks itself; nothing is compiled).
"""
import torch
from transformers import BertConfig, BertModel

import irlab
from model_args import model_args

args = model_args(batch=16)

if args.tiny:
    config = BertConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, max_position_embeddings=128)
else:
    config = BertConfig(vocab_size=8192, hidden_size=1024, intermediate_size=4096, num_hidden_layers=4,
                        num_attention_heads=16, max_position_embeddings=512)
torch.manual_seed(0)
dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
model = BertModel(config, add_pooling_layer=False).to(device=args.device, dtype=dtype).eval()
run = model if args.mode == "eager" else torch.compile(model, mode=args.mode)
seq = min(args.seq, config.max_position_embeddings)
ids = torch.randint(0, config.vocab_size, (args.batch, seq), device=args.device)
mask = torch.ones_like(ids)
with torch.no_grad():
    for _ in range(args.steps):
        with irlab.region("step"):
            hidden = run(input_ids=ids, attention_mask=mask).last_hidden_state
if args.device == "cuda":
    torch.cuda.synchronize()
irlab.check("hidden", hidden)
print(f"{config.num_hidden_layers}-layer BERT encoder, batch {args.batch} x {seq} tokens ({args.mode}"
      f"{', Triton GEMMs' if args.triton_gemms else ''}): hidden {tuple(hidden.shape)}, "
      f"finite: {bool(hidden.isfinite().all())}")
