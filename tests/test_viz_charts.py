from engine.analysis.timeline import Segment, phase_of, segments
from tests.helpers.engines import preemption_engine
from viz.charts import batch_figure, queues_and_kv_figure
from viz.timeline import timeline_figure


def test_queue_and_kv_lines_follow_the_metrics():
    frames = list(preemption_engine().frames)
    fig = queues_and_kv_figure(frames, current_step=3, lang="en")
    by_name = {t.name: t for t in fig.data}
    assert list(by_name["waiting"].y) == [f.metrics.num_waiting for f in frames]
    assert list(by_name["running"].y) == [f.metrics.num_running for f in frames]
    assert by_name["KV blocks in use (%)"].y[1] == 75.0  # 6 of 8 blocks after the first prefill


def test_batch_bars_are_split_by_kind():
    frames = list(preemption_engine().frames)
    fig = batch_figure(frames, lang="en")
    bars = {t.name: t for t in fig.data if t.type == "bar"}
    assert list(bars["prefill batch (requests)"].x) == [1, 11]
    tokens = next(t for t in fig.data if t.name == "tokens in batch")
    assert tokens.y[1] == 20


def test_timeline_segments_show_waiting_prefill_decode_and_preemption():
    frames = list(preemption_engine().frames)
    request_1 = [s for s in segments(frames) if s.request_id == 1]
    assert request_1 == [Segment(1, "waiting", 0, 0), Segment(1, "prefill", 1, 1),
                         Segment(1, "decode", 2, 7), Segment(1, "preempted", 8, 10),
                         Segment(1, "prefill", 11, 11), Segment(1, "decode", 12, 13)]
    assert [s.phase for s in segments(frames) if s.request_id == 2][0] == "waiting"
    fig = timeline_figure(frames, current_step=5, lang="en")
    assert {t.name for t in fig.data} >= {"decode", "waiting after a preemption", "prefill (prompt or recompute)"}


def test_a_speculative_decode_of_several_tokens_is_still_a_decode():
    frame = preemption_engine().frames[3]
    request = frame.requests[0]
    assert phase_of(request, frame, {0: 4}, prefilled=set(), speculated={0}) == "decode"
    assert phase_of(request, frame, {0: 4}, prefilled={0}, speculated=set()) == "prefill"
    assert phase_of(request, frame, {0: 1}, prefilled=set(), speculated=set()) == "decode"
