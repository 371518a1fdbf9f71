"""A request that fits max_model_len but not the KV pool, under the vLLM twin as under vLLM 0.32's own Scheduler
(tests/test_vllm_twin_golden.py's "pool" mode replays vLLM's recorded decisions): a prompt larger than the pool is
queued and waits for good, holding up the requests behind it; the article's scheduler refuses or aborts it. A twin
step that ends its loop over running requests on a self-preemption may run nothing, and is no stall."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, ScenarioError, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from scheduler import Config
from tests.helpers.engines import GOOD
from viz.narrate import narrate

POOL = Config(max_num_seqs=4, max_num_batched_tokens=32, max_model_len=32, num_kvcache_blocks=4,
              kvcache_block_size=4, eos=-1)


def workload():
    """0: a prompt of 20 tokens (5 blocks of 4; the pool has 4); 1: a small one behind it."""
    return [Request(prompt_token_ids=tuple(range(1, 21)), max_tokens=2, ignore_eos=True),
            Request(prompt_token_ids=(50, 51), max_tokens=2, ignore_eos=True)]


def test_the_twin_queues_a_prompt_larger_than_the_pool_and_it_holds_up_the_queue():
    engine = Engine(RunSpec(POOL, workload(), scheduler="vllm"))
    assert engine.run() == "stalled"
    last = engine.frames[-1]
    assert last.waiting == (0, 1) and not last.running
    assert not any(e.kind == "aborted" for f in engine.frames for e in f.events)
    sentences = narrate(last, engine.frames[len(engine.frames) - 2], lang="en")
    assert any("Request 0 waits for good: it needs 5 blocks, more than the whole pool (4 blocks)" in s
               for s in sentences)
    assert any("请求 0 将永远等待" in s for s in narrate(last, engine.frames[len(engine.frames) - 2], lang="zh"))


def test_the_article_scheduler_refuses_it_and_runs_the_rest():
    engine = Engine(RunSpec(POOL, workload()))
    assert engine.run() == "finished"
    assert [e.kind for e in engine.frames[0].events if e.seq_id == 0] == ["arrived", "aborted"]
    assert engine.frames[-1].requests[1].status == "finished"


def test_a_twin_step_idle_after_a_self_preemption_is_not_a_stall():
    """Under vLLM 0.32 and the priority policy, where the head of running (the least important request) preempts
    itself, vLLM ends the loop and that step runs nothing, while another request still runs; the run goes on to
    its end."""
    config = Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=64, num_kvcache_blocks=4,
                    kvcache_block_size=2, chunked_prefill=True, queue_policy="priority", enable_prefix_caching=False,
                    eos=-1, vllm_version="0.32")
    requests = [Request(arrival=0, prompt_token_ids=(1, 2, 3), max_tokens=4, ignore_eos=True, priority=2),
                Request(arrival=1, prompt_token_ids=(1, 2, 3, 4), max_tokens=3, ignore_eos=True, priority=1)]
    engine = Engine(RunSpec(config, requests, scheduler="vllm"))
    assert engine.run() == "finished"
    idle = [f for f in engine.frames if f.step and f.batch.kind == "idle"]
    assert idle and all(any(e.kind == "preempted" for e in f.events) and f.running for f in idle)


def test_a_scenario_file_may_hold_such_a_prompt_for_the_twin_only(tmp_path):
    small_pool = GOOD.replace("max_model_len = 16", "max_model_len = 16\nnum_kvcache_blocks = 1\n"
                              "kvcache_block_size = 2")
    path = tmp_path / "pool.toml"
    path.write_text(small_pool)
    with pytest.raises(ScenarioError, match="can never run"):
        load_scenario(path)
    path.write_text('scheduler = "vllm"\n' + small_pool)
    assert load_scenario(path).spec.workload[0].prompt_token_ids == (1, 2, 3)


def test_an_article_step_idle_after_an_abort_is_not_a_stall():
    """The article's scheduler aborts a running request that outgrew the pool in its decode loop, in a step that may
    run nothing: the requests waiting behind it run next (they were left waiting for good before)."""
    spec = load_scenario(SCENARIOS_DIR / "vllm_pool_too_small.toml").spec
    engine = Engine(RunSpec(spec.config, spec.workload))
    assert engine.run() == "finished"
    aborting = next(f for f in engine.frames if any(e.kind == "aborted" for e in f.events))
    assert aborting.batch.kind == "idle" and aborting.waiting == (2,)
