#!/usr/bin/env bash
# tools/gpu/check.sh - what a session that is lent a GPU runs there, one phase per `run` call (each
# under the device tool's 10-minute limit), after `node tools/build.js` and
# `bash ../shared/device/pack.sh` here and with carry ["build/Release", ".device"]:
#
#   bash tools/gpu/check.sh tests    # every CUDA test file, the backend parity suite included
#   bash tools/gpu/check.sh bench    # npm run bench -- --device cuda (PyTorch CUDA as the peer)
#   bash tools/gpu/check.sh targets  # the issue-6 target cases only, 3 rounds
#   bash tools/gpu/check.sh epoch    # bench/epoch.js --device cuda (Fashion-MNIST CNN, 1 epoch x 2)
#   bash tools/gpu/check.sh all      # tests then targets
#
# Logs and bench JSON go to $OUT (the device tool's folder that comes back), else to /tmp/kd-gpu.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/kd-gpu}
mkdir -p "$out"
run() { bash .device/run.sh "$@"; }
mocha=.device/tools/node_modules/mocha/bin/mocha.js
phase=${1:-all}
rc=0
if [[ $phase == tests || $phase == all ]]; then
  run nvidia-smi > "$out/nvidia-smi.txt" 2>&1
  run node "$mocha" --reporter dot test/cuda.test.js test/cuda_allocator.test.js test/cuda_random.test.js \
    test/cuda_parity.test.js 2>&1 | tee "$out/tests.log" | tail -40
  rc=${PIPESTATUS[0]}
fi
if [[ $phase == targets || $phase == all ]]; then
  run node bench/run.js --device cuda --rounds 3 --no-tfjs --filter 'add|matmul|overhead|data.roundtrip|train.mlp' \
    --out "$out/bench-targets.json" 2>&1 | tee "$out/bench-targets.log" | tail -60
fi
if [[ $phase == bench ]]; then
  run node bench/run.js --device cuda --no-tfjs --out "$out/bench.json" 2>&1 | tee "$out/bench.log" | tail -80
fi
if [[ $phase == epoch ]]; then
  run node bench/epoch.js --device cuda --rounds 2 2>&1 | tee "$out/epoch.log" | tail -20
  cp bench/out/epoch-*.json "$out/" 2>/dev/null
fi
exit "$rc"
