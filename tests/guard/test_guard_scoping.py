"""Guard scope and lifetime: asyncio tasks, contexts left out of order or on another thread, ops that raise,
SyncError across processes, and what stays installed afterwards."""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle
import sys
import threading
from collections.abc import Generator

import pytest
import torch

from synchunt.guard import SyncError, forbid_syncs, is_guarded, watch
from synchunt.guard.install import SESSION
from synchunt.guard.kernels import KEY

X = torch.arange(10, dtype=torch.float32)
MASK = X > 4


def _pre_dispatch_included() -> bool:
    return torch._C._dispatch_tls_is_dispatch_key_included(KEY)


def _nothing_left_installed() -> None:
    assert not is_guarded() and not SESSION.installed and not _pre_dispatch_included()
    assert "tolist" not in vars(torch.Tensor)


def test_a_guard_counts_only_the_task_that_entered_it() -> None:
    async def other_task(seen: list[str]) -> None:
        for _ in range(3):
            X[MASK]  # another task's sync, on the same thread, while the guard is active
            seen.append("synced")
            await asyncio.sleep(0)

    async def guarded_task() -> tuple[list[str], bool]:
        seen: list[str] = []
        with watch() as recorder:
            child = asyncio.create_task(other_task(seen))  # inherits the guarded context: still not counted
            await asyncio.sleep(0)
            X.sum().item()  # this task's own sync
            await child
            guarded_in_child = await asyncio.create_task(_is_guarded())
        return [r.rule for r in recorder.syncs] + seen, guarded_in_child

    async def _is_guarded() -> bool:
        return is_guarded()

    async def main() -> tuple[list[str], bool]:
        neighbour_seen: list[str] = []
        neighbour = asyncio.create_task(other_task(neighbour_seen))
        result = await guarded_task()
        await neighbour
        return result

    rules, guarded_in_child = asyncio.run(main())
    assert rules == ["SH109", "synced", "synced", "synced"]
    assert guarded_in_child is False
    _nothing_left_installed()


def test_all_tasks_counts_every_task_of_the_entering_thread() -> None:
    async def child() -> None:
        X[MASK]

    async def main() -> tuple[list[str], list[str]]:
        with watch(all_tasks=True) as everything, watch() as own:
            await asyncio.create_task(child())
            X.sum().item()
        return [r.rule for r in everything.syncs], [r.rule for r in own.syncs]

    assert asyncio.run(main()) == (["SH101", "SH109"], ["SH109"])
    with pytest.raises(SyncError) as caught, forbid_syncs(all_tasks=True):
        asyncio.run(child())  # the guard was entered outside any task
    assert [r.rule for r in caught.value.syncs] == ["SH101"]
    _nothing_left_installed()


def test_forbid_in_one_task_is_not_failed_by_another_task() -> None:
    async def syncing() -> None:
        for _ in range(5):
            X[MASK]
            await asyncio.sleep(0)

    async def forbidding() -> None:
        with forbid_syncs():
            for _ in range(5):
                X[1::2].sum()
                await asyncio.sleep(0)

    async def main() -> None:
        await asyncio.gather(syncing(), forbidding())

    asyncio.run(main())
    _nothing_left_installed()


def _guarded_generator() -> Generator[object, None, None]:
    with watch() as recorder:
        yield recorder


def test_generators_closed_out_of_order_leave_nothing_installed() -> None:
    first, second = _guarded_generator(), _guarded_generator()
    next(first)
    next(second)
    first.close()  # the outer guard leaves while the inner one is still open
    assert is_guarded() and SESSION.installed
    with watch() as later:
        X[MASK]
    assert [r.rule for r in later.syncs] == ["SH101"]
    second.close()
    _nothing_left_installed()


def test_a_guard_left_from_another_thread_stops_counting_and_its_thread_is_disarmed() -> None:
    generator = _guarded_generator()
    entered, closed, finished = threading.Event(), threading.Event(), threading.Event()
    state: dict[str, object] = {}

    def worker() -> None:
        state["recorder"] = next(generator)
        entered.set()
        assert closed.wait(timeout=10)
        state["guarded"] = is_guarded()
        X.sum().item()  # a guarded op on the stale thread: heals it
        state["included_after"] = _pre_dispatch_included()
        finished.set()

    thread = threading.Thread(target=worker)
    thread.start()
    assert entered.wait(timeout=10)
    generator.close()  # the worker's guard is left from the main thread
    closed.set()
    assert finished.wait(timeout=10)
    thread.join()
    recorder = state.pop("recorder")
    assert state == {"guarded": False, "included_after": False}
    assert recorder.syncs == []  # the worker's read after the close did not count
    _nothing_left_installed()


def test_a_syncing_op_that_raises_is_still_recorded() -> None:
    meta = torch.empty(4, device="meta")
    with watch() as recorder:
        with pytest.raises(NotImplementedError):
            meta[torch.ones(4, dtype=torch.bool, device="meta")]
        with pytest.raises(RuntimeError, match="meta tensors"):
            meta.sum().item()
        with pytest.raises(RuntimeError, match="non-negative"):
            torch.bincount(torch.tensor([-1]))
    assert [r.rule for r in recorder.syncs] == ["SH101", "SH109", "SH107"]
    with pytest.raises(RuntimeError, match="non-negative"), forbid_syncs(raise_at="first") as guard:
        torch.bincount(torch.tensor([-1]))  # the op's own error wins over the SyncError
    assert [r.rule for r in guard.syncs] == ["SH107"]


def test_ops_keep_their_autograd_history_under_the_guard() -> None:
    leaf = torch.arange(4, dtype=torch.float32, requires_grad=True)
    with watch() as recorder:
        selected = leaf[leaf > 1.5]
        selected.sum().backward()
    assert selected.grad_fn is not None
    assert leaf.grad.tolist() == [0.0, 0.0, 1.0, 1.0]
    # The backward of a mask read converts the saved mask again (nonzero), a sync of its own.
    assert [r.rule for r in recorder.syncs] == ["SH101", "SH103"]


def test_higher_order_operators_run_under_the_guard() -> None:
    def cond() -> torch.Tensor:
        return torch.ops.higher_order.cond(X.sum() > 0, lambda t: t + 1, lambda t: t - 1, (X,))

    expected = cond()
    with watch() as recorder:
        result = cond()
    assert torch.equal(result, expected)
    assert recorder.syncs == []  # the branches run inside the operator, unchecked


def _raise_sync_error() -> None:
    with forbid_syncs():
        X[MASK]


def test_sync_error_pickles_with_its_records() -> None:
    with pytest.raises(SyncError) as caught:
        _raise_sync_error()
    copy = pickle.loads(pickle.dumps(caught.value))
    assert type(copy) is SyncError and copy.syncs == caught.value.syncs
    assert str(copy) == str(caught.value) and copy.exit_code == 1


@pytest.mark.skipif(sys.platform != "linux", reason="forks a worker process")
def test_sync_error_crosses_a_process_boundary() -> None:
    with multiprocessing.get_context("fork").Pool(1) as pool, pytest.raises(SyncError) as caught:
        pool.apply(_raise_sync_error)
    (record,) = caught.value.syncs
    assert (record.rule, record.function) == ("SH101", "_raise_sync_error")


def test_kernels_stay_registered_between_guards_and_can_be_removed() -> None:
    with watch():
        pass
    assert SESSION.route_name is None and not _pre_dispatch_included()
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::index.Tensor", "PreDispatch")
    torch.ones(3)[torch.tensor([True, False, True])]  # unguarded: the dormant kernel is never reached
    with watch() as recorder:
        assert not SESSION.remove_kernels()  # refused while a guard is installed
    assert SESSION.remove_kernels()
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("aten::index.Tensor", "PreDispatch")
    with watch() as recorder:
        X[MASK]
    assert [r.rule for r in recorder.syncs] == ["SH101"]
