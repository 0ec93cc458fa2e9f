#!/usr/bin/env bash
# Create .venv (once) and install synchunt with its dev extras (and the real-client libraries) into it. Sourced by test.sh and demo.sh.
# SYNCHUNT_TORCH picks the torch build; the default is the CPU-friendly release the project is tested with.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
torch_spec="${SYNCHUNT_TORCH:-torch==2.13.0}"
stamp=.venv/.synchunt-installed
# Reinstall when pyproject.toml changed or another torch was asked for (the stamp records the spec).
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$(cat "$stamp")" != "$torch_spec" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    # Install torch first so the editable install below finds its requirement satisfied.
    .venv/bin/python -m pip install --quiet "$torch_spec"
    .venv/bin/python -m pip install --quiet -e '.[dev,realclients]'
    echo "$torch_spec" > "$stamp"
fi
