#!/usr/bin/env bash
# The main job: profile the HiCache DCP load path on CPU before and after the fix, and write the reports.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
out="${1:-artifacts/demo}"
mkdir -p "$out"
.venv/bin/synchunt profile hicache-dcp --impl masked --device cpu --out "$out"
.venv/bin/synchunt profile hicache-dcp --impl sliced --device cpu --out "$out"
masked=$(ls -t "$out"/hicache-dcp-masked-*.pt.trace.json.gz | head -n 1)
sliced=$(ls -t "$out"/hicache-dcp-sliced-*.pt.trace.json.gz | head -n 1)
.venv/bin/synchunt compare "$masked" "$sliced"
.venv/bin/synchunt report "$masked" --compare "$sliced" -o "$out/compare.html"
echo "reports in $out (open $out/compare.html)"
