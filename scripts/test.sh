#!/usr/bin/env bash
# The test command: set up .venv, keep the project's own paths sync-free, then run the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
# The project's own gates: the fixed HiCache load path must stay sync-free on CPU.
.venv/bin/synchunt gate --target hicache-dcp --impl sliced --device cpu --out "${TMPDIR:-/tmp}/synchunt-ci-traces"
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
