#!/usr/bin/env bash
# GPU session C (device tool, nvidia-h200-x2): the hand-written warp-specialized TMA GEMM
# (examples/ws_gemm.py) with and without optimize-epilogue, then the GPU tests, which
# include the README's GPU blocks (tests/test_readme.py -m gpu). Results land in $OUT.
#   IRLAB_COMMIT=<sha> bash lab/sessions/session_c.sh
# irlab is installed from a wheel built from the same commit (.whl/irlab-*.whl) so that its
# console script and its pytest plugin exist, as after `pip install`; the code runs from the checkout.
source "$(dirname "$0")/common.sh"
export IRLAB_STALL_S=${IRLAB_STALL_S:-90} TAIL=4
mkdir -p /tmp/bin && ln -sf "$(command -v python3)" /tmp/bin/python && export PATH=/tmp/site/bin:/tmp/bin:$PATH
gpu_header $OUT/nvidia-smi.csv
LIMIT=150 run ws_gemm irlab ab --kernel examples/ws_gemm.py --variants optimize-epilogue \
  --configs ws-w4,ws-w8 --shapes 4096x4096x4096 --rounds 7 --out $OUT/ws_gemm
LIMIT=${TESTS_LIMIT:-380} run gpu_tests python3 -m pytest -q -m gpu tests/ -p no:cacheprovider -rs
ls -la $OUT
