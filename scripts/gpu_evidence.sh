#!/usr/bin/env bash
# Real GPU evidence, in one run on a CUDA machine (no network needed beyond what the image has):
#   1. profile the HiCache workload on the device: masked, sliced and no-DCP (dcp_size 1), keep the traces;
#   2. analyze each (text + JSON): masked should show confirmed SH101 syncs under aten::index › aten::nonzero;
#   3. the load-loop benchmark (scheduler-thread and end-to-end times);
#   4. the guard's CUDA tests (sync debug mode as a second signal, explicit syncs, pageable copies).
# Everything lands under $OUT (default artifacts/gpu). Runs from the source tree with PYTHONPATH, so the machine's
# own python3 and torch are used; msgspec (and plotly, for HTML) must be importable there.
#   DEVICE=cpu bash scripts/gpu_evidence.sh   # dry run of the same steps on a machine without a GPU
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
DEVICE="${DEVICE:-cuda}"
OUT="${OUT:-artifacts/gpu}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT"
status=0
step() { echo "== $*"; }

step environment
"$PY" - <<'PY' | tee "$OUT/environment.txt"
import platform, torch
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda)
print("device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")
PY

for config in "masked:--impl masked" "sliced:--impl sliced" "nodcp:--impl masked --dcp-size 1"; do
    name="${config%%:*}"
    # shellcheck disable=SC2086 # the options are meant to split
    set -- ${config#*:}
    step "profile $name ($*)"
    mkdir -p "$OUT/traces/$name"
    "$PY" -m synchunt profile hicache-dcp "$@" --device "$DEVICE" --warmup 2 --iterations 1 \
        --out "$OUT/traces/$name" --no-report --format json -o "$OUT/$name.analysis.json" || status=1
    trace=$(ls -t "$OUT/traces/$name"/*.pt.trace.json.gz 2>/dev/null | head -n 1)
    [ -n "$trace" ] && "$PY" -m synchunt analyze "$trace" --format text -o "$OUT/$name.analysis.txt"
    [ -f "$OUT/$name.analysis.txt" ] && head -n 3 "$OUT/$name.analysis.txt"
done

step "load-loop benchmark"
"$PY" benchmarks/load_loop.py --device "$DEVICE" --repeats 30 | tee "$OUT/load_loop.txt" || status=1

step "guard on the device"
"$PY" -m pytest -q -p no:cacheprovider tests/guard/test_guard_cuda.py tests/guard/test_guard_sync_debug.py \
    | tee "$OUT/guard_tests.txt" || status=1

step "done: $OUT"
exit "$status"
