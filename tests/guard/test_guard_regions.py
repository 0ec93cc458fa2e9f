"""forbid_syncs / allow_syncs / watch semantics: raising, regions, decorators, lines, stacks and threads."""

from __future__ import annotations

import inspect
import threading

import pytest
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

import synchunt
from synchunt.errors import SynchuntError
from synchunt.guard import SyncError, allow_syncs, forbid_syncs, is_guarded, watch

X = torch.arange(10, dtype=torch.float32)
MASK = X > 4


def _line_of(function: object, needle: str) -> int:
    """The absolute line number of the first source line of ``function`` containing ``needle``."""
    lines, start = inspect.getsourcelines(function)
    for offset, line in enumerate(lines):
        if needle in line:
            return start + offset
    raise AssertionError(f"{needle!r} not in {function}")


def two_syncs() -> float:
    selected = X[MASK]  # first sync
    return selected.sum().item()  # second sync


def caller() -> float:
    return two_syncs()  # calls the syncing function


def test_package_exports_the_guard_lazily() -> None:
    assert synchunt.watch is watch and synchunt.SyncError is SyncError
    assert issubclass(SyncError, SynchuntError) and SyncError.exit_code == 1


def test_records_carry_the_exact_line_function_and_user_stack_innermost_first() -> None:
    with watch() as recorder:
        caller()
    first, second = recorder.syncs
    assert (first.rule, first.function, first.line) == ("SH101", "two_syncs", _line_of(two_syncs, "# first"))
    assert (second.rule, second.line) == ("SH109", _line_of(two_syncs, "# second"))
    assert first.file == __file__
    assert first.stack[0].line == first.line
    assert (first.stack[1].function, first.stack[1].line) == ("caller", _line_of(caller, "# calls"))
    assert first.stack[2].function == inspect.currentframe().f_code.co_name
    library = ("/torch/", "/_pytest/", "/pluggy/", "/synchunt/guard/")
    assert not [frame for frame in first.stack if any(part in frame.file for part in library)]


def test_forbid_raises_at_exit_with_every_sync() -> None:
    reached_end = False
    with pytest.raises(SyncError) as caught, forbid_syncs():
        two_syncs()
        two_syncs()
        reached_end = True
    assert reached_end, "exit mode lets the region finish"
    assert [record.rule for record in caught.value.syncs] == ["SH101", "SH109", "SH101", "SH109"]
    message = str(caught.value)
    assert message.startswith("4 device-to-host syncs in a forbid_syncs() region (SH101 ×2, SH109 ×2):")
    assert f"{__file__}:{_line_of(two_syncs, '# first')} in two_syncs" in message
    assert f"{__file__}:{_line_of(caller, '# calls')} in caller" not in message  # not called through caller
    assert "aten::index" in message and "aten::item" in message


def test_forbid_first_raises_at_the_first_sync_after_the_op_ran() -> None:
    ran: list[str] = []
    with pytest.raises(SyncError) as caught, forbid_syncs(raise_at="first"):
        ran.append("before")
        two_syncs()
        ran.append("after")
    assert ran == ["before"]
    (record,) = caught.value.syncs
    assert (record.rule, record.line) == ("SH101", _line_of(two_syncs, "# first"))


def test_forbid_rejects_an_unknown_raise_at() -> None:
    with pytest.raises(SynchuntError, match="raise_at"):
        forbid_syncs(raise_at="never")  # type: ignore[arg-type]


def test_forbid_passes_a_sync_free_region_and_lets_other_errors_through() -> None:
    with forbid_syncs():
        X[1::2].sum()
    with pytest.raises(ValueError, match="boom"), forbid_syncs():
        X[MASK]
        raise ValueError("boom")


def test_allow_region_records_the_reason_and_does_not_raise() -> None:
    with forbid_syncs() as guard, allow_syncs(reason="one read per step"):
        X.sum().item()
    (record,) = guard.syncs
    assert record.allowed and record.allow_reason == "one read per step"
    assert guard.violations == [] and guard.count() == 0
    with forbid_syncs(raise_at="first"), allow_syncs(reason="also in first mode"):
        X.sum().item()


def test_allow_outside_the_region_does_not_leak() -> None:
    with pytest.raises(SyncError) as caught, forbid_syncs():
        with allow_syncs(reason="setup"):
            X.sum().item()
        X[MASK]
    (record,) = caught.value.syncs
    assert record.rule == "SH101" and not record.allowed


def test_allow_needs_a_reason() -> None:
    with pytest.raises(SynchuntError, match="reason"):
        allow_syncs(reason=" ")


def test_decorator_forms() -> None:
    recorder = watch()

    @recorder
    def step() -> None:
        X[MASK]

    step()
    step()
    assert recorder.count("SH101") == 2 and recorder.count("SH109") == 0
    assert [site.count for site in recorder.by_site()] == [2]

    @forbid_syncs()
    def forbidden() -> None:
        X.sum().item()

    with pytest.raises(SyncError):
        forbidden()
    with pytest.raises(SyncError):  # every call is checked on its own
        forbidden()

    @allow_syncs(reason="decorated")
    def allowed() -> float:
        return X.sum().item()

    with forbid_syncs() as guard:
        allowed()
    assert guard.syncs[0].allow_reason == "decorated"


def test_recursive_decorated_function_records_each_sync_once() -> None:
    recorder = watch()

    @recorder
    def recurse(depth: int) -> None:
        X.sum().item()
        if depth:
            recurse(depth - 1)

    recurse(2)
    assert recorder.count("SH109") == 3


def test_nested_guards_both_see_the_sync() -> None:
    with watch() as outer:
        with watch() as inner:
            X[MASK]
        X.tolist()
    assert [r.rule for r in inner.syncs] == ["SH101"]
    assert [r.rule for r in outer.syncs] == ["SH101", "SH201"]


def test_latent_false_ignores_host_tensor_syncs_but_keeps_the_record() -> None:
    with forbid_syncs(latent=False) as guard:
        X[MASK]
    assert len(guard.syncs) == 1 and guard.syncs[0].latent
    assert guard.count() == 0


def _library_helper() -> object:
    """A function that lives in a module named ``mylib.helpers`` (compiled here, no file needed)."""
    namespace: dict[str, object] = {"__name__": "mylib.helpers", "X": X, "MASK": MASK}
    exec(compile("def select():\n    return X[MASK]\n", "<mylib/helpers.py>", "exec"), namespace)
    return namespace["select"]


def test_skip_modules_moves_the_line_to_the_caller() -> None:
    select = _library_helper()
    with watch() as default:
        select()  # the call site
    with watch(skip_modules=["mylib"]) as skipping:
        select()  # the call site
    assert (default.syncs[0].function, default.syncs[0].line) == ("select", 2)
    this_test = test_skip_modules_moves_the_line_to_the_caller
    assert skipping.syncs[0].function == this_test.__name__
    assert skipping.syncs[0].line == _line_of(this_test, "select()  # the call site") + 2


def test_patches_and_mode_are_gone_after_exit() -> None:
    names = ("tolist", "cpu", "numpy", "__bool__", "is_nonzero")
    originals = {name: getattr(torch.Tensor, name) for name in names}
    original_is_nonzero = torch.is_nonzero
    with watch():
        assert is_guarded()
        assert torch.Tensor.tolist is not originals["tolist"] and torch.is_nonzero is not original_is_nonzero
    assert not is_guarded()
    assert {name: getattr(torch.Tensor, name) for name in originals} == originals
    assert not set(names) & set(vars(torch.Tensor))
    assert torch.is_nonzero is original_is_nonzero
    assert _get_current_dispatch_mode() is None


def _sync_repeatedly(results: dict[str, object], start: threading.Event, done: threading.Event) -> None:
    start.wait(timeout=10)
    values = []
    for _ in range(50):
        values.append((X[MASK].numel(), X.sum().item(), len(X.tolist()), bool(X[1])))
    results["values"] = values
    results["guarded"] = is_guarded()
    done.set()


def test_only_the_entering_thread_is_checked() -> None:
    results: dict[str, object] = {}
    start, done = threading.Event(), threading.Event()
    worker = threading.Thread(target=_sync_repeatedly, args=(results, start, done), name="worker")
    worker.start()
    with watch() as recorder:
        start.set()
        assert done.wait(timeout=30)
        X.sum().item()
    worker.join()
    assert results["guarded"] is False
    assert results["values"] == [(5, 45.0, 10, True)] * 50  # the worker ran unaffected, concurrently
    assert [(r.rule, r.thread) for r in recorder.syncs] == [("SH109", "MainThread")]


def test_a_forbidding_thread_is_not_failed_by_another_threads_syncs() -> None:
    outcome: dict[str, object] = {}
    entered, finished = threading.Event(), threading.Event()

    def guarded_worker() -> None:
        try:
            with forbid_syncs():
                entered.set()
                finished.wait(timeout=30)
                X[1::2].sum()
            outcome["error"] = None
        except SyncError as error:
            outcome["error"] = error

    worker = threading.Thread(target=guarded_worker, name="guarded")
    worker.start()
    assert entered.wait(timeout=10)
    for _ in range(20):
        X[MASK].sum().item()  # syncs on the main thread while the worker's guard is active
    finished.set()
    worker.join()
    assert outcome == {"error": None}


def test_guards_on_two_threads_record_separately() -> None:
    records: dict[str, list[str]] = {}
    barrier = threading.Barrier(2)

    def run(name: str, snippet: object) -> None:
        with watch() as recorder:
            barrier.wait(timeout=10)
            for _ in range(10):
                snippet()
            barrier.wait(timeout=10)
        records[name] = [*sorted({f"{r.rule}@{r.thread}" for r in recorder.syncs}), str(len(recorder.syncs))]

    threads = [threading.Thread(target=run, args=("a", lambda: X[MASK]), name="a"),
               threading.Thread(target=run, args=("b", lambda: X.tolist()), name="b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert records == {"a": ["SH101@a", "10"], "b": ["SH201@b", "10"]}
