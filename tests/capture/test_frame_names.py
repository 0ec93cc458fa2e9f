"""Python frame names made canonical after torch wrote them (synchunt.capture.frame_names).

torch reads the prefixes it strips from frame files once per process; a capture after another profiled window
must still name the project's files as the runtime guard and the source map do.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

from synchunt.capture.frame_names import frame_file_resolver, rename_frame_files
from synchunt.source_map import canonical_path, search_entries


def _event(name: str, cat: str = "python_function") -> str:
    return f'  {{\n    "ph": "X", "cat": "{cat}",\n    "name": {json.dumps(name)},\n    "pid": 1, "ts": 1\n  }}'


def _body(*events: str) -> bytes:
    return ('{\n  "traceEvents": [\n' + ",\n".join(events) + '\n  ]\n}\n').encode()


def test_only_python_frame_files_are_renamed_and_escapes_survive() -> None:
    body = _body(_event("sched.py(12): step"), _event("sched.py(40): helper"), _event('we"ird\\x.py(3): f'),
                 _event("sched.py(7): looks_like_a_frame", cat="user_annotation"),
                 _event("<built-in method add of type object at 0x1>"))
    moved = {"sched.py": "app/sched.py", 'we"ird\\x.py': "é/x.py"}
    renamed = rename_frame_files(body, lambda file: moved.get(file, file))
    names = [event["name"] for event in json.loads(renamed)["traceEvents"]]
    assert names == ["app/sched.py(12): step", "app/sched.py(40): helper", "é/x.py(3): f",
                     "sched.py(7): looks_like_a_frame", "<built-in method add of type object at 0x1>"]


def test_nothing_to_rename_returns_the_same_bytes() -> None:
    body = _body(_event("app/sched.py(12): step"))
    assert rename_frame_files(body, lambda file: file) is body


def test_the_file_runs_to_the_last_line_number_as_readers_split_it() -> None:
    body = _body(_event("odd(2): dir/x.py(3): f"))
    seen: list[str] = []
    rename_frame_files(body, lambda file: seen.append(file) or file)
    assert seen == ["odd(2): dir/x.py"]


def _project(tmp_path: Path) -> tuple[Path, list[str], object]:
    root = tmp_path / "proj"
    files = ("app/sched.py", "app/utils.py", "app/textwrap.py", "pkg/mod.py", "other/mod.py")
    for relative in files:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("x = 1\n")
    entries = search_entries([str(root), sysconfig.get_paths()["stdlib"]])
    return root, [str(root / relative) for relative in files], lambda file: canonical_path(file, str(root), entries)


def test_a_name_relative_to_a_stale_prefix_is_resolved_through_the_loaded_files(tmp_path: Path) -> None:
    root, loaded, canonical = _project(tmp_path)
    # the interpreter's own modules are loaded too: a stale bare name is looked up among the user's files first
    library = [module.__file__ for module in (json, subprocess, textwrap)]
    resolve = frame_file_resolver([*loaded, *library], canonical)
    assert resolve("sched.py") == "app/sched.py"  # named from root/app, an entry of an earlier sys.path
    assert resolve("utils.py") == "app/utils.py"  # however many library files end with utils.py
    assert resolve("app/textwrap.py") == "app/textwrap.py"
    assert resolve("app/sched.py") == "app/sched.py"  # already as the naming path names it
    assert resolve(str(root / "pkg/mod.py")) == "pkg/mod.py"  # absolute: no prefix held it
    assert resolve("mod.py") == "mod.py"  # two of the user's files end so: left as it is
    assert resolve("json/__init__.py") == "json/__init__.py"  # a library file keeps its name
    assert resolve("textwrap.py") == "textwrap.py"  # the standard library's, named as a fresh list names it
    assert resolve("attribute/textwrap.py") == "attribute/textwrap.py"  # no loaded file ends so
    assert resolve("gone.py") == "gone.py"
    assert resolve("<string>") == "<string>"


def test_a_capture_after_another_profiled_window_names_files_as_the_guard_does(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "serve").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (project / "serve" / "step.py").write_text(textwrap.dedent("""\
        import torch


        def setup():
            return torch.arange(16.0)


        def step(x):
            kept = x[x > 3]
            return kept.sum()
        """))
    # An earlier window profiled with the target's folder on sys.path: torch's prefixes are fixed from then on.
    script = textwrap.dedent(f"""\
        import gzip, json, sys
        sys.path.insert(0, {str(project / "serve")!r})
        import torch
        from torch.profiler import ProfilerActivity, profile
        import step as earlier
        with profile(activities=[ProfilerActivity.CPU], with_stack=True):
            earlier.step(earlier.setup())
        sys.path.pop(0)
        import synchunt
        from synchunt.capture import capture, resolve_target
        target = resolve_target({str(project / "serve" / "step.py") + ":step"!r}, setup="setup")
        path = capture(target, {str(tmp_path / "out")!r}).path
        names = sorted({{e["name"].split("(")[0] for e in json.load(gzip.open(path))["traceEvents"]
                        if e.get("cat") == "python_function" and "step.py" in e.get("name", "")}})
        analysis = synchunt.analyze(path)
        print(json.dumps({{"names": names, "diverged": analysis.traces[0].guard_diverged,
                          "signals": sorted({{list(r.signals).__repr__() for r in analysis.records}}),
                          "files": sorted({{r.call_site.file for r in analysis.records if r.call_site}})}}))
        """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["names"] == ["serve/step.py"]
    assert result["files"] == ["serve/step.py"]
    assert result["diverged"] == 0
    assert result["signals"] == ["['trace', 'guard']"]
