"""Profiled targets that misbehave: print into machine-readable stdout, exit the interpreter, raise, do nothing.

These import torch and profile, so each takes seconds; they run in a forked child like the rest, which is what
``os._exit`` in a target needs to be observed (the process ends with the target's status).
"""

from __future__ import annotations

from hostile_case import REFUSED, Case, Expect, files

TARGETS = {
    "prints": "import torch\n\ndef fn():\n    print('hello from the target')\n    return torch.ones(4) + 1\n",
    "writes-fd1": "import os\nimport torch\n\ndef fn():\n    os.write(1, b'raw bytes on fd 1\\n')\n"
                  "    return torch.ones(4) + 1\n",
    "escapes": "import torch\n\ndef fn():\n    print('\\x1b]0;pwned\\x07\\x1b[2J')\n    return torch.ones(4) * 2\n",
    "os-exit": "import os\nimport torch\n\ndef fn():\n    torch.ones(4) + 1\n    os._exit(0)\n",
    "sys-exit": "import sys\nimport torch\n\ndef fn():\n    torch.ones(4) + 1\n    sys.exit(0)\n",
    "raises": "import torch\n\ndef fn():\n    torch.ones(4) + 1\n    raise ValueError('the target failed')\n",
    "does-nothing": "def fn():\n    return None\n",
    "masks": "import torch\n\ndef fn():\n    x = torch.arange(8)\n    return x[x > 3]\n",
}
# The JSON must parse whatever the target printed; a sync-free target passes, the mask target fails the gate.
_CLEAN = {"prints": frozenset({0}), "writes-fd1": frozenset({0}), "escapes": frozenset({0}),
          "masks": frozenset({1})}
_NO_EVIDENCE = ("os-exit", "sys-exit", "raises", "does-nothing")
TIMEOUT_S = 90.0
_JSON = {"stdout_json": True, "check_stdout_text": False}


def target_cases() -> list[Case]:
    out: list[Case] = []
    for name, exits in _CLEAN.items():
        build = files({"target.py": TARGETS[name]})
        out.append(Case(id=f"targets/{name}/profile-json", family="targets",
                        argv=("profile", "target.py:fn", "--no-report", "--out", "traces", "-f", "json"),
                        build=build, expect=Expect(exits=frozenset({0}), **_JSON), timeout_s=TIMEOUT_S,
                        heavy=name != "prints"))
        out.append(Case(id=f"targets/{name}/gate-sarif", family="targets",
                        argv=("gate", "--target", "target.py:fn", "-f", "sarif"), build=build,
                        expect=Expect(exits=exits, **_JSON), timeout_s=TIMEOUT_S, heavy=True))
        out.append(Case(id=f"targets/{name}/gate-junit", family="targets",
                        argv=("gate", "--target", "target.py:fn", "-f", "junit"), build=build,
                        expect=Expect(exits=exits, stdout_xml=True), timeout_s=TIMEOUT_S, heavy=True))
    for name in _NO_EVIDENCE:
        build = files({"target.py": TARGETS[name]})
        out.append(Case(id=f"no-evidence/target-{name}/gate", family="no-evidence",
                        argv=("gate", "--target", "target.py:fn"), build=build, expect=Expect(exits=REFUSED),
                        timeout_s=TIMEOUT_S, heavy=name != "os-exit"))
    out.append(Case(id="data-loss/output-is-input/profile-target", family="data-loss",
                    argv=("profile", "target.py:fn", "--no-report", "--out", "traces", "-o", "target.py"),
                    build=files({"target.py": TARGETS["prints"]}), expect=Expect(exits=REFUSED,
                                                                                  unchanged=("target.py",)),
                    timeout_s=TIMEOUT_S))
    out.append(Case(id="data-loss/output-is-input/gate-target", family="data-loss",
                    argv=("gate", "--target", "target.py:fn", "-o", "target.py"),
                    build=files({"target.py": TARGETS["prints"]}), expect=Expect(exits=REFUSED,
                                                                                  unchanged=("target.py",)),
                    timeout_s=TIMEOUT_S, heavy=True))
    return out
