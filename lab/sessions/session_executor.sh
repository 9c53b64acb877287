#!/usr/bin/env bash
# GPU session (device tool, nvidia-h100-x4; about 6 minutes): the executor's scaling over the GPUs of
# one host (issue 31). The executor's GPU test first (cells name their GPU; each worker sees its
# own), then benchmarks/bench_executor_scaling.py: irlab ab, search and verify on 1, 2 and 4 GPUs,
# wall time and speedup, per-cell overhead, verdicts against the one-GPU run. Results in
# $OUT/scaling/ (results.json, README.md) and $OUT/session.log; each run's folder (without its
# compile caches) in $OUT/scaling_runs.tgz.
#   bash lab/sessions/session_executor.sh   (from the repository root, irlab's dependencies installed)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
R=/tmp/session_executor; rm -rf $R; mkdir -p $R $OUT/scaling
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" | tee -a $OUT/session.log
nvidia-smi -L | tee -a $OUT/session.log
t0=$(date +%s); timeout 120 python3 -m pytest -q -m gpu tests/test_gpu_executor.py -p no:cacheprovider > $R/gpu_test.log 2>&1
echo "== executor gpu test: exit $? after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log; tail -3 $R/gpu_test.log | tee -a $OUT/session.log
t0=$(date +%s); timeout 540 python3 benchmarks/bench_executor_scaling.py --out $R/scaling --timeout 240 2>&1 | tee $R/bench.log | tail -40 | tee -a $OUT/session.log
echo "== scaling benchmark: exit ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log
cp $R/scaling/results.json $R/scaling/README.md $OUT/scaling/ 2>/dev/null
(cd $R && find . -name cache -prune -o -type f -print | tar czf $OUT/scaling_runs.tgz -T -)
