"""Overlapped scheduling writes exactly the tokens of the synchronous loop, and the same batches when no
request ends on EOS; EOS finishes one step late without leaking blocks."""

import time
from dataclasses import replace

import pytest

from engine.run.overlap import run_loop
from runner.fake import FakeRunner
from scheduler import Config, SamplingParams, Scheduler, Sequence
from viz.overlap import overlap_timeline_figure

CONFIG = Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=48, num_kvcache_blocks=14,
                kvcache_block_size=4, eos=3, chunked_prefill=True, enable_prefix_caching=True)


class SlowFakeRunner(FakeRunner):
    """The fake model taking 10 ms a step, long enough for the next step to be scheduled meanwhile."""

    def run(self, seqs) -> list:
        time.sleep(0.010)
        return super().run(seqs)


def both(config: Config, ignore_eos: bool, runner_type: type[FakeRunner] = FakeRunner):
    """(synchronous, overlapped) results, schedulers and sequences on the same 10 requests of a fake model
    writing tokens in [0, 40] (EOS = 3 about once in 40 tokens)."""
    results = []
    for overlap in (False, True):
        scheduler = Scheduler(config)
        seqs = [Sequence([1 + i % 5] * (3 + 7 * (i % 3)), SamplingParams(max_tokens=12 + i, ignore_eos=ignore_eos),
                         seq_id=i) for i in range(10)]
        runner = runner_type(config.max_model_len, eos=config.eos, low=0, high=40)
        results.append((run_loop(scheduler, runner, seqs, overlap), scheduler, seqs))
    return results


def test_without_eos_the_batches_and_tokens_match_the_synchronous_run():
    (sync, _, _), (over, scheduler, _) = both(CONFIG, ignore_eos=True)
    assert over.outputs == sync.outputs and over.batches == sync.batches
    assert scheduler.block_manager.num_free_blocks == CONFIG.num_kvcache_blocks


def test_eos_finishes_one_step_late_with_the_same_tokens():
    (sync, _, sync_seqs), (over, scheduler, seqs) = both(CONFIG, ignore_eos=False)
    assert any(s.finish_reason == "eos" for s in sync_seqs), "the workload must exercise EOS"
    assert over.outputs == sync.outputs
    assert [s.finish_reason for s in seqs] == [s.finish_reason for s in sync_seqs]
    assert scheduler.block_manager.num_free_blocks == CONFIG.num_kvcache_blocks


def test_the_timeline_overlaps_scheduling_with_the_model():
    (sync, _, _), (over, _, _) = both(CONFIG, ignore_eos=True, runner_type=SlowFakeRunner)
    assert [t.step for t in over.timings] == list(range(1, len(over.batches) + 1))
    for t in sync.timings:
        assert t.schedule[1] <= t.model[0] <= t.model[1] <= t.postprocess[0]
    # step N+1 is scheduled before step N's model returns; on a loaded machine a thread may start late now
    # and then, so most steps, not every one (without overlap, none would)
    pairs = zip(over.timings, over.timings[1:], strict=False)
    early = [after.schedule[0] < before.model[1] for before, after in pairs]
    assert sum(early) >= 0.8 * len(early), early


def test_speculation_is_refused():
    config = replace(CONFIG, num_speculative_tokens=2)
    with pytest.raises(ValueError, match="num_speculative_tokens"):
        run_loop(Scheduler(config), FakeRunner(48), [], overlap=True)


def test_the_timeline_chart_draws_every_interval():
    _, (over, _, _) = both(CONFIG, ignore_eos=True)
    fig = overlap_timeline_figure(over.timings, lang="en")
    schedule, postprocess, model = fig.data
    assert len(model.base) == len(over.timings) and set(schedule.y) == {"scheduler"}
    first = over.timings[0]
    assert model.base[0] == pytest.approx(first.model[0] * 1000)
    assert model.x[0] == pytest.approx((first.model[1] - first.model[0]) * 1000)
    assert list(postprocess.customdata) == [t.step for t in over.timings]
