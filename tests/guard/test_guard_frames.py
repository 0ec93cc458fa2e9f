"""The guard's user frames: a package run with `python -m` (pytest's `__main__`) is that package's code, not the
user's, while a script run as `__main__` is the user's."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from synchunt.guard.frames import UserFrames, capture_stack

MAIN = "from synchunt.guard.frames import capture_stack\n\nSTACK = capture_stack()\n"


def test_a_package_run_as_main_is_that_packages_code(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "runnerpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(MAIN)
    (tmp_path / "script.py").write_text(MAIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    frames = UserFrames.with_extra(["runnerpkg"])
    as_module = runpy.run_module("runnerpkg", run_name="__main__")["STACK"]
    assert as_module[0][2] == "runnerpkg.__main__"
    assert not any(frame.file.endswith("runnerpkg/__main__.py") for frame in frames.user_frames(as_module))
    as_script = runpy.run_path(str(tmp_path / "script.py"), run_name="__main__")["STACK"]
    assert as_script[0][2] == "__main__"
    assert frames.user_frames(as_script)[0].file.endswith("script.py")
    sys.modules.pop("runnerpkg", None)


def test_the_calling_frame_comes_first() -> None:
    stack = capture_stack()
    assert stack[0][0].co_name == "test_the_calling_frame_comes_first" and stack[0][2] == __name__
