"""vLLM's own knobs in the twin, each on a small case where it changes a decision, and the narration naming the
knob behind the rule; a request's stop_token_ids and min_tokens through the engine on the fake model. (The
reference check's knobs mode and its golden traces check them against vLLM itself: tests/test_vllm_twin_golden.py.)"""

from dataclasses import replace

import pytest

from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from runner.fake import FakeRunner
from scheduler import Config, ConfigError, SamplingParams, Sequence
from scheduler.vllm_v1 import VllmScheduler
from scheduler.vllm_v1.settings import VllmSettings
from viz.narrate import narrate

# 2 running requests of 4 tokens in a pool of 5 blocks of 2 tokens: 1 block free; a waiting request of 5 tokens
BASE = Config(max_num_seqs=4, max_num_batched_tokens=8, max_model_len=32, num_kvcache_blocks=5, kvcache_block_size=2,
              chunked_prefill=True, enable_prefix_caching=False)


def seq(n: int, seq_id: int, max_tokens: int = 8, ignore_eos: bool = True, **sampling) -> Sequence:
    return Sequence(list(range(1, n + 1)), SamplingParams(max_tokens=max_tokens, ignore_eos=ignore_eos, **sampling),
                    seq_id=seq_id, arrival=seq_id)


def step(sched, token: int = 7) -> list:
    batch = sched.schedule()
    outputs = [None if s.num_computed_tokens + s.num_scheduled_tokens < len(s) else token for s in batch.seqs]
    return list(batch.events) + sched.postprocess(batch.seqs, outputs)


def admitted(config: Config, prompt: int) -> list:
    """The events of the step under `config` after two requests of 4 tokens ran one step under BASE (1 block
    left free), when a third of `prompt` tokens arrives."""
    sched = VllmScheduler(BASE)
    for i in range(2):
        sched.add(seq(3, i))
    step(sched)
    assert sched.pool.num_free_blocks == 1
    sched.reconfigure(config)
    sched.add(seq(prompt, 2))
    return sched.schedule().events


def test_scheduler_reserve_full_isl_on_waits_for_the_whole_sequence_off_admits_the_first_chunk():
    small_budget = replace(BASE, long_prefill_token_threshold=2)  # the newcomer's chunk: 2 tokens, 1 block
    on = admitted(small_budget, 5)
    assert [(e.kind, e.reason, e.needed) for e in on if e.kind == "blocked"] == [("blocked", "blocks", 3)]
    off = admitted(replace(small_budget, scheduler_reserve_full_isl=False), 5)
    assert [e.seq_id for e in off if e.kind == "admitted"] == [2]


def test_the_watermark_keeps_blocks_free_while_another_request_runs():
    assert replace(BASE, watermark=0.2).of(VllmSettings).watermark_blocks(5) == 1  # int(0.2 * (5 + the null block))
    kept = admitted(replace(BASE, long_prefill_token_threshold=2, scheduler_reserve_full_isl=False, watermark=0.2), 5)
    assert [(e.kind, e.reason) for e in kept if e.kind == "blocked"] == [("blocked", "watermark")]
    alone = VllmScheduler(replace(BASE, watermark=0.5))  # nobody runs: the watermark does not apply
    alone.add(seq(9, 0))
    assert "admitted" in [e.kind for e in alone.schedule().events]


def test_max_num_scheduled_tokens_caps_the_step_and_max_num_active_seqs_the_admissions():
    sched = VllmScheduler(replace(BASE, max_num_scheduled_tokens=4, max_num_active_seqs=1))
    for i in range(2):
        sched.add(seq(3, i))
    batch = sched.schedule()
    assert batch.num_scheduled_tokens == (3,)
    assert [(e.kind, e.reason) for e in batch.events if e.kind == "blocked"] == [("blocked", "max_num_active_seqs")]


def test_the_adaptive_long_prefill_threshold_is_at_least_a_fair_share_of_the_budget():
    capped = replace(BASE, num_kvcache_blocks=20, long_prefill_token_threshold=1)
    for adaptive, chunks in ((False, (1, 1)), (True, (4, 4))):  # 8 tokens of budget / 2 requests
        sched = VllmScheduler(replace(capped, long_prefill_token_threshold_adaptive=adaptive))
        for i in range(2):
            sched.add(seq(6, i))
        assert sched.schedule().num_scheduled_tokens == chunks


@pytest.mark.parametrize(("settings", "fix"), [({"watermark": 1.0}, "not including, 1"),
                                               ({"max_num_scheduled_tokens": 9}, "max_num_batched_tokens=8"),
                                               ({"max_num_active_seqs": 5}, "max_num_seqs=4"),
                                               ({"watermark": True}, "must be a number")])
def test_a_knob_out_of_vllms_range_is_refused_with_the_fix(settings, fix):
    with pytest.raises(ConfigError, match=fix):
        replace(BASE, **settings)


def test_the_narration_names_the_knob_behind_the_whole_sequence_rule():
    config = replace(BASE, long_prefill_token_threshold=2)
    spec = RunSpec(config, (Request(prompt_token_ids=(1, 2, 3), max_tokens=8, ignore_eos=True),
                            Request(prompt_token_ids=(4, 5, 6), max_tokens=8, ignore_eos=True),
                            Request(arrival=1, prompt_token_ids=(7, 8, 9, 10, 11), max_tokens=2, ignore_eos=True)),
                   scheduler="vllm")
    for reserve, words in ((True, "with scheduler_reserve_full_isl on, vLLM's default"),
                           (False, "with scheduler_reserve_full_isl off")):
        engine = Engine(replace(spec, config=replace(config, scheduler_reserve_full_isl=reserve,
                                                     watermark=0.0 if reserve else 0.4)))
        engine.run()
        said = " ".join(line for k in range(len(engine.frames)) for line in narrate(engine.frames[k], lang="en"))
        assert words in said
        zh = " ".join(line for k in range(len(engine.frames)) for line in narrate(engine.frames[k], lang="zh"))
        assert "scheduler_reserve_full_isl" in zh


def finished(**sampling) -> Sequence:
    request = Request(prompt_token_ids=(5, 6), max_tokens=4, ignore_eos=True, **sampling)
    engine = Engine(RunSpec(Config(max_model_len=64), (request,), scheduler="vllm"))
    engine.run()
    return engine.requests[0].seq


def test_a_stop_token_ends_a_request_and_min_tokens_holds_it_off():
    first = finished().completion_token_ids[0]
    stopped = finished(stop_token_ids=(first,))
    assert (stopped.finish_reason, stopped.completion_token_ids) == ("stop_token", [first])
    held = finished(stop_token_ids=(first,), min_tokens=4)  # its sampler never picks the stop token before 4
    assert held.finish_reason == "max_tokens" and first not in held.completion_token_ids[:4]


def test_the_fake_model_masks_stop_tokens_below_min_tokens():
    runner = FakeRunner(64, eos=0, seed=3, low=0, high=2)
    seqs = [seq(2, i, ignore_eos=False, min_tokens=3, stop_token_ids=(1,)) for i in range(20)]
    for s in seqs:
        s.num_scheduled_tokens = len(s)
    assert all(token == 2 for token in runner.run(seqs))  # neither EOS 0 nor the stop token 1
