"""The baseline `synchunt profile` is measured against: import a target file, set it up, run its steps. Nothing else.

    python benchmarks/real_clients/plain_run.py FILE.py STEPS
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def main() -> None:
    path, steps = Path(sys.argv[1]).resolve(), int(sys.argv[2])
    sys.path.insert(0, str(path.parent))  # as `python file.py` has it
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    state = module.setup()
    for _ in range(steps):
        module.step(state)


if __name__ == "__main__":
    main()
