"""Library or user code by where a file lives, one canonical name per file, and the frame filter that uses them."""

from __future__ import annotations

import os
import sysconfig
import types
from pathlib import Path

import pytest

from synchunt.sites import Frame, FrameFilter
from synchunt.source_map import (
    SITE_PACKAGES,
    STDLIB,
    USER,
    SourceMap,
    build_source_map,
    canonical_path,
    captured_sources,
    file_digest,
    find_project_root,
    find_source,
    location_kind,
    naming_path,
    search_entries,
    trace_name,
)

STDLIB_DIR = sysconfig.get_paths()["stdlib"]


def _module(name: str, file: Path) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(file)
    return module


def test_location_kinds() -> None:
    assert location_kind(os.path.join(STDLIB_DIR, "queue.py")) == STDLIB
    assert location_kind("/opt/venv/lib/python3.11/site-packages/torch/functional.py") == SITE_PACKAGES
    assert location_kind("/usr/lib/python3/dist-packages/numpy/core.py") == SITE_PACKAGES
    assert location_kind("/home/me/proj/myserve/queue.py") == USER


def test_trace_name_uses_the_longest_prefix() -> None:
    prefixes = ["/a", "/a/b", "/c"]
    assert trace_name("/a/b/x.py", prefixes) == "x.py"
    assert trace_name("/a/bz/x.py", prefixes) == "bz/x.py"
    assert trace_name("/elsewhere/x.py", prefixes) == "/elsewhere/x.py"


def test_naming_path_drops_user_folders_inside_the_project(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    venv_site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    entries = search_entries([str(root / "myserve"), str(root / "src"), str(tmp_path / "other"), str(venv_site),
                              STDLIB_DIR])
    naming = naming_path(str(root), entries)
    assert str(root / "myserve") not in naming and str(root / "src") not in naming
    assert str(tmp_path / "other") in naming and str(venv_site) in naming and naming[-1] == str(root)
    # A file imported through its own folder is still named from the root; an installed one from site-packages.
    assert trace_name(str(root / "myserve" / "sched.py"), naming) == "myserve/sched.py"
    assert trace_name(str(venv_site / "torch" / "nn.py"), naming) == "torch/nn.py"
    assert canonical_path(str(root / "myserve" / "queue.py"), str(root), entries) == "myserve/queue.py"
    assert canonical_path("<string>", str(root), entries) == "<string>"


def test_project_root(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "myserve").mkdir(parents=True)
    (plain / "myserve" / "__init__.py").write_text("")
    (plain / "myserve" / "sched.py").write_text("")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # No project marker: the folder the top-level package is imported from, wherever synchunt runs.
    assert find_project_root(plain / "myserve" / "sched.py", cwd=elsewhere) == plain
    assert find_project_root(plain / "myserve" / "sched.py", module="myserve.sched", cwd=elsewhere) == plain
    assert find_project_root(plain / "myserve" / "__init__.py", module="myserve", cwd=elsewhere) == plain
    # A marker wins.
    marked = tmp_path / "marked"
    (marked / "src" / "pkg").mkdir(parents=True)
    (marked / "pyproject.toml").write_text("")
    (marked / "src" / "pkg" / "__init__.py").write_text("")
    assert find_project_root(marked / "src" / "pkg" / "m.py") == marked
    # A standalone script: the working directory when it is inside it, else its own folder.
    (plain / "tools").mkdir()
    assert find_project_root(plain / "tools" / "run.py", cwd=plain) == plain
    assert find_project_root(plain / "tools" / "run.py", cwd=elsewhere) == plain / "tools"


def test_build_source_map_decides_by_location_and_package(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    site_dir = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    modules = {
        "myserve.queue": _module("myserve.queue", root / "myserve" / "queue.py"),
        "queue": _module("queue", Path(STDLIB_DIR) / "queue.py"),
        "torch.nn": _module("torch.nn", site_dir / "torch" / "nn.py"),
        "installed_user.mod": _module("installed_user.mod", site_dir / "installed_user" / "mod.py"),
        "synchunt.capture": _module("synchunt.capture", root / "synchunt" / "capture" / "__init__.py"),
        "builtin": types.ModuleType("builtin"),
    }
    sources = build_source_map(str(root), library_packages=("synchunt", "torch"), user_packages=("installed_user",),
                               search_path=[str(root / "myserve"), str(site_dir), STDLIB_DIR], modules=modules)
    assert sources.user_files == {"myserve/queue.py": "myserve.queue", "installed_user/mod.py": "installed_user.mod"}
    again = SourceMap.from_metadata({"sources": sources.to_json()})
    assert again == sources


def test_the_map_keeps_a_digest_of_each_user_file_and_finds_only_that_content(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "app").mkdir(parents=True)
    source = root / "app" / "loop.py"
    source.write_text("x = 1\n")
    modules = {"app.loop": _module("app.loop", source)}
    sources = build_source_map(str(root), library_packages=(), search_path=[str(root)], modules=modules)
    assert sources.digests == {"app/loop.py": file_digest(str(source))}
    captured = captured_sources([{"sources": sources.to_json()}])
    assert captured.find("app/loop.py") == str(source)
    source.write_text("x = 2\n")  # edited after the capture: no longer the file that ran
    assert captured.find("app/loop.py") is None
    assert find_source("app/loop.py", [str(root)]) == str(source)  # without digests, as before
    ran = build_source_map(str(root), library_packages=(), search_path=[str(root)], modules=modules,
                           as_imported={str(source): "0" * 32})  # the file as its module was imported: what ran
    assert ran.digests == {"app/loop.py": "0" * 32}
    forged = {"sources": {**sources.to_json(), "digests": {"app/loop.py": 7, "x.py": "ab"}}}
    assert SourceMap.from_metadata(forged).digests == {"x.py": "ab"}  # a malformed digest is left out


@pytest.mark.parametrize("metadata", [None, {}, {"sources": []}, {"sources": {"project_root": 3}},
                                      {"sources": {"project_root": "/p", "user_files": [], "search_path": []}}])
def test_malformed_or_missing_source_maps_are_none(metadata: object) -> None:
    assert SourceMap.from_metadata(metadata) is None  # type: ignore[arg-type]


def test_frame_filter_with_a_source_map_ignores_stdlib_like_names() -> None:
    meta = {"sources": {"project_root": "/p", "search_path": [],
                        "user_files": {"queue.py": "queue_user", "platform/x.py": "platform.x",
                                       "myserve/sched.py": "myserve.sched"}}}
    bound = FrameFilter().for_trace(meta)
    assert bound.is_user("queue.py") and bound.is_user("platform/x.py") and bound.is_user("myserve/sched.py")
    assert not bound.is_user("threading.py")  # not one of the user's files
    assert not bound.is_user("torch/functional.py") and not bound.is_user("<built-in method item>")
    # --skip-package still applies, by module name or by package folder.
    assert not FrameFilter.with_extra(["myserve"]).for_trace(meta).is_user("myserve/sched.py")
    # Without a map (traces captured elsewhere) the old by-name guess stands.
    assert not FrameFilter().for_trace({}).is_user("queue.py")
    assert FrameFilter().for_trace({}).is_user("myserve/sched.py")


def test_shown_stack_drops_pseudo_frames_and_the_runner() -> None:
    meta = {"sources": {"project_root": "/p", "search_path": [], "user_files": {"myserve/sched.py": "myserve.sched"}}}
    stack = [Frame("<built-in method item of Tensor object at 0x7f>", 0, ""),
             Frame("torch/_tensor.py", 40, "wrapped"),
             Frame("myserve/sched.py", 15, "maybe_evict"),
             Frame("myserve/sched.py", 43, "step"),
             Frame("synchunt/capture/targets.py", 150, "<lambda>"),
             Frame("synchunt/capture/profiler.py", 140, "_run"),
             Frame("threading.py", 975, "run")]
    shown = FrameFilter().for_trace(meta).shown_stack(stack)
    assert [f.label for f in shown] == ["torch/_tensor.py:40 wrapped", "myserve/sched.py:15 maybe_evict",
                                        "myserve/sched.py:43 step"]
    no_user = FrameFilter().for_trace(meta).shown_stack([stack[0], stack[1], *stack[4:]])
    assert [f.label for f in no_user] == ["torch/_tensor.py:40 wrapped"]
