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
source "$(dirname "$0")/common.sh"
export IRLAB_STALL_S=${IRLAB_STALL_S:-120}
session_dir /tmp/placement
gpu_header
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
