#!/usr/bin/env bash
# One prepared run on a CUDA machine: every end-to-end and ToyLM test (their CUDA variants run
# there), then the ToyLM benchmark on the GPU. Results go to $OUT (default docs/benchmarks/gpu).
set -uo pipefail
out=${OUT:-docs/benchmarks/gpu}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
{
  date -u +"%Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
} | tee "$out/device.txt"
# Every kata's end-to-end folder (tests/<kata>/), so a new engine is checked without editing this.
e2e=$(ls -d tests/*/ | grep -v -e '^tests/docs/' -e '^tests/toylm/')
timeout 300 python3 -m pytest tests/toylm tests/test_fakes.py $e2e -q -rs -p no:cacheprovider 2>&1 \
  | tee "$out/tests.log"
timeout 120 python3 tools/toylm_bench.py --device cuda --out "$out/toylm-cuda.md" 2>&1 | tail -20
