#!/usr/bin/env bash
# GPU session B (device tool, nvidia-h200-x2): the GPU tests, `irlab search` over the GEMM
# hypotheses' passes on the tutorial config space, and the GEMM candidates beyond the ranked eight.
# Results land in $OUT/session_b.tgz and $OUT/*.log.
#   IRLAB_COMMIT=<sha> bash lab/sessions/session_b.sh
source "$(dirname "$0")/common.sh"
export IRLAB_STALL_S=${IRLAB_STALL_S:-90} TAIL=3
session_dir /tmp/session_b
gpu_header $R/nvidia-smi.csv
LIMIT=200 run gpu_tests python3 -m pytest -q -m gpu tests/ -p no:cacheprovider
LIMIT=240 run search_gemm python3 -m irlab search --kernel gemm_fp16 --target cuda:90 \
  --variants descriptor-loads,descriptor-loads:store=true,descriptor-loads+loop-attributes:warp_specialize=true,wgmma-wait-pendings:pendings=0 \
  --shapes 4096x4096x4096,4864x4096x4160 --stages 3,4 --out $R/search_gemm
LIMIT=120 run candidates_extra python3 -m lab.gemm_candidates --only tma-ws-s2,base-g16,base-g4,tma-ws-g16 \
  --targets cuda:90 --rounds 15 --out $R/gemm_candidates_extra
cp $R/*.log $OUT/ 2>/dev/null
(cd $R && find . -name cache -prune -o -type f -print | tar czf $OUT/session_b.tgz -T -)
ls -la $OUT
