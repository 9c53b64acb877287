#!/usr/bin/env bash
# GPU session on a machine of four GPUs (device tool, nvidia-h100-x4): the round's GPU work as four
# lanes side by side, one GPU each, so that one lease does what four one-GPU calls would:
#
#   checks  (GPU 0) lab/sessions/session_round5.sh checks: placement check, verify of configs over
#           the GPU's shared memory, calibrate
#   tests   (GPU 1) every test marked gpu, one after another
#   llama   (GPU 2) lab/sessions/session_search_model.sh all, MODELS=llama: capture, then search-model
#   bert    (GPU 3) the same for the BERT encoder
#
# The lanes run in their own process sessions (setsid), so they outlive one device call (10 minutes):
#
#   call 1:  bash lab/sessions/session_lanes.sh start     installs irlab, starts the lanes, waits
#   call 2+: bash lab/sessions/session_lanes.sh collect   waits again (back to back with the last
#            call: the machine is given back after about 30 s idle, and the lanes with it)
#
# Each call waits until every lane has finished or its own time (CALL_LIMIT, default 570 s) is nearly
# up, then sends back what the lanes have written so far: $OUT/<lane>.tgz (each lane's results
# folder) and $OUT/lanes.log (which lanes finished, with their exit status). LANE_LIMIT (default
# 1100 s) stops a lane that runs longer, with SIGINT, so that what it finished is kept.
# Timings taken this way share a host with three other busy GPUs; each figure's A/A check is taken
# under the same load.
set -u
MODE=${1:?usage: session_lanes.sh start|collect}
T0=$(date +%s)
L=/tmp/lanes
LANES="checks tests llama bert"
left() { echo $(( ${CALL_LIMIT:-570} - ($(date +%s) - T0) )); }

lane() {   # lane NAME GPU COMMAND: COMMAND in the background, its results in $L/NAME/out
  local name=$1 gpu=$2; shift 2
  mkdir -p "$L/$name/out"
  setsid nohup env CUDA_VISIBLE_DEVICES="$gpu" OUT="$L/$name/out" PATH="$PATH" PYTHONPATH="$PYTHONPATH" \
    timeout -s INT -k 60 "${LANE_LIMIT:-1100}" bash -c "$*" > "$L/$name/lane.log" 2>&1 < /dev/null &
  echo $! > "$L/$name/pid"
}

export PATH=/tmp/site/bin:$PATH PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 TRITON_PRINT_AUTOTUNING=0
case $MODE in
start)
  rm -rf $L; mkdir -p $L
  python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site .whl/*.whl . \
    > $L/install.log 2>&1 || { echo "install failed"; tail -20 $L/install.log; exit 1; }
  nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv | tee $L/gpus.csv
  lane checks 0 "CALL_LIMIT=\$(( ${LANE_LIMIT:-1100} - 30 )) bash lab/sessions/session_round5.sh checks"
  lane tests 1 "python3 -m pytest -q -p no:cacheprovider -n 0 -m gpu tests > \$OUT/gpu_tests.log 2>&1"
  lane llama 2 "MODELS=llama SESSION_DIR=/tmp/ssm-llama CALL_LIMIT=\$(( ${LANE_LIMIT:-1100} - 30 )) SEARCH_LIMIT=900 \
    bash lab/sessions/session_search_model.sh all"
  lane bert 3 "MODELS=bert SESSION_DIR=/tmp/ssm-bert CALL_LIMIT=\$(( ${LANE_LIMIT:-1100} - 30 )) SEARCH_LIMIT=900 \
    bash lab/sessions/session_search_model.sh all"
  ;;
collect) [ -d $L ] || { echo "no lanes on this machine (it was given back?): start again" >&2; exit 2; } ;;
*) echo "usage: session_lanes.sh start|collect" >&2; exit 2;;
esac

running() { local n; for n in $LANES; do kill -0 "$(cat $L/$n/pid)" 2>/dev/null && echo "$n"; done; }
while [ -n "$(running)" ] && [ "$(left)" -gt 40 ]; do sleep 10; done
cp $L/gpus.csv $OUT/ 2>/dev/null
for n in $LANES; do
  state=finished; kill -0 "$(cat $L/$n/pid)" 2>/dev/null && state=running
  echo "== $n: $state after $(( $(date +%s) - $(stat -c %Y $L/$n/pid) )) s" | tee -a $OUT/lanes.log
  tail -8 $L/$n/lane.log | tee -a $OUT/lanes.log
  cp $L/$n/lane.log $L/$n/out/ 2>/dev/null
  (cd $L/$n && tar czf $OUT/$n.tgz out)
done
