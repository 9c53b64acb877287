#!/usr/bin/env bash
# GPU session (device tool; H100 or H200): the persistent-TMA transformation (issue 21). Parts,
# each sized for one device call (10 minutes):
#   correct  every persistent named variant against the baseline on four gemm_fp16 configs at
#            1000^3, 1040x1008x1072 (remainders on every axis) and 4096^3 (several tiles per
#            program); every persistent candidate of lab.gemm_candidates on its own tile
#            config at 1040x1008x1072 and 4160x4000x1072; gemm_persistent_tma's own check; the
#            fingerprint of an output over ab-model's size limit; irlab verify on every config
#   ab       gemm_fp16's persistent-tma and persistent-tma-flatten against Triton's best config
#            of gemm_fp16 (among the configs that won earlier searches: 128x256x64-w8-s3 was the
#            best at every seed shape), with irlab's tutorial-09-style gemm_persistent_tma (its
#            best config) and cuBLAS in the same headline, on the three seed shapes
#   ws       the GPU tests of the warp-specialized persistent variants alone
#   profile  Proton profiles (kernel time, PC sampling on the hot loop, kloop/epilogue scopes per
#            warp) of hypotheses H1-H7 (about 35 s each on an H100)
#   profile2 the same for H8, H11, H14, H15 and H21-H26 (H16, H19, H20: docs/results/persistent_tma/)
#   profile3 the same for H9 and H10 (statically negative, never timed) and, on this GPU, H16, H19, H20
#   search2  a K step of 128 (H27-H29): GPU tests on remainder shapes, timed against the best
#            config, profiled
#   readme   the README's GPU blocks (tests/test_readme.py -m gpu)
#   candidates  the persistent candidates of lab.gemm_candidates (persistent-flat = H20,
#            persistent-split-s4 = H21, persistent-ws = H22, and the searches on top of them,
#            H23-H26: rasterization, a 256x128 tile, warp specialization with a 4-deep ring, 2-CTA
#            clusters) against the best config and cuBLAS
# Each step has a time limit (SIGINT, so irlab writes what it finished) and prints its exit status.
# Several parts may share one call, run in the order given.
# Results: $OUT/session.log, $OUT/<step>.log, $OUT/session_persist.tgz.
#   bash lab/sessions/session_persist.sh PART [PART...]   (from the repository root)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PARTS=${*:-correct}
for PART in $PARTS; do
  case $PART in correct|ab|ws|profile|profile2|profile3|candidates|search2|readme) ;;
    *) echo "usage: $0 correct|ab|ws|profile|profile2|profile3|candidates|search2|readme [...]" >&2; exit 2;; esac
done
R=/tmp/session_persist; rm -rf $R; mkdir -p $R
# every step ends (SIGINT) before the call's own limit: CALL_LIMIT seconds from now, 580 by default
END=$(( $(date +%s) + ${CALL_LIMIT:-580} ))
step() { local name=$1 limit=$2; shift 2; local left=$(( END - $(date +%s) - 25 ))
         [ $left -lt $limit ] && limit=$left
         if [ $limit -lt 30 ]; then echo "== $name: skipped, no time left in this call" | tee -a $OUT/session.log; return; fi
         echo "== $name (limit $limit s): $*" | tee -a $OUT/session.log; local t0=$(date +%s)
         timeout -s INT -k 20 $limit "$@" > $R/$name.log 2>&1; local rc=$?
         echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log
         tail -12 $R/$name.log | tee -a $OUT/session.log; }
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpu', torch.cuda.get_device_name())" | tee -a $OUT/session.log
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee -a $OUT/session.log
SHAPES='4096x4096x4096;8192x8192x8192;4864x4096x4160'
for PART in $PARTS; do
if [ "$PART" = correct ]; then
  step tests 300 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_persistent_tiles.py tests/test_persistent_gemm_kernel.py \
    tests/test_gemm_candidates.py tests/test_model_ab.py
  step verify 200 python3 -m irlab verify --kernel gemm_fp16 --pass persistent-tiles \
    --configs all --out $R/verify
fi
if [ "$PART" = ab ]; then
  # persistent-tma (unflattened) is recorded in docs/results/persistent_tma/ (1-3% behind tutorial 09);
  # the two finalists of the baseline's screen are timed head to head for Triton's best
  step ab 560 python3 -m irlab ab --kernel gemm_fp16 \
    --variants persistent-tma-flatten,persistent-tma-split \
    --configs 128x256x64-w8,128x128x64-w8 --stages 3,4 \
    --reference gemm_persistent_tma --shapes "$SHAPES" --rounds 30 --screen-rounds 5 --out $R/ab
fi
if [ "$PART" = ws ]; then
  step tests-ws 200 python3 -m pytest -q -rxX -m gpu -p no:cacheprovider tests/test_persistent_tiles.py \
    tests/test_gemm_candidates.py -k "ws"
fi
if [ "$PART" = profile ]; then
  step profile 560 python3 -m lab.profile_hypotheses --only H1,H2,H3,H4,H5,H6,H7 --shape 4096x4096x4096 \
    --out $R/profile
fi
if [ "$PART" = candidates ]; then
  step candidates 560 python3 -m lab.gemm_candidates --rounds 15 --out $R/candidates --only \
    persistent-flat,persistent-split-s4,persistent-ws,persistent-flat-g4,persistent-flat-g16,persistent-flat-256x128,persistent-split,persistent-ws-split-s4,persistent-flat-ctas2
fi
if [ "$PART" = profile3 ]; then
  step profile3 400 python3 -m lab.profile_hypotheses --only H9,H10,H16,H19,H20 --shape 4096x4096x4096 \
    --out $R/profile3
fi
if [ "$PART" = search2 ]; then
  step tests-search2 150 python3 -m pytest -q -rxX -m gpu -p no:cacheprovider tests/test_gemm_candidates.py \
    -k "bk128 or 128x128"
  step candidates-search2 240 python3 -m lab.gemm_candidates --rounds 20 --out $R/candidates-search2 --only \
    persistent-flat,persistent-split-bk128,base-bk128,persistent-flat-128x128-s4
  step profile-search2 200 python3 -m lab.profile_hypotheses --only H27,H28,H29 --shape 4096x4096x4096 \
    --out $R/profile-search2
fi
if [ "$PART" = readme ]; then
  step readme 500 python3 -m pytest -q -rs -m gpu -p no:cacheprovider tests/test_readme.py
fi
if [ "$PART" = profile2 ]; then
  step profile2 560 python3 -m lab.profile_hypotheses --only H8,H11,H14,H15,H21,H22,H23,H24,H25,H26 --shape 4096x4096x4096 \
    --out $R/profile2
fi
done
(cd $R && find . -type f -size -4M \( -name '*.md' -o -name '*.json' -o -name '*.jsonl' -o -name '*.csv' -o -name '*.png' \
  -o -name '*.log' \) -print | tar czf $OUT/session_persist.tgz -T -)
cp $R/*.log $OUT/ 2>/dev/null   # every step's log, named after its step (each name used once)
ls -la $OUT
