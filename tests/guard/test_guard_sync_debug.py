"""Routing of torch's CUDA sync-debug warnings (the guard's second signal on CUDA), exercised on CPU.

A CPU build of torch cannot switch the sync debug mode, so the mode switch is replaced by a dictionary; the
warnings are issued exactly as torch issues them (a ``UserWarning`` on the thread that ran the op)."""

from __future__ import annotations

import threading
import warnings

import pytest
import torch

from synchunt.guard import Watch, scope
from synchunt.guard.patches import _SyncDebugSignal

MESSAGE = "called a synchronizing CUDA operation"


@pytest.fixture
def debug_mode(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    mode = {"value": 0}
    monkeypatch.setattr(torch.cuda, "get_sync_debug_mode", lambda: mode["value"])
    names = {"default": 0, "warn": 1, "error": 2}
    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode",
                        lambda value: mode.__setitem__("value", names.get(value, value)))
    return mode


def _warn_from_another_thread() -> None:
    worker = threading.Thread(target=lambda: warnings.warn(MESSAGE, UserWarning, stacklevel=1), name="other")
    worker.start()
    worker.join()


def test_warnings_add_records_for_unflagged_ops_on_the_guarded_thread_only(debug_mode: dict[str, int]) -> None:
    with warnings.catch_warnings(record=True) as shown:
        original_showwarning = warnings.showwarning
        signal = _SyncDebugSignal()
        assert debug_mode["value"] == 1
        try:
            with Watch() as recorder:
                torch.arange(4).flip(0)  # an op the catalogue does not flag
                warnings.warn(MESSAGE, UserWarning, stacklevel=1)  # becomes an unclassified record
                scope.FLAGS.in_reported += 1  # as while a reported op runs: its warning is that same sync
                try:
                    warnings.warn(MESSAGE, UserWarning, stacklevel=1)
                finally:
                    scope.FLAGS.in_reported -= 1
                _warn_from_another_thread()  # not guarded: dropped, since the mode was off before
                warnings.warn("unrelated", UserWarning, stacklevel=1)  # passes through
        finally:
            signal.undo()
        assert debug_mode["value"] == 0
        assert warnings.showwarning is original_showwarning
        assert not [entry for entry in warnings.filters if entry[1] is not None and entry[1].pattern == MESSAGE]
    assert [(r.rule, r.op, r.source, r.latent) for r in recorder.syncs] == [
        ("SH300", "unclassified", "sync-debug", False),
    ]
    assert recorder.syncs[0].file == __file__
    assert [str(w.message) for w in shown] == ["unrelated"]


def test_warnings_of_unguarded_threads_pass_through_when_the_user_enabled_the_mode(
        debug_mode: dict[str, int]) -> None:
    debug_mode["value"] = 1
    with warnings.catch_warnings(record=True) as shown:
        signal = _SyncDebugSignal()
        try:
            _warn_from_another_thread()
        finally:
            signal.undo()
    assert debug_mode["value"] == 1
    assert [str(w.message) for w in shown] == [MESSAGE]


def test_error_mode_is_left_alone(debug_mode: dict[str, int]) -> None:
    debug_mode["value"] = 2
    signal = _SyncDebugSignal()
    assert not signal.active and debug_mode["value"] == 2
    signal.undo()
    assert debug_mode["value"] == 2
