#!/usr/bin/env bash
# GPU session (device tool, nvidia-h200): the headline tables recorded before the present timing
# method, measured again with it (entries of a cell on the same buffers with the same launches per
# sample, random order per round, Hodges-Lehmann estimate with a signed-rank interval, nothing
# called inside the cell's A/A floor or below irlab.base.stats.MIN_EFFECT). `identity` rides along
# in every sweep: it is the baseline's own binary, reported "same binary: no change" and not timed.
#   IRLAB_COMMIT=<sha> bash lab/sessions/session_remeasure.sh 1|2|3
# 1: optimize_epilogue and interleave_global_loads (the experiments' timed parts, cuda:90)
# 2: the walkthrough kernel (ab_user_kernel), the GEMM candidates
# 3: the warp-specialized candidates (gemm_candidates_ws), the walkthrough kernel's tritonparse trace
#    (ab_trace; tritonparse and its dependencies zstandard, orjson, rich installed)
# Results: $OUT/remeasure<part>.tgz (README, JSONL, CSV per folder), logs in $OUT/session.log.
source "$(dirname "$0")/common.sh"
export IRLAB_STALL_S=${IRLAB_STALL_S:-90}
session_dir /tmp/remeasure
gpu_header
TRACE=tests/data/traces/bias_relu_gemm.h200.ndjson.gz
case "${1:-1}" in
1) LIMIT=280 run epilogue irlab experiments epilogue --targets cuda:90 --out $R/optimize_epilogue
   LIMIT=240 run interleave irlab experiments interleave --targets cuda:90 --out $R/interleave_global_loads ;;
2) LIMIT=150 run ab_user_kernel irlab ab --kernel docs/walkthrough/bias_relu_gemm.py --variants optimize-epilogue,identity \
     --shapes 4096x4096x4096 --out $R/ab_user_kernel
   LIMIT=300 run candidates python3 -m lab.gemm_candidates --targets cuda:90 --rounds 15 --out $R/gemm_candidates ;;
3) LIMIT=300 run candidates_ws python3 -m lab.gemm_candidates --only tma-ws,tma-ws-s4 --targets cuda:90 \
     --rounds 15 --out $R/gemm_candidates_ws
   LIMIT=90 run ab_trace irlab ab --kernel "$TRACE#matmul_bias_relu:0" --variants optimize-epilogue,identity --out $R/ab_trace ;;
esac
cp $R/*.log $OUT/ 2>/dev/null
(cd $R && find . -name cache -prune -o -type f -print | tar czf $OUT/remeasure${1:-1}.tgz -T -)
ls -la $OUT
