"""The files linted together as one program: a sync in a function nothing calls never runs as shipped, so its
finding is lowered to low confidence, saying why; whatever may be called from elsewhere stays reported."""

from __future__ import annotations

from pathlib import Path

from synchunt.findings import Confidence
from synchunt.lint import lint_files, lint_paths
from synchunt.lint.program import ProgramIndex, summarize_file, unreached
from synchunt.lint.program.names import module_aliases, module_name

PACKAGE = {
    "__init__.py": "from .api import serve\n",
    "api.py": '''
import concurrent.futures

from . import ops


def serve(batch):
    return ops.step(batch)


def _debug_dump(t):
    print(t.tolist())


def submit(pool: concurrent.futures.Executor, t):
    return pool.submit(ops.callback, t), getattr(ops, "by_name")(t)
''',
    "ops.py": '''
import torch


def step(t: torch.Tensor):
    return t.sum().item()


def legacy(t: torch.Tensor):
    return torch.nonzero(t)


def callback(t: torch.Tensor):
    return t.cpu()


def by_name(t: torch.Tensor):
    return t.tolist()


class Base:
    def run(self, t):
        return self.hook(t)

    def hook(self, t):
        return t


class Impl(Base):
    def hook(self, t: torch.Tensor):
        return t.item()


class Layer(torch.nn.Module):
    def extra(self, t: torch.Tensor):
        return t.cpu()
''',
    "cli.py": '''
import torch

from pkg.ops import step


def main(t: torch.Tensor):
    return step(t) + t.max().item()
''',
}


def _package(root: Path) -> Path:
    package = root / "pkg"
    package.mkdir()
    for name, text in PACKAGE.items():
        (package / name).write_text(text)
    (root / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    return package


def _by_function(findings) -> dict[str, tuple[str, str]]:
    return {finding.scope: (finding.confidence.value, finding.message) for finding in findings}


def test_what_nothing_calls_is_lowered_and_says_why(tmp_path):
    package = _package(tmp_path)
    found = _by_function(lint_paths([package]))
    assert found["legacy"][0] == "low" and "nothing in the files linted calls `legacy`" in found["legacy"][1]
    assert found["_debug_dump"][0] == "low"
    for reached in ("step", "callback", "by_name", "Impl.hook", "Layer.extra", "main"):
        assert found[reached][0] == "medium", reached  # called, handed on, looked up, overriding, framework, entry
    unreached_findings = [f for f in lint_paths([package]) if f.scope == "legacy"]
    assert unreached_findings[0].context == "cold" and unreached_findings[0].severity.value == "note"


def test_the_default_output_leaves_them_out_and_one_file_alone_keeps_them(tmp_path):
    package = _package(tmp_path)
    default = {finding.scope for finding in lint_files([package], min_confidence=Confidence.MEDIUM).findings}
    assert "legacy" not in default and "step" in default
    alone = _by_function(lint_paths([package / "ops.py"]))  # a pre-commit hook on one file: no program
    assert alone["legacy"][0] == "medium"


def test_a_library_linted_alone_has_no_unreached_code(tmp_path):
    """Modules no other module imports are entry points (scripts, or a library's API used from elsewhere)."""
    library = tmp_path / "lib"
    library.mkdir()
    (library / "a.py").write_text("import torch\n\ndef f(t: torch.Tensor):\n    return t.item()\n")
    (library / "b.py").write_text("import torch\n\ndef g(t: torch.Tensor):\n    return t.cpu()\n")
    assert {finding.confidence for finding in lint_paths([library])} == {Confidence.MEDIUM}


def test_index_resolves_calls_through_imports_and_reexports(tmp_path):
    package = _package(tmp_path)
    summaries = [summarize_file(__import__("ast").parse(path.read_text()), str(path)) for path in package.glob("*.py")]
    index = ProgramIndex([summary for summary in summaries if summary is not None])
    assert [site.caller for site in index.sites_of("pkg.ops", "step")] in (["serve", "main"], ["main", "serve"])
    assert index.closed("pkg.ops", "legacy") and not index.closed("pkg.ops", "callback")
    assert ("pkg.api", "serve") in index.exported  # `from .api import serve` in the package's __init__
    # `Base.run` has no caller, so neither has the `Base.hook` it calls (`Impl.hook` overrides it: a root)
    assert unreached(index) == {("pkg.ops", "legacy"), ("pkg.api", "_debug_dump"), ("pkg.ops", "Base.run"),
                                ("pkg.ops", "Base.hook")}


def test_a_class_imported_only_for_annotations_is_not_reexported(tmp_path):
    """`coordinator: Optional[Coordinator]` uses the import: the class's uncalled methods stay unreached. An import
    nothing uses at all (a package's API) still makes the class's methods callable from elsewhere."""
    package = tmp_path / "srv"
    package.mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'srv'\n")
    (package / "__init__.py").write_text("")
    (package / "coord.py").write_text(
        "import torch\n\n\nclass Coordinator:\n    def step(self, t: torch.Tensor):\n        return t + 1\n\n"
        "    def oracle(self, t: torch.Tensor):\n        return t.tolist()\n")
    (package / "sched.py").write_text(
        "from __future__ import annotations\n\nfrom typing import Optional\n\nfrom srv.coord import Coordinator\n\n\n"
        "class Scheduler:\n    coordinator: Optional[Coordinator] = None\n\n"
        "    def run(self, t):\n        return self.coordinator.step(t)\n")
    assert _by_function(lint_paths([package]))["Coordinator.oracle"][0] == "low"
    (package / "api.py").write_text("from srv.coord import Coordinator\n")  # re-exported: callable from outside
    assert _by_function(lint_paths([package]))["Coordinator.oracle"][0] == "medium"
    (package / "api.py").unlink()
    (package / "__init__.py").write_text(  # a package's API, even where its own annotations use the name
        "from srv.coord import Coordinator\n\n\ndef advance(coordinator: Coordinator, t):\n"
        "    return coordinator.step(t)\n")
    assert _by_function(lint_paths([package]))["Coordinator.oracle"][0] == "medium"


def test_namespace_packages_give_longer_names(tmp_path):
    path = tmp_path / "proj" / "ns" / "pkg" / "mod.py"
    path.parent.mkdir(parents=True)
    (path.parent / "__init__.py").write_text("")
    path.write_text("")
    (tmp_path / "proj" / "setup.py").write_text("")
    assert module_name(path) == ("pkg.mod", False)
    assert module_aliases(path) == ["ns.pkg.mod"]  # `ns` has no __init__.py; the project root ends the names


def test_linting_from_inside_a_package_gives_the_same_answer(tmp_path, monkeypatch):
    """`cd pkg && synchunt lint .` names the files as `synchunt lint pkg` does from above: the same program."""
    package = _package(tmp_path)
    above = _by_function(lint_paths([package]))
    monkeypatch.chdir(package)
    assert module_name("ops.py") == ("pkg.ops", False)
    inside = _by_function(lint_paths([Path(".")]))
    assert inside["legacy"] == above["legacy"] and inside["legacy"][0] == "low"
    assert inside == above


VENDORED = {
    "app/__init__.py": "",
    "app/serve.py": '''
import app.loader
from app.ops import fast
import kernels.routing as routing
from app.loader import patched
from kernels import launch
from kernels.numerics import convert


def step(t, model):
    model.forward = patched.__get__(model)
    return fast(t), routing.route(t), convert(t), app.loader.load(t), launch(t)
''',
    "app/ops.py": '''
import functools

import torch

try:
    fast = torch.ops.app.fast
except AttributeError:
    def fast(t):
        return t


@functools.lru_cache
def table(n: int):
    return torch.tensor([n], device="cuda")


def reference(t: torch.Tensor):
    return t.nonzero()


reference.cache = {}
''',
    "app/loader.py": '''
import torch


def load(t: torch.Tensor):
    return t.cpu()


def unused(t: torch.Tensor):
    return t.tolist()


def patched(self, t: torch.Tensor):
    return t.item()
''',
    "app/third_party/__init__.py": "",
    "app/third_party/kernels/__init__.py": '''
import torch


def launch(t: torch.Tensor):
    return t.nonzero()


def launch_reference(t: torch.Tensor):
    return t.unique()
''',
    "app/third_party/kernels/routing.py": '''
import torch


def route(t: torch.Tensor):
    return t.sum().item()


def route_torch(t: torch.Tensor):
    return t.max().item()
''',
    "app/third_party/kernels/numerics.py": '''
import torch


def convert(t: torch.Tensor):
    return t.tolist()


def convert_torch(t: torch.Tensor):
    return t.any().item()
''',
}


def test_imports_by_a_vendored_name_by_module_and_of_assigned_names_are_followed(tmp_path):
    """`import kernels.routing` and `from kernels import launch` of `app/third_party/kernels` (put on sys.path or
    in sys.modules by the app) name those modules; `import app.loader` and `from app.ops import fast` (a name
    bound by assignment) import theirs. Their modules are then no entry points: what nothing calls in them is
    unreached. A function read as an object (`reference.cache`) or wrapped by `lru_cache` is still called only by
    its name; one handed on through `patched.__get__(model)` may be called from anywhere."""
    for name, text in VENDORED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    found = {finding.scope: finding.confidence.value for finding in lint_paths([tmp_path / "app"])}
    reached = ("route", "convert", "load", "launch", "patched")  # `patched.__get__(model)` hands it on
    assert {name: found[name] for name in reached} == dict.fromkeys(reached, "medium")
    unreached_names = ("route_torch", "convert_torch", "unused", "reference", "table", "launch_reference")
    assert {name: found[name] for name in unreached_names} == dict.fromkeys(unreached_names, "low")
