"""pytest plugin: fail tests that make device-to-host syncs (registered through the ``pytest11`` entry point).

A thin layer over :mod:`synchunt.guard`, which is imported only when a test asks for it, so loading the plugin
never imports torch.

- ``@pytest.mark.no_d2h_sync``: the test body runs under the guard; any sync fails the test with the list of
  syncs and their lines.
- ``sync_watch`` fixture: a :class:`synchunt.guard.Watch` active for the test, for assertions such as
  ``assert sync_watch.count("SH101") == 0``.
- ``--synchunt-guard=DIR`` (repeatable) or the ``synchunt_guard`` ini option: apply ``no_d2h_sync`` to every
  test under these directories; ``@pytest.mark.allow_d2h_sync(reason=...)`` exempts one test.
- ``--synchunt-device=shadow-cuda`` or the ``synchunt_device`` ini option: the whole session runs under the shadow
  device (a one-GPU machine emulated on the CPU, entered before collection so that module-level
  ``torch.cuda.is_available()`` checks see it); guarded tests then fail only on syncs of device data.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from synchunt.guard import SyncRecord, Watch

# Marker name → help line (the help shown by `pytest --markers`).
MARKERS: dict[str, str] = {
    "no_d2h_sync": "no_d2h_sync: fail the test if its body makes a device-to-host sync (synchunt runtime "
    "guard); the failure lists every sync with its rule, op and line.",
    "allow_d2h_sync": "allow_d2h_sync(reason): exempt this test from directories guarded with "
    "--synchunt-guard or the synchunt_guard ini option.",
}

GUARDED_DIRS_KEY = pytest.StashKey[tuple[Path, ...]]()
SHADOW_KEY = pytest.StashKey[Any]()
DEVICES = ("cpu", "shadow-cuda")  # what --synchunt-device accepts ("cpu": the tests' own devices, as without it)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("synchunt", "synchunt device-to-host sync guard")
    group.addoption(
        "--synchunt-guard",
        action="append",
        default=[],
        metavar="DIR",
        dest="synchunt_guard",
        help="fail every test under DIR that makes a device-to-host sync (repeatable).",
    )
    parser.addini(
        "synchunt_guard",
        type="paths",
        default=[],
        help="directories whose tests must not make device-to-host syncs (like --synchunt-guard).",
    )
    group.addoption(
        "--synchunt-device",
        default=None,
        choices=DEVICES,
        dest="synchunt_device",
        help="shadow-cuda: run the session as on a one-GPU machine, emulated on the CPU (a machine without a GPU); "
        "the guard then reports only syncs of device data.",
    )
    parser.addini("synchunt_device", default="cpu", help="like --synchunt-device (cpu or shadow-cuda).")


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS.values():
        config.addinivalue_line("markers", line)
    invocation_dir = config.invocation_params.dir
    from_cli = [(invocation_dir / directory).resolve() for directory in config.getoption("synchunt_guard")]
    from_ini = [Path(directory).resolve() for directory in config.getini("synchunt_guard")]
    config.stash[GUARDED_DIRS_KEY] = tuple(from_cli + from_ini)
    device = config.getoption("synchunt_device") or config.getini("synchunt_device") or "cpu"
    if device not in DEVICES:
        raise pytest.UsageError(f"synchunt_device = {device!r}: use one of {', '.join(DEVICES)}")
    if device == "shadow-cuda":
        from synchunt.errors import UsageError
        from synchunt.shadow import shadow_device

        try:
            config.stash[SHADOW_KEY] = shadow_device().__enter__()
        except UsageError as error:
            raise pytest.UsageError(str(error)) from None


def pytest_unconfigure(config: pytest.Config) -> None:
    shadow = config.stash.get(SHADOW_KEY, None)
    if shadow is not None:
        shadow.__exit__(None, None, None)
        del config.stash[SHADOW_KEY]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    shadow = config.stash.get(SHADOW_KEY, None)
    if shadow is not None and shadow.notes:
        terminalreporter.section("synchunt shadow device: what it could not follow")
        for note in shadow.notes:
            terminalreporter.line(note.describe())


def _is_under(path: Path, directories: Sequence[Path]) -> bool:
    return any(path == directory or directory in path.parents for directory in directories)


def _must_not_sync(item: pytest.Item) -> bool:
    """The marker closest to the test decides (a function's `allow_d2h_sync` exempts it from a module's
    `pytestmark = pytest.mark.no_d2h_sync`), else whether the test is under a guarded directory."""
    for marker in item.iter_markers():  # closest first: the function's, its class's, its module's
        if marker.name == "no_d2h_sync":
            return True
        if marker.name == "allow_d2h_sync":
            if not str(marker.kwargs.get("reason") or (marker.args[0] if marker.args else "")).strip():
                pytest.fail('allow_d2h_sync needs a reason: @pytest.mark.allow_d2h_sync(reason="..."), as '
                            "allow_syncs() does", pytrace=False)
            return False
    return _is_under(Path(item.path).resolve(), item.config.stash.get(GUARDED_DIRS_KEY, ()))


def _failure_text(syncs: Sequence[SyncRecord]) -> tuple[str, str]:
    """The failure message (summary line + one line per distinct sync) and the report section (with stacks).

    Identical records (same rule, op, line, thread and stack: a sync in a loop) are listed once with ``×N``.
    """
    from synchunt.guard import summarize_rules

    noun = "sync" if len(syncs) == 1 else "syncs"
    message = f"{len(syncs)} device-to-host {noun} in a test marked no_d2h_sync ({summarize_rules(syncs)})"
    groups = _grouped(syncs)
    return message + "\n" + _listing(groups, with_stack=False), _listing(groups, with_stack=True)


def _grouped(syncs: Sequence[SyncRecord]) -> list[tuple[SyncRecord, int]]:
    """Distinct records in first-seen order, each with how many times it happened."""
    counts: dict[SyncRecord, int] = {}
    for record in syncs:
        counts[record] = counts.get(record, 0) + 1
    return list(counts.items())


def _listing(groups: Sequence[tuple[SyncRecord, int]], *, with_stack: bool) -> str:
    lines: list[str] = []
    for number, (record, count) in enumerate(groups, start=1):
        lines.append(f"{number:>3}. {record.describe()}" + (f" ×{count}" if count > 1 else ""))
        if with_stack:
            lines.extend(f"       {frame}" for frame in record.stack[1:])
    return "\n".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    if not _must_not_sync(item):
        return (yield)
    from synchunt.guard import watch

    with watch(all_tasks=True) as recorder:  # an async test body runs in a task of this thread
        result = yield
    syncs = recorder.violations
    if syncs:
        message, section = _failure_text(syncs)
        item.add_report_section("call", "synchunt syncs", section)
        pytest.fail(message, pytrace=False)
    return result


@pytest.fixture
def sync_watch() -> Generator[Watch, None, None]:
    """A synchunt guard recorder active for the whole test: ``assert sync_watch.count("SH101") == 0``."""
    from synchunt.guard import watch

    with watch(all_tasks=True) as recorder:
        yield recorder
