#!/usr/bin/env bash
# The test command: set up .venv, keep the project's own paths sync-free, then run the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
# The project's own gates: the fixed HiCache load path must stay sync-free on CPU.
.venv/bin/synchunt gate --target hicache-dcp --impl sliced --device cpu --out "${TMPDIR:-/tmp}/synchunt-ci-traces"
# ... and the pre-fix one must fail with its 54 syncs (27 layers × host and device indices).
masked_gate=$(.venv/bin/synchunt gate --target hicache-dcp --impl masked --device cpu \
    --out "${TMPDIR:-/tmp}/synchunt-ci-traces" 2>&1) && { echo "$masked_gate"; echo "masked gate passed" >&2; exit 1; }
echo "$masked_gate" | tail -n 1
echo "$masked_gate" | grep -q "gate failed: 54 syncs counted" || { echo "masked gate: expected 54 syncs" >&2; exit 1; }
# Every registered path: fixed variants sync-free, bad variants caught, by the trace and by the guard.
.venv/bin/synchunt audit --device cpu
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
# pytest exit 5 (no tests collected) is a failure too.
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests" >&2
    exit 1
fi
exit "$status"
