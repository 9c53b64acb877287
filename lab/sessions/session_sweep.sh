#!/usr/bin/env bash
# GPU session (device tool, nvidia-h200): a sweep's bookkeeping on a GPU (issue 18). irlab ab on the
# walkthrough's kernel with optimize-epilogue and identity (identity is "same binary: no change" and
# never timed; the headline says which variant changed the binary), the same sweep interrupted by
# SIGINT during its timing (exit 130 within a second, no worker left) and finished with --resume,
# then every GPU test (`pytest -m gpu tests/`). Results in $OUT/session_sweep.tgz and $OUT/*.log.
#   bash lab/sessions/session_sweep.sh   (from the repository root, irlab's dependencies installed)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
R=/tmp/session_sweep; rm -rf $R; mkdir -p $R
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" | tee -a $OUT/session.log
AB=(ab --kernel docs/walkthrough/bias_relu_gemm.py --variants optimize-epilogue,identity --shapes 2048x2048x2048
    --configs 128x128x64-w8,128x256x64-w8 --stages 3,4 --rounds 7 --screen-rounds 3)
t0=$(date +%s); timeout 300 python3 -m irlab "${AB[@]}" --out $R/ab > $R/ab.log 2>&1
echo "== ab: exit $? after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log; tail -4 $R/ab.log | tee -a $OUT/session.log
python3 - "$R" "${AB[@]}" <<'EOF' 2>&1 | tee -a $OUT/session.log
import os, signal, subprocess, sys, time, uuid
from pathlib import Path
out, args = Path(sys.argv[1]) / "abi", sys.argv[2:]
tag = f"IRLAB_SESSION_{uuid.uuid4().hex}"
p = subprocess.Popen([sys.executable, "-m", "irlab", *args, "--out", str(out)], env={**os.environ, tag: "1"},
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
while p.poll() is None and not list(out.glob("screen*.jsonl")):   # until the GPU worker writes
    time.sleep(0.2)
time.sleep(3)
if p.poll() is not None:
    sys.exit(f"== interrupted ab: it ended (exit {p.returncode}) before SIGINT: {p.stderr.read()[-2000:]}")
os.killpg(p.pid, signal.SIGINT)
t0 = time.monotonic()
_, err = p.communicate(timeout=60)
took = time.monotonic() - t0
time.sleep(0.5)
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if tag.encode() in Path(f"/proc/{pid}/environ").read_bytes():
            left.append(pid)
    except OSError:   # gone meanwhile
        pass
print(f"== interrupted ab: exit {p.returncode} {took:.2f} s after SIGINT; left running: {left}; "
      f"traceback: {'Traceback' in err}; last line: {err.strip().splitlines()[-1]!r}")
EOF
t0=$(date +%s); timeout 300 python3 -m irlab "${AB[@]}" --out $R/abi --resume > $R/abi-resume.log 2>&1
echo "== ab --resume: exit $? after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log; tail -4 $R/abi-resume.log | tee -a $OUT/session.log
t0=$(date +%s); timeout 300 python3 -m pytest -q -m gpu tests/ -p no:cacheprovider > $R/gpu_tests.log 2>&1
echo "== gpu tests: exit $? after $(( $(date +%s) - t0 )) s" | tee -a $OUT/session.log; tail -3 $R/gpu_tests.log | tee -a $OUT/session.log
(cd $R && find . -name cache -prune -o -type f -print | tar czf $OUT/session_sweep.tgz -T -)
