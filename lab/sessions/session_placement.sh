#!/usr/bin/env bash
# GPU session (device tool, one H100 or H200): is a difference called between identical binaries
# once one of them has input tensors of its own? A copy of a kernel file given as --reference read
# 0.4% slower than the baseline on Liger's RMSNorm in all 15 rounds (input placement, which the A/A
# control on the same tensors cannot see). The runner now gives such a copy the cell's tensors and
# rotates the placement of entries with inputs of their own (irlab.timing.placement).
#   IRLAB_COMMIT=<sha> bash lab/sessions/session_placement.sh 1|2
# 1: lab.placement_check over 6 memory-bound kernels (softmax, vector_add, row_sum, layer_norm, an
#    in-place add, an RMSNorm forward; Liger's RMSNorm too where liger_kernel is installed), each
#    against a copy of its file and against itself on tensors of its own, graph and do_bench, 15 rounds
# 2: irlab calibrate on the memory-bound cases (its new "own inputs" A/A column), and the GPU tests
#    of does-not-fit and placement
# Acceptance: "0 called difference(s) between identical binaries" (placement_check exits 0), and no
# "own inputs" comparison called in the calibration table.
# Results: $OUT/placement<part>.tgz (README, JSONL per folder), logs in $OUT/session.log.
set -u
export PYTHONUNBUFFERED=1 TRITON_PRINT_AUTOTUNING=0 IRLAB_STALL_S=${IRLAB_STALL_S:-120}
R=/tmp/placement; rm -rf $R; mkdir -p $R
run() { local name=$1; shift; echo "== $name: $*" | tee -a $OUT/session.log; local t0=$(date +%s)
        timeout ${LIMIT:-300} "$@" > $R/$name.log 2>&1; local rc=$?
        echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log; tail -4 $R/$name.log | tee -a $OUT/session.log; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee -a $OUT/session.log
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" | tee -a $OUT/session.log
case "${1:-1}" in
1) LIMIT=560 run placement_check python3 -m lab.placement_check --out $R/placement_check --rounds 15 \
     --methods graph,do_bench ;;
2) LIMIT=330 run calibrate irlab calibrate --cases rowsum-small,layernorm-small,softmax,layernorm,add,rowsum \
     --methods graph --rounds 15 --out $R/calibrate
   LIMIT=220 run gpu_tests python3 -m pytest -q -p no:cacheprovider tests/test_gpu_fit_and_placement.py ;;
esac
cp $R/*.log $OUT/ 2>/dev/null
(cd $R && find . -name cache -prune -o -type f -print | tar czf $OUT/placement${1:-1}.tgz -T -)
ls -la $OUT
