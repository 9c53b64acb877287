#!/usr/bin/env bash
# One GPU session (device tool, nvidia-h200-x2): the GPU tests, a real tritonparse trace, irlab ab on
# the walkthrough's own kernel and on that trace, and the two timed experiments against Triton's tuned
# best. Everything lands in $OUT/session_a.tgz (results) and $OUT/*.log.
#   IRLAB_COMMIT=<sha> bash lab/sessions/session_a.sh 1   (then 2: the two timed experiments)
source "$(dirname "$0")/common.sh"
session_dir /tmp/session_a
export TAIL=3
gpu_header $R/nvidia-smi.csv
PART=${1:-1}
if [ "$PART" = 1 ]; then
  LIMIT=200 run gpu_tests python3 -m pytest -q -m gpu tests/ -p no:cacheprovider
  LIMIT=60 run record_trace python3 examples/record_trace.py $R/trace
  TRACE=$(ls $R/trace/dedicated_log_triton_trace_* | head -1)
  LIMIT=90 run ab_trace python3 -m irlab ab --kernel "$TRACE#matmul_bias_relu:0" --variants optimize-epilogue --rounds 11 --out $R/ab_trace
  LIMIT=200 run ab_user_kernel python3 -m irlab ab --kernel docs/walkthrough/bias_relu_gemm.py --variants optimize-epilogue --shapes 4096x4096x4096 --out $R/ab_user_kernel
else
  LIMIT=330 run epilogue python3 -m irlab experiments epilogue --targets cuda:90 --out $R/optimize_epilogue
  LIMIT=180 run interleave python3 -m irlab experiments interleave --targets cuda:90 --out $R/interleave_global_loads
fi
cp $R/*.log $OUT/ 2>/dev/null
(cd $R && find . -name cache -prune -o -type f -print | tar czf $OUT/session_a$PART.tgz -T -)
ls -la $OUT
