#!/usr/bin/env bash
# GPU session of issues 29 and 31 (device tool). Installs irlab regularly (the carried .whl/ wheels of
# lark and filecheck, then irlab itself into /tmp/site), then runs one part:
#
#   scaling  (nvidia-h100-x4) the executor's GPU test and benchmarks/bench_executor_scaling.py (ab,
#            search, verify on 1, 2, 4 GPUs), then the GPU tests of the round, four files side by
#            side, one GPU each, in the time left
#   tests    (one GPU) the GPU tests of the round one after another
#   bench    (nvidia-h100-x4) benchmarks/bench_executor_scaling.py alone, started in the background
#            (setsid) so that it outlives one device call: call again with the same part, back to
#            back, until session.log says "bench: finished"; each call waits for it as long as it can
#            and sends back the results so far; then the round's GPU tests side by side, one GPU each
#   checks   (one GPU) lab.placement_check (identical binaries, own inputs), verify of a GEMM
#            whose configs include some over the GPU's shared memory (lab/kernels/gemm_big_tiles.py),
#            calibrate with the "own inputs" entry
#
#   bash lab/sessions/session_round5.sh scaling|tests|checks
# Everything lands in $OUT (at most 8 files come back): session.log, logs.tgz (every step's log), the
# results folders as .tgz.
set -u
PART=${1:?usage: session_round5.sh scaling|bench|tests|checks}
T0=$(date +%s)
left() { echo $(( ${CALL_LIMIT:-575} - ($(date +%s) - T0) )); }
R=/tmp/round5-$PART; [ "$PART" = bench ] || rm -rf $R; mkdir -p $R
# (installed once per machine: a second part started beside the first finds it there)
[ -d /tmp/site/irlab ] || python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site \
  .whl/*.whl . > $R/install.log 2>&1 || { echo "install failed"; tail -20 $R/install.log; exit 1; }
export PATH=/tmp/site/bin:$PATH PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 TRITON_PRINT_AUTOTUNING=0
trap '(cd $R && tar czf $OUT/logs.tgz *.log 2>/dev/null)' EXIT
log() { echo "$*" | tee -a $OUT/session.log; }
step() { local name=$1 limit=$2; shift 2
         [ "$limit" -gt 15 ] || { log "== $name: skipped, $limit s left"; return 1; }
         log "== $name (limit $limit s): $*"; local t0=$(date +%s)
         timeout -s INT -k 20 $limit "$@" > $R/$name.log 2>&1; local rc=$?
         log "== $name: exit $rc after $(( $(date +%s) - t0 )) s"; tail -6 $R/$name.log | tee -a $OUT/session.log
         return $rc; }
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv | tee -a $OUT/session.log
python3 -c "import torch, triton, irlab; print('torch', torch.__version__, 'triton', triton.__version__, 'irlab', irlab.__file__)" \
  | tee -a $OUT/session.log
PYTEST="python3 -m pytest -q -p no:cacheprovider -n 0 -m gpu"
# the GPU tests of this round: each runs on its own (one GPU)
GPU_TESTS=("tests/test_persistent_tiles.py" "tests/test_gpu_fit_and_placement.py tests/test_gpu_timing.py"
           "tests/test_differential.py tests/test_search_model.py tests/test_gpu_executor.py"
           "tests/test_gpu_bridge.py tests/test_gpu_search.py")

gpu_tests_side_by_side() {   # the round's GPU tests, one group per GPU, in the time left
  local i=0 pids=() t p j
  for t in "${GPU_TESTS[@]}"; do
    CUDA_VISIBLE_DEVICES=$i timeout -s INT $(( $(left) - 10 )) $PYTEST $t > $R/gpu_tests_$i.log 2>&1 & pids+=($!)
    i=$((i + 1))
  done
  for p in "${pids[@]}"; do wait $p; done
  for j in "${!GPU_TESTS[@]}"; do
    log "== gpu tests $j: ${GPU_TESTS[$j]}"; tail -4 $R/gpu_tests_$j.log | tee -a $OUT/session.log
  done
}

case $PART in
scaling)
  step executor_gpu_test 120 $PYTEST tests/test_gpu_executor.py
  step scaling $(( $(left) - 150 )) python3 benchmarks/bench_executor_scaling.py --out $R/scaling --timeout 240
  (cd $R && tar czf $OUT/scaling.tgz --exclude=cache scaling 2>/dev/null)
  gpu_tests_side_by_side
  ;;
bench)
  B=$R/scaling
  if [ ! -f $R/bench.exit ] && ! pgrep -f bench_executor_scaling >/dev/null; then
    log "== bench: started"
    setsid nohup bash -c "python3 benchmarks/bench_executor_scaling.py --out $B --timeout 300 > $R/bench.log 2>&1; \
      echo \$? > $R/bench.exit" > /dev/null 2>&1 &
  fi
  while [ ! -f $R/bench.exit ] && [ "$(left)" -gt 30 ]; do sleep 5; done
  cp $B/README.md $OUT/scaling.md 2>/dev/null; cp $B/results.json $OUT/scaling.json 2>/dev/null
  if [ -f $R/bench.exit ]; then
    log "== bench: finished, exit $(cat $R/bench.exit)"
    (cd $R && tar czf $OUT/scaling.tgz --exclude=cache scaling 2>/dev/null)
    gpu_tests_side_by_side
  else
    log "== bench: still running after this call; call again"; tail -5 $R/bench.log | tee -a $OUT/session.log
  fi
  ;;
tests)
  i=0
  for t in "${GPU_TESTS[@]}"; do step gpu_tests_$i $(( $(left) - 5 )) $PYTEST $t; i=$((i + 1)); done
  ;;
checks)
  step placement_check 300 python3 -m lab.placement_check --out $R/placement_check --rounds 15 --methods graph,do_bench
  step verify_fit 180 irlab verify --kernel lab/kernels/gemm_big_tiles.py --pass optimize-epilogue --configs all --out $R/verify_fit
  step calibrate $(( $(left) - 5 )) irlab calibrate --cases rowsum-small,layernorm-small,softmax,add --methods graph \
    --rounds 15 --out $R/calibrate
  (cd $R && tar czf $OUT/checks.tgz --exclude=cache placement_check verify_fit calibrate 2>/dev/null)
  ;;
*) echo "unknown part $PART" >&2; exit 2;;
esac
log "== done after $(( $(date +%s) - T0 )) s"
