#!/usr/bin/env bash
# tools/gpu/pack.sh - fills .device/ for a lent GPU machine, within the device tool's 64 MiB carry:
# ../shared/device/pack.sh (a compressed Node, mocha, run.sh) plus this build's addon and CUDA
# library (xz: ~6 MB instead of 45). Then run with carry [".device"] and
# `bash tools/gpu/check.sh <phase>`, which unpacks the build where it is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f build/Release/libkindling_cuda.so ] || { echo "pack: build the CUDA backend first (node tools/build.js)"; exit 1; }
bash ../shared/device/pack.sh
mkdir -p .device/build
cp build/Release/kindling.node .device/build/
xz -T0 -6 -c build/Release/libkindling_cuda.so > .device/build/libkindling_cuda.so.xz
du -sh .device
