"""collective_delays(): how much later than its peers a rank entered its next collective after a sync."""

from __future__ import annotations

import pytest
from impact_fixtures import ALL_GATHER, ALL_REDUCE, KinetoTrace, write_two_ranks

from synchunt.detect import detect
from synchunt.impact import CollectiveDelay, collective_delays
from synchunt.impact.vocab import is_collective_kernel
from synchunt.trace import load_traces


def _ranks(tmp_path):
    folder = write_two_ranks(tmp_path / "ranks")
    traces = load_traces([folder])
    return traces, [detect(t) for t in traces]


def test_a_rank_held_back_by_a_sync_enters_the_collective_late(tmp_path):
    traces, detections = _ranks(tmp_path)
    assert [t.rank for t in traces] == [0, 1]
    delays = collective_delays(traces, detections)
    assert len(delays) == 2 and len(delays[0]) == 2 and delays[1] == ()
    first, second = delays[0]
    assert first == CollectiveDelay(rank=0, collective=ALL_REDUCE, ordinal=0, start_us=310, earliest_start_us=110,
                                    earliest_rank=1, delay_us=200, ranks=2)
    assert second is not None and (second.collective, second.ordinal, second.delay_us, second.earliest_rank) == (
        ALL_GATHER, 1, 5, 1)


def test_positions_whose_kernels_differ_between_ranks_are_not_matched(tmp_path):
    traces, detections = _ranks(tmp_path)
    rank1 = KinetoTrace(rank=1)
    rank1.kernel(ALL_GATHER, 100, 110, 250)  # rank 1's first collective is not an all-reduce
    other = load_traces([rank1.write(tmp_path / "mismatch.pt.trace.json.gz")])[0]
    first, second = collective_delays([traces[0], other], [detections[0], detect(other)])[0]
    assert first is None and second is None  # rank 1 has no second collective: a single rank matches nothing


def test_latent_syncs_and_single_rank_get_none(tmp_path):
    rank0 = KinetoTrace(rank=0)
    rank0.op("aten::item", 10, 40)
    rank0.op("aten::_local_scalar_dense", 11, 38)
    traces = load_traces([rank0.write(tmp_path / "cpu.pt.trace.json.gz")])
    assert collective_delays(traces, [detect(traces[0])]) == ((None,),)


def test_mismatched_inputs_are_refused(tmp_path):
    traces, detections = _ranks(tmp_path)
    with pytest.raises(ValueError, match="2 traces but 1 detections"):
        collective_delays(traces, detections[:1])


@pytest.mark.parametrize(("name", "collective"), [
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", True),
    ("void ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", True),
    ("rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)", True),
    ("mscclKernel_Sum_float_LL(int, int, mscclAlgo*)", True),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", False),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8(ncclDevComm*, unsigned long, ncclWork*)", False),  # point to point
    ("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", False),
])
def test_collective_kernel_names(name, collective):
    assert is_collective_kernel(name) is collective
