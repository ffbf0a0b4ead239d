#!/usr/bin/env bash
# tools/gpu/check.sh - what a session that is lent a GPU runs there, one phase per `run` call (each
# under the device tool's 10-minute limit), after `node tools/build.js` and `bash tools/gpu/pack.sh`
# here and with carry [".device"] (build/Release and .device together exceed the 64 MiB carry):
#
#   bash tools/gpu/check.sh tests    # the whole mocha suite on the GPU machine (CUDA parity included)
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
# the build that tools/gpu/pack.sh put in .device/build
if [[ ! -f build/Release/libkindling_cuda.so && -f .device/build/libkindling_cuda.so.xz ]]; then
  mkdir -p build/Release
  cp .device/build/kindling.node build/Release/
  if command -v xz >/dev/null; then xz -dc .device/build/libkindling_cuda.so.xz > build/Release/libkindling_cuda.so
  else python3 -c 'import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' \
    .device/build/libkindling_cuda.so.xz build/Release/libkindling_cuda.so
  fi
fi
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
