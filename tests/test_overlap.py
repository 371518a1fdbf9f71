"""Overlapped scheduling writes exactly the tokens of the synchronous loop, and the same batches when no
request ends on EOS; EOS finishes one step late without leaking blocks."""

import threading
from dataclasses import replace

import pytest

from engine.run.overlap import run_loop
from runner.fake import FakeRunner
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler
from viz.overlap import overlap_timeline_figure

CONFIG = Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=48, num_kvcache_blocks=14,
                kvcache_block_size=4, eos=3, chunked_prefill=True, enable_prefix_caching=True)


class CountingScheduler(Scheduler):
    """The article's scheduler counting its schedule() calls, so a model can wait for the next one."""

    def __init__(self, config: Config):
        super().__init__(config)
        self.scheduled, self.calls = threading.Condition(), 0

    def schedule(self):
        with self.scheduled:
            self.calls += 1
            self.scheduled.notify_all()
        return super().schedule()


class GatedFakeRunner(FakeRunner):
    """The fake model returning step N only once step N+1's schedule() has begun (at most 10 s): overlapped, every
    step shows it; synchronously, no step could."""
    scheduler: CountingScheduler

    def run(self, seqs) -> list:
        self.steps = getattr(self, "steps", 0) + 1
        with self.scheduler.scheduled:
            self.scheduler.scheduled.wait_for(lambda: self.scheduler.calls > self.steps, timeout=10)
        return super().run(seqs)


def both(config: Config, ignore_eos: bool, runner_type: type[FakeRunner] = FakeRunner, overlaps=(False, True)):
    """(synchronous, overlapped) results, schedulers and sequences on the same 10 requests of a fake model
    writing tokens in [0, 40] (EOS = 3 about once in 40 tokens)."""
    results = []
    for overlap in overlaps:
        scheduler = CountingScheduler(config)
        seqs = [Sequence([1 + i % 5] * (3 + 7 * (i % 3)), SamplingParams(max_tokens=12 + i, ignore_eos=ignore_eos),
                         seq_id=i) for i in range(10)]
        runner = runner_type(config.max_model_len, eos=config.eos, low=0, high=40)
        runner.scheduler = scheduler
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
    (sync, _, _), (over, _, _) = both(CONFIG, ignore_eos=True)
    assert [t.step for t in over.timings] == list(range(1, len(over.batches) + 1))
    for t in sync.timings:
        assert t.schedule[1] <= t.model[0] <= t.model[1] <= t.postprocess[0] and not t.overlapped
    # The model holds step N until step N+1's scheduling has begun: the timeline must show every step so
    # (how often that happens with a real model is bench/bench_overlap.py's to print).
    [(gated, _, _)] = both(CONFIG, ignore_eos=True, runner_type=GatedFakeRunner, overlaps=[True])
    assert gated.outputs == over.outputs and all(t.overlapped for t in gated.timings)
    for before, after in zip(gated.timings, gated.timings[1:], strict=False):
        assert after.schedule[0] < before.model[1]


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
