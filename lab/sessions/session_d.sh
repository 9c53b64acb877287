#!/usr/bin/env bash
# GPU session D (device tool, nvidia-h200-x2): Hopper warp specialization with the coordinates
# descriptor-loads now gives its loads (tma-ws, tma-ws-s4 against Triton's best config, the three
# seed shapes), and the hand-written kernel whose offsets are shared (HOISTED: expected wrong).
#   IRLAB_COMMIT=<sha> bash lab/sessions/session_d.sh
source "$(dirname "$0")/common.sh"
export IRLAB_STALL_S=${IRLAB_STALL_S:-90} TAIL=6
mkdir -p /tmp/bin && ln -sf "$(command -v python3)" /tmp/bin/python && export PATH=/tmp/site/bin:/tmp/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $OUT/nvidia-smi.csv
LIMIT=90 run hoisted irlab ab --kernel examples/ws_gemm.py:HOISTED --variants optimize-epilogue \
  --configs ws-w4 --shapes 4096x4096x4096 --rounds 3 --out $OUT/ws_hoisted
LIMIT=${CAND_LIMIT:-300} run candidates python3 -m lab.gemm_candidates --only tma-ws,tma-ws-s4 \
  --targets cuda:90 --rounds 15 --out $OUT/gemm_candidates_ws
rm -rf $OUT/*/cache $OUT/*/timed/cache
ls -la $OUT
