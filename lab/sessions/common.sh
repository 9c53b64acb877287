# Sourced by the GPU session scripts (device tool): unset variables are errors, Python output is
# unbuffered and Triton's autotuning report is off; then the step runner and the session header.
#   session_dir DIR   a fresh DIR for the session's results, its steps' logs there ($R and $LOGS)
#   run NAME CMD...   runs CMD under `timeout ${LIMIT:-300}`, its output in ${LOGS:-$OUT}/NAME.log;
#                     a line before and after (with the exit status and seconds) goes to
#                     $OUT/session.log, and so do the last ${TAIL:-4} lines of the log
#   gpu_header [CSV]  records the GPU (name, driver, max SM clock, power limit) in CSV (default:
#                     $OUT/session.log) and the torch and Triton versions and GPU count in session.log
set -u
export PYTHONUNBUFFERED=1 TRITON_PRINT_AUTOTUNING=0

session_dir() { R=$1; rm -rf "$R"; mkdir -p "$R"; export LOGS=$R; }

run() {
  local name=$1; shift
  local log=${LOGS:-$OUT}/$name.log
  echo "== $name: $*" | tee -a "$OUT/session.log"
  local t0; t0=$(date +%s)
  timeout "${LIMIT:-300}" "$@" > "$log" 2>&1; local rc=$?
  echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/session.log"
  tail -n "${TAIL:-4}" "$log" | tee -a "$OUT/session.log"
}

gpu_header() {
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee -a "${1:-$OUT/session.log}"
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" \
    | tee -a "$OUT/session.log"
}
