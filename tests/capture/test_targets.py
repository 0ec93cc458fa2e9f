"""Resolving targets as a new user writes them: both forms of one file, set-up functions, typed options, devices."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from synchunt.capture import Target, resolve_target
from synchunt.capture.options import parameter_types
from synchunt.errors import TargetError, UsageError

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the ``myserve`` package outside the repository, as the working directory; imports undone after."""
    shutil.copytree(FIXTURES / "myserve", tmp_path / "user" / "myserve")
    monkeypatch.chdir(tmp_path / "user")
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    yield tmp_path / "user"
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        if name.split(".")[0] in ("myserve", "synchunt_target_tool"):
            del sys.modules[name]


def test_module_form_imports_from_the_working_directory(user_dir: Path) -> None:
    target = resolve_target("myserve.sched:run", {"n": "8"})
    assert target.name == target.thread_name == target.title == "myserve.sched:run"
    assert target.label == "" and target.params == {"n": 8}  # typed from the default n=64
    assert target.project_root == str(user_dir) and target.user_packages == ("myserve",)
    assert target.device == "cpu"


def test_file_form_names_the_same_module_from_anywhere(user_dir: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    by_file = resolve_target(f"{user_dir}/myserve/sched.py:run")
    assert by_file.name == "myserve.sched:run" and by_file.project_root == str(user_dir)
    import myserve.sched

    assert myserve.sched.__file__ == str(user_dir / "myserve" / "sched.py")


def test_module_form_refuses_another_projects_module_imported_earlier(user_dir: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """In one process (a notebook, a test session), `myserve.sched:run` from a second project must not profile
    the first project's module that Python still holds, nor its sibling whose package Python holds."""
    resolve_target("myserve.sched:run")
    second = tmp_path / "second"
    shutil.copytree(FIXTURES / "myserve", second / "myserve")
    for project in (user_dir, second):  # a module neither project has imported yet
        (project / "myserve" / "extra.py").write_text("def main():\n    return 1\n")
    monkeypatch.chdir(second)
    for spec in ("myserve.sched:run", "myserve.extra:main"):
        with pytest.raises(TargetError, match=r"imports from .*user/myserve/\w+\.py, but the working directory "
                                              r"holds .*second/myserve/\w+\.py: a module or package of that name "
                                              r"was imported earlier in this process"):
            resolve_target(spec)
    monkeypatch.chdir(user_dir)
    assert resolve_target("myserve.sched:run").project_root == str(user_dir)  # the same project again: fine
    link = tmp_path / "link"
    link.symlink_to(user_dir)
    monkeypatch.chdir(link)  # the same files by another path
    assert resolve_target("myserve.sched:run").name == "myserve.sched:run"


def test_module_form_refuses_a_module_an_earlier_path_entry_holds(user_dir: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    second = tmp_path / "second"
    shutil.copytree(FIXTURES / "myserve", second / "myserve")
    monkeypatch.chdir(second)
    sys.path[:0] = [str(user_dir), str(second)]  # the working directory is on the path, after another project
    with pytest.raises(TargetError, match=r"an earlier sys\.path entry holds that name"):
        resolve_target("myserve.sched:run")


def test_a_package_edited_after_its_import_is_refused(user_dir: Path) -> None:
    """In one process, an edit to the target's package (here a helper module) after the first profile would
    leave the old code running under the new line numbers."""
    resolve_target("myserve.sched:run")
    helper = user_dir / "myserve" / "queue.py"
    helper.write_text(helper.read_text() + "\n# edited\n")
    with pytest.raises(TargetError, match=r"queue\.py was edited after this process imported it"):
        resolve_target("myserve.sched:run")
    importlib.reload(sys.modules["myserve.queue"])  # IPython's %autoreload: the new code is what runs now
    assert resolve_target("myserve.sched:run").name == "myserve.sched:run"


def test_a_scripts_sibling_edited_after_its_import_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file outside any package runs anew each time, but the module it imports beside it is Python's to keep."""
    (tmp_path / "loop.py").write_text("import siblinghelper\n\n\ndef step():\n    return siblinghelper.value()\n")
    helper = tmp_path / "siblinghelper.py"
    helper.write_text("def value():\n    return 1\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        resolve_target(f"{tmp_path / 'loop.py'}:step")
        helper.write_text("def value():\n    return 2\n")
        with pytest.raises(TargetError, match=r"siblinghelper\.py was edited after this process imported it"):
            resolve_target(f"{tmp_path / 'loop.py'}:step")
    finally:
        sys.modules.pop("siblinghelper", None)


def test_setup_return_value_goes_to_the_step(user_dir: Path) -> None:
    target = resolve_target("myserve.sched:step", {"n": "8"}, setup="make_state")
    state = target.setup()
    assert state.lengths.tolist() == [0, 1, 2, 3, 4, 5, 6, 0] and state.budget == 16
    target.step(state)
    assert target.params == {"n": 8}
    qualified = resolve_target("myserve.sched:step", setup="myserve.sched:make_state")
    assert qualified.setup().lengths.numel() == 64


def test_device_is_what_gets_recorded_whatever_the_parameters(user_dir: Path) -> None:
    no_device = resolve_target("myserve.sched:step", setup="make_state", device="cuda")
    assert no_device.device == "cuda"
    assert no_device.params == {"device": "cuda"}  # make_state has a device parameter: it gets the value too
    bare = resolve_target("myserve.sched:run", device="cuda:1")  # run() has none: recorded, not passed
    assert bare.device == "cuda:1" and bare.params == {}
    via_options = resolve_target("myserve.sched:run", {"device": "cuda"})
    assert via_options.device == "cuda" and via_options.params == {}
    with pytest.raises(UsageError, match="unknown device 'tpu'"):
        resolve_target("myserve.sched:run", device="tpu")


def test_missing_package_error_says_where_it_looked(user_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TargetError, match=r"No module named 'myserve'.*working directory.*myserve/sched.py"):
        resolve_target("myserve.sched:step")


def test_bad_names_and_options(user_dir: Path) -> None:
    with pytest.raises(TargetError, match="did you mean 'hicache-dcp'"):
        resolve_target("hicache-dc")
    with pytest.raises(TargetError, match=r"has no function 'stepp'; its functions: .*step"):
        resolve_target("myserve.sched:stepp")
    with pytest.raises(UsageError, match=r"has no parameter 'colour' \(options: .*--n"):
        resolve_target("myserve.sched:step", {"colour": "red"}, setup="make_state")
    with pytest.raises(UsageError, match="not a valid int"):
        resolve_target("myserve.sched:run", {"n": "many"})
    with pytest.raises(UsageError, match="step\\(\\) needs --queue"):
        resolve_target("myserve.sched:step")
    with pytest.raises(UsageError, match="--setup is for module:function"):
        resolve_target("hicache-dcp", setup="x")


def test_standalone_script_keeps_its_folder_importable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "helper_mod_for_tool.py").write_text("VALUE = 3\n")
    (tmp_path / "tool.py").write_text("import helper_mod_for_tool\n\ndef f(k: int = 1):\n"
                                      "    return helper_mod_for_tool.VALUE * k\n")
    monkeypatch.chdir(tmp_path)
    saved = list(sys.path)
    try:
        target = resolve_target("tool.py:f", {"k": "2"})
        assert target.step(target.setup()) == 6 and target.name == "tool:f"
        assert target.project_root == os.path.abspath(tmp_path)
    finally:
        sys.path[:] = saved
        sys.modules.pop("helper_mod_for_tool", None)
        sys.modules.pop("synchunt_target_tool", None)


def test_parameter_types_from_annotations_then_defaults() -> None:
    def f(a: int, b=2.5, c=True, d="x", e: int | None = None, f=None, g: list | None = None):
        return None

    assert parameter_types(f) == {"a": int, "b": float, "c": bool, "d": str, "e": int, "f": str, "g": str}


def test_title_names_a_workload_variant() -> None:
    target = Target(name="hicache-dcp", label="masked", setup=lambda: None, step=lambda s: None, thread_name="x")
    assert target.title == "hicache-dcp masked"


def test_no_warm_up_is_said_once_as_a_note_not_as_torchs_warning(tmp_path, recwarn) -> None:
    from synchunt.capture import CaptureSettings, capture, resolve_target

    (tmp_path / "step.py").write_text("import torch\n\n\ndef step():\n    return torch.ones(2).sum()\n")
    captured = capture(resolve_target(f"{tmp_path / 'step.py'}:step"), tmp_path / "out",
                       CaptureSettings(warmup=0, guard=False))
    assert any(note.startswith("no warm-up step") for note in captured.notes)
    assert not [w for w in recwarn if "warmup" in str(w.message)]
    warm = capture(resolve_target(f"{tmp_path / 'step.py'}:step"), tmp_path / "out2", CaptureSettings(guard=False))
    assert not any(note.startswith("no warm-up step") for note in warm.notes)
