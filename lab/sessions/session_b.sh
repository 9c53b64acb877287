#!/usr/bin/env bash
# GPU session B (device tool, nvidia-h200-x2): the GPU tests, `irlab search` over the GEMM
# hypotheses' passes on the tutorial config space, and the GEMM candidates beyond the ranked eight.
# Results land in $OUT/session_b.tgz and $OUT/*.log.
#   IRLAB_COMMIT=<sha> bash lab/sessions/session_b.sh
set -u
export PYTHONUNBUFFERED=1 IRLAB_STALL_S=${IRLAB_STALL_S:-90}
R=/tmp/session_b; rm -rf $R; mkdir -p $R
run() { local name=$1; shift; echo "== $name: $*" | tee -a $OUT/session.log; local t0=$(date +%s)
        timeout ${LIMIT:-900} "$@" > $R/$name.log 2>&1; local rc=$?
        echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log; tail -3 $R/$name.log; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $R/nvidia-smi.csv
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" | tee -a $OUT/session.log
LIMIT=200 run gpu_tests python3 -m pytest -q -m gpu tests/ -p no:cacheprovider
LIMIT=240 run search_gemm python3 -m irlab search --kernel gemm_fp16 --target cuda:90 \
  --variants descriptor-loads,descriptor-loads:store=true,descriptor-loads+loop-attributes:warp_specialize=true,wgmma-wait-pendings:pendings=0 \
  --shapes 4096x4096x4096,4864x4096x4160 --stages 3,4 --out $R/search_gemm
LIMIT=120 run candidates_extra python3 -m lab.gemm_candidates --only tma-ws-s2,base-g16,base-g4,tma-ws-g16 \
  --targets cuda:90 --rounds 15 --out $R/gemm_candidates_extra
cp $R/*.log $OUT/ 2>/dev/null
(cd $R && find . -name cache -prune -o -type f -print | tar czf $OUT/session_b.tgz -T -)
ls -la $OUT
