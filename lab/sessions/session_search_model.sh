#!/usr/bin/env bash
# GPU session (device tool, one GPU: nvidia-h100-x1 or nvidia-h200; torch 2.11, transformers, triton
# 3.6.0, no network): irlab search-model end to end on two models of different families built from
# transformers configs with random weights -- the 2-layer Llama decoder (examples/models/llama.py)
# and a 4-layer BERT encoder (examples/models/bert.py), both under
# torch.compile(mode="max-autotune-no-cudagraphs") with every GEMM a Triton template -- each
# captured with --profile, trimmed, then searched (hot kernels x variants x neighbouring configs,
# verified, timed with A/A floors) and its mixed variant confirmed by a model A/B.
#
# Resumable across device calls (each at most 10 minutes; a fresh machine each time): everything
# the search needs goes to $OUT/state.tgz (the trimmed captures and every search folder, without
# compile caches or the model A/B's unfinished runs). Give the previous call's state.tgz back as
# the second argument (copy it into the working tree, e.g. runs/state.tgz -- runs/ is ignored by
# git, so pass it with the device tool's carry) and the search goes on where it stopped:
#
#   call 1:  bash lab/sessions/session_search_model.sh capture
#            (both captures, about 100 s each on an H100, then trimmed: $OUT/state.tgz)
#   call 2+: bash lab/sessions/session_search_model.sh search runs/state.tgz
#            (search-model --resume on each model in turn, each step stopped by SIGINT at its
#            limit so that everything finished is kept; repeat until $OUT/session.log says
#            "search llama: done" and "search bert: done")
#
# Parts: capture | search | all (capture, then search with the time left). MODELS="llama bert"
# picks the models; SEARCH_LIMIT (seconds per search step, default 540) and CALL_LIMIT (seconds for
# the whole call, default 570) keep a call inside the device's 10 minutes.
# SESSION_DIR (default /tmp/session_search_model) is where the call works.
# Results: $OUT/session.log, $OUT/state.tgz, and $OUT/search_results.tgz holding <model>.search.md (each
# search's README.md), <model>.json (search_model.json), <model>.mixed-variant.json, <model>.model-ab.md
# and every step's log.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PART=${1:-all}
STATE=${2:-}
MODELS=${MODELS:-llama bert}
case $PART in capture|search|all) ;; *) echo "usage: $0 capture|search|all [STATE.tgz]" >&2; exit 2;; esac
R=${SESSION_DIR:-/tmp/session_search_model}   # a lane of session_lanes.sh has its own
T0=$(date +%s)
left() { echo $(( ${CALL_LIMIT:-570} - ($(date +%s) - T0) )); }
rm -rf $R; mkdir -p $R
if [ -n "$STATE" ]; then tar xzf "$STATE" -C $R || { echo "cannot unpack $STATE" >&2; exit 2; }; fi
step() { local name=$1 limit=$2; shift 2
         [ "$limit" -gt 20 ] || { echo "== $name: skipped, $limit s left in this call" | tee -a $OUT/session.log; return 1; }
         echo "== $name (limit $limit s): $*" | tee -a $OUT/session.log; local t0=$(date +%s)
         timeout -s INT -k 30 $limit "$@" > $R/$name.log 2>&1; local rc=$?
         echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log
         tail -12 $R/$name.log | tee -a $OUT/session.log; return $rc; }
program() {   # the program of a model: the same graph in the capture and the A/B (--steps only repeats it)
  case $1 in
    llama) echo "examples/models/llama.py --triton-gemms --batch 8 --seq 512";;
    bert) echo "examples/models/bert.py --triton-gemms --batch 16 --seq 512";;
  esac; }
python3 -c "import torch, triton, transformers; print('torch', torch.__version__, 'triton', triton.__version__, \
'transformers', transformers.__version__, 'gpu', torch.cuda.get_device_name())" | tee -a $OUT/session.log

if [ "$PART" = capture ] || [ "$PART" = all ]; then
  for m in $MODELS; do
    [ -d $R/$m ] && { echo "== capture $m: already in the state" | tee -a $OUT/session.log; continue; }
    TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 step capture_$m 240 python3 -m irlab capture --profile --quiet \
      --out $R/full-$m -- $(program $m) --steps 3 \
      && step top_$m 30 python3 -m irlab top $R/full-$m --limit 30 --json $R/top_$m.json \
      && step trim_$m 30 python3 -m irlab trim-capture $R/full-$m --out $R/$m
    rm -rf $R/full-$m
  done
fi
if [ "$PART" = search ] || [ "$PART" = all ]; then
  for m in $MODELS; do
    [ -d $R/$m ] || { echo "== search $m: no capture in the state (run the capture part first)" | tee -a $OUT/session.log; continue; }
    if [ -f $R/search-$m/search_model.json ] && python3 -c "import json,sys; sys.exit(0 if json.load(open('$R/search-$m/search_model.json'))['complete'] else 1)"; then
      echo "== search $m: done" | tee -a $OUT/session.log; continue
    fi
    resume=""; [ -f $R/search-$m/header.json ] && resume="--resume"
    limit=$(left); [ "$limit" -gt ${SEARCH_LIMIT:-540} ] && limit=${SEARCH_LIMIT:-540}
    step search_$m $limit python3 -m irlab search-model $R/$m --configs neighbours --rounds 10 --model-rounds 10 \
      --out $R/search-$m $resume -- $(program $m) --steps 8
    [ -f $R/search-$m/search_model.json ] && python3 -c "import json,sys; sys.exit(0 if json.load(open('$R/search-$m/search_model.json'))['complete'] else 1)" \
      && echo "== search $m: done" | tee -a $OUT/session.log
  done
fi
mkdir -p $R/results
for m in $MODELS; do
  cp $R/search-$m/README.md $R/results/$m.search.md 2>/dev/null
  cp $R/search-$m/search_model.json $R/results/$m.json 2>/dev/null
  cp $R/search-$m/mixed-variant.json $R/results/$m.mixed-variant.json 2>/dev/null
  cp $R/search-$m/model-ab/README.md $R/results/$m.model-ab.md 2>/dev/null
  # an unfinished model A/B starts again on the next machine (its check runs' outputs are not carried)
  if [ -f $R/search-$m/model-ab/ab_model.json ] && python3 -c "import json,sys; sys.exit(0 if json.load(open('$R/search-$m/model-ab/ab_model.json')).get('partial') else 1)"; then
    rm -rf $R/search-$m/model-ab
  fi
done
(cd $R && find . \( -name cache -o -name tensors -o -name outputs -o -name 'full-*' -o -name results \) -prune -o -type f -print \
  | tar czf $OUT/state.tgz -T -)
cp $R/*.log $R/top_*.json $R/results/ 2>/dev/null
(cd $R && tar czf $OUT/search_results.tgz results)   # at most 8 files come back: the results in one archive
ls -la $OUT
