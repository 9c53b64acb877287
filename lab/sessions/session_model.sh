#!/usr/bin/env bash
# GPU session (device tool, nvidia-h100-x1 or nvidia-h200): a torch.compile'd model's kernels end
# to end (issue 20). Parts (each fits one device call: the step limits of kernels add up to
# 575 s, a run on an H100 took about 100 s per capture and 40 s for report and ab):
#   captures  1. capture the 2-layer Llama (examples/models/llama.py, max-autotune) with
#                --profile as torch.compile picks (cuBLAS GEMMs on Hopper), and again with
#                --triton-gemms (every GEMM a Triton template); 2. irlab top of each (autotuning's
#                L2 flushes and cuBLAS candidates are filed apart from the program's time);
#                3. trim each to its program kernels ($R/llama2-h100, $R/llama2-h100-triton-gemms:
#                the test data tests/data/captures/ takes, in session_model.tgz)
#   kernels   captures, then report and ab of the Triton-GEMM run's hottest kernel with
#             optimize-epilogue and identity
#   model     the model-level A/B of optimize-epilogue with every GEMM a Triton template
#             (capture_llama.py --triton-gemms; an arm's later processes reuse its first one's
#             autotuning through its caches), 10 rounds with an A/A arm, per-kernel breakdown and
#             outputs compared launch for launch (AB_MODEL_LIMIT seconds at most, default 520)
#   model-resume  the same A/B, --resume: run it in the next device call while the machine is
#             still warm (its caches and check runs are in /tmp/session_model); on the H100 the
#             model A/B took about 120 s of compile and check runs and 55 s a round
#   all       kernels, then model (longer than one device call allows: use two)
# Each step has a time limit (SIGINT, so irlab writes what it finished) and prints its exit status. Results: $OUT/session.log, $OUT/*.log,
# $OUT/session_model.tgz.
#   bash lab/sessions/session_model.sh [captures|kernels|model|all]   (from the repository root,
#   irlab's dependencies installed)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PART=${1:-kernels}
AB_MODEL_PROGRAM="examples/models/llama.py --triton-gemms --steps 8 --batch 16 --seq 1024"
case $PART in captures|kernels|model|model-resume|all) ;;
  *) echo "usage: $0 [captures|kernels|model|model-resume|all]" >&2; exit 2;; esac
R=/tmp/session_model; [ "$PART" = model-resume ] || rm -rf $R; mkdir -p $R
step() { local name=$1 limit=$2; shift 2; echo "== $name: $*" | tee -a $OUT/session.log; local t0=$(date +%s)
         timeout -s INT -k 20 $limit "$@" > $R/$name.log 2>&1; local rc=$?
         echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log
         tail -8 $R/$name.log | tee -a $OUT/session.log; }
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpu', torch.cuda.get_device_name())" | tee -a $OUT/session.log
if [ "$PART" != model ] && [ "$PART" != model-resume ]; then
  # the program as torch.compile picks it, then with every GEMM a Triton template
  TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 step capture 180 python3 -m irlab capture --profile --quiet --out $R/llama \
    -- examples/models/llama.py
  TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 step capture_triton 180 python3 -m irlab capture --profile --quiet \
    --out $R/llama-triton -- examples/models/llama.py --triton-gemms
  step top 20 python3 -m irlab top $R/llama --limit 40 --json $R/top.json
  step top_triton 20 python3 -m irlab top $R/llama-triton --limit 40 --json $R/top_triton.json
  step trim 20 python3 -m irlab trim-capture $R/llama --out $R/llama2-h100
  step trim_triton 20 python3 -m irlab trim-capture $R/llama-triton --out $R/llama2-h100-triton-gemms
fi
if [ "$PART" = kernels ] || [ "$PART" = all ]; then
  step report 45 python3 -m irlab report $R/llama-triton --vs optimize-epilogue
  step ab 90 python3 -m irlab ab --kernel $R/llama-triton --variants optimize-epilogue,identity --rounds 10 \
    --screen-rounds 3 --out $R/ab
fi
if [ "$PART" = model ] || [ "$PART" = all ]; then
  # every GEMM a Triton template (max-autotune, its caches warm after each arm's first process) so that
  # optimize-epilogue reaches the GEMMs; 10 rounds with the A/A arm. Stopped by SIGINT at the step's
  # limit, the A/B keeps the rounds it finished (partial results in ab_model.json, --resume goes on).
  step ab_model ${AB_MODEL_LIMIT:-520} python3 -m irlab ab-model --variant optimize-epilogue --rounds 10 --timeout 150 \
    --keep-caches --out $R/ab_model -- $AB_MODEL_PROGRAM
fi
if [ "$PART" = model-resume ]; then
  # the same machine, still warm (the next device call within its idle time): go on with the caches kept
  step ab_model_resume ${AB_MODEL_LIMIT:-520} python3 -m irlab ab-model --resume --variant optimize-epilogue --rounds 10 \
    --timeout 150 --keep-caches --out $R/ab_model -- $AB_MODEL_PROGRAM
fi
if [ "$PART" = model ] || [ "$PART" = model-resume ] || [ "$PART" = all ]; then
  cp $R/ab_model/README.md $OUT/ab_model.md 2>/dev/null
  cp $R/ab_model/ab_model.json $OUT/ab_model.json 2>/dev/null
  cp $R/ab_model/runs.jsonl $OUT/runs.jsonl 2>/dev/null
fi
# the full runs' kernel folders are large; their profiles, indexes and the trimmed runs come back
(cd $R && find . \( -name cache -o -name tensors -o -name outputs \) -prune -o -type f -size -4M \
  \( -path './llama2-h100*' -o -name '*.json' -o -name '*.hatchet' -o -name '*.md' -o -name '*.log' \) -print \
  | tar czf $OUT/session_model.tgz -T -)
for f in report ab ab_model ab_model_resume; do [ -f $R/$f.log ] && cp $R/$f.log $OUT/$f.log; done
for f in capture top; do [ -f $R/$f.log ] && cat $R/$f.log $R/${f}_triton.log > $OUT/$f.log 2>/dev/null; done
ls -la $OUT
