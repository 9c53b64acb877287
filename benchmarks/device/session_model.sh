#!/usr/bin/env bash
# GPU session (device tool, nvidia-h200): a torch.compile'd model's kernels end to end (issue 20).
# 1. capture the 2-layer Llama (benchmarks/device/capture_llama.py, max-autotune) with --profile;
# 2. irlab top; 3. report and ab of its hottest kernel with optimize-epilogue and identity;
# 4. the model-level A/B of optimize-epilogue (default mode: no autotuning, so each fresh process
#    starts in seconds once its arm's caches are warm), 10 rounds, per-kernel breakdown and
#    outputs compared launch for launch. Each step has a timeout and prints its exit status;
#    about 6-8 minutes on an H200. Results: $OUT/session.log, $OUT/*.log, $OUT/session_model.tgz.
#   bash benchmarks/device/session_model.sh [all|kernels|model]   (from the repository root, irlab's
#   dependencies installed; kernels: steps 1-3, model: step 4 alone)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PART=${1:-all}
R=/tmp/session_model; rm -rf $R; mkdir -p $R
step() { local name=$1 limit=$2; shift 2; echo "== $name: $*" | tee -a $OUT/session.log; local t0=$(date +%s)
         timeout $limit "$@" > $R/$name.log 2>&1; local rc=$?
         echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log
         tail -8 $R/$name.log | tee -a $OUT/session.log; }
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpu', torch.cuda.get_device_name())" | tee -a $OUT/session.log
if [ "$PART" != model ]; then
TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 step capture 200 python3 -m irlab capture --profile --quiet --out $R/llama \
  -- benchmarks/device/capture_llama.py
step top 30 python3 -m irlab top $R/llama --json $R/top.json
step report 90 python3 -m irlab report $R/llama --vs optimize-epilogue
step ab 150 python3 -m irlab ab --kernel $R/llama --variants optimize-epilogue,identity --rounds 10 --screen-rounds 3 \
  --out $R/ab
fi
[ "$PART" != kernels ] && step ab_model 330 python3 -m irlab ab-model --variant optimize-epilogue --rounds 10 --no-aa --timeout 90 --out $R/ab_model \
  -- benchmarks/device/capture_llama.py --mode default
cp $R/ab_model/README.md $OUT/ab_model.md 2>/dev/null
(cd $R && find . \( -name cache -o -name tensors -o -name outputs \) -prune -o -type f -size -4M -print \
  | tar czf $OUT/session_model.tgz -T -)
for f in capture top report ab ab_model; do [ -f $R/$f.log ] && cp $R/$f.log $OUT/$f.log; done
ls -la $OUT
