# Sourced by the GPU session scripts (device tool): the step runner and the session header.
#   run NAME CMD...   runs CMD under `timeout ${LIMIT:-300}`, its output in ${LOGS:-$OUT}/NAME.log;
#                     a line before and after (with the exit status and seconds) goes to
#                     $OUT/session.log, and so do the last ${TAIL:-4} lines of the log
#   gpu_header [CSV]  records the GPU (name, driver, max SM clock, power limit) in CSV (default:
#                     $OUT/session.log) and the torch and Triton versions and GPU count in session.log
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
