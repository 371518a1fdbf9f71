"""The vLLM twin's own rules (scheduler/vllm_v1/): the null block, the free queue's order, a preempted request
resuming from its own cached blocks, and the engine running it. tests/test_vllm_twin_golden.py replays vLLM's
recorded decisions against it."""

from dataclasses import replace

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from scheduler import Config, SamplingParams, Sequence, make_scheduler
from scheduler.block_pool_view import NO_HASH
from scheduler.factory import runner_config
from scheduler.vllm_v1 import NULL_BLOCK_ID, KVCache, VllmScheduler
from viz.narrate import narrate


def seq(n: int, seq_id: int, first: int = 1, max_tokens: int = 8) -> Sequence:
    return Sequence(list(range(first, first + n)), SamplingParams(max_tokens=max_tokens, ignore_eos=True),
                    seq_id=seq_id, arrival=seq_id)


def run(sched) -> list:
    """One step with the model writing token 7 for every request whose prompt is complete."""
    batch = sched.schedule()
    outputs = [None if s.num_computed_tokens + s.num_scheduled_tokens < len(s) else 7 for s in batch.seqs]
    return list(batch.events) + sched.postprocess(batch.seqs, outputs)


def run_until(sched, kind: str, limit: int = 50) -> list:
    """Steps until one has an event of `kind`; returns that step's events."""
    for _ in range(limit):
        events = run(sched)
        if any(e.kind == kind for e in events):
            return events
    raise AssertionError(f"no {kind} event in {limit} steps")


def test_the_null_block_is_never_given_and_counts_as_one_more_block():
    kv = KVCache(num_blocks=4, block_size=2, max_model_len=64, enable_caching=False)
    assert kv.num_blocks == 4 and len(kv.blocks) == 5 and list(kv.free_block_ids) == [1, 2, 3, 4]
    s = seq(8, 0)
    assert kv.allocate_slots(s, 8, 8, hits=[])
    assert s.block_table == [1, 2, 3, 4] and NULL_BLOCK_ID not in s.block_table
    assert not kv.allocate_slots(seq(2, 1), 2, 2, hits=[])  # the null block is not free
    assert runner_config("vllm", Config(num_kvcache_blocks=4)).num_kvcache_blocks == 5
    assert runner_config("article", Config(num_kvcache_blocks=4)).num_kvcache_blocks == 4


def test_freed_blocks_without_a_cached_hash_are_reused_first_last_block_first():
    kv = KVCache(num_blocks=6, block_size=2, max_model_len=64, enable_caching=False)
    a, b = seq(5, 0), seq(2, 1)
    kv.allocate_slots(a, 5, 5, hits=[])
    kv.allocate_slots(b, 2, 2, hits=[])
    assert (a.block_table, b.block_table) == ([1, 2, 3], [4])
    kv.free(a)
    assert list(kv.free_block_ids) == [3, 2, 1, 5, 6]  # to the head, a's last block first
    c = seq(4, 2)
    kv.allocate_slots(c, 4, 4, hits=[])
    assert c.block_table == [3, 2]


def test_freed_blocks_with_a_cached_hash_go_to_the_tail_and_are_evicted_last():
    kv = KVCache(num_blocks=5, block_size=2, max_model_len=64, enable_caching=True)
    a = seq(5, 0)  # two full blocks of known tokens are hashed at allocation, the third is not full
    kv.allocate_slots(a, 5, 5, hits=[])
    assert [kv.blocks[b].hash != NO_HASH for b in a.block_table] == [True, True, False]
    kv.free(a)
    assert list(kv.free_block_ids) == [3, 4, 5, 2, 1]  # unhashed 3 at the head; hashed 2 then 1 at the tail
    again = seq(5, 1)  # the same prompt finds both hashed blocks
    assert kv.find_cached_prefix(again, 5) == [1, 2]


def test_a_preempted_request_resumes_from_its_own_cached_blocks():
    config = Config(max_num_seqs=2, max_num_batched_tokens=64, max_model_len=32, num_kvcache_blocks=6,
                    kvcache_block_size=2, chunked_prefill=True, enable_prefix_caching=True)
    sched = VllmScheduler(config)
    sched.add(seq(6, 0, first=1, max_tokens=4))
    sched.add(seq(3, 1, first=50, max_tokens=4))
    events = run_until(sched, "preempted")  # at its third token request 1 finds no free block: it goes itself
    preempted = next(e for e in events if e.kind == "preempted")
    assert (preempted.seq_id, preempted.for_seq_id, preempted.policy) == (1, 1, "tail")
    assert not any(e.kind == "admitted" for e in events)
    while not any(e.kind == "admitted" for e in events):
        events = run(sched)
    hit = next(e for e in events if e.kind == "prefix_hit")
    admitted = next(e for e in events if e.kind == "admitted")
    assert admitted.seq_id == hit.seq_id == 1 and admitted.recompute
    assert hit.block_ids == preempted.freed_blocks[:1]  # its first block, still cached; its second was reused
    assert admitted.num_cached_tokens == 2 and admitted.num_tokens == 3


def test_a_step_that_preempts_admits_nobody_and_says_why():
    config = Config(max_num_seqs=3, max_num_batched_tokens=64, max_model_len=32, num_kvcache_blocks=3,
                    kvcache_block_size=2, chunked_prefill=True, enable_prefix_caching=False)
    sched = VllmScheduler(config)
    for i in range(2):
        sched.add(seq(3, i, first=10 * i + 1))
    events = run(sched)
    assert [e.seq_id for e in events if e.kind == "admitted"] == [0]  # 1 does not fit whole: 2 + 2 > 3 blocks
    assert any(e.kind == "blocked" and e.reason == "blocks" for e in events)
    sched.add(seq(1, 2, first=99))
    events = run_until(sched, "preempted")
    assert any(e.kind == "blocked" and e.reason == "preempted_this_step" for e in events)
    assert not any(e.kind == "admitted" for e in events)


def test_priority_policy_preempts_the_least_important_running_request():
    config = Config(max_num_seqs=3, max_num_batched_tokens=64, max_model_len=32, num_kvcache_blocks=3,
                    kvcache_block_size=2, chunked_prefill=True, enable_prefix_caching=False, queue_policy="priority")
    sched = VllmScheduler(config)
    important, other = seq(2, 0), seq(2, 1, first=20)
    other.priority = 5
    sched.add(important)
    sched.add(other)
    events = run_until(sched, "preempted")
    preempted = next(e for e in events if e.kind == "preempted")
    assert (preempted.seq_id, preempted.policy) == (1, "priority")


def test_the_engine_runs_the_twin_with_frames_and_vllm_block_ids():
    config = Config(max_num_seqs=3, max_num_batched_tokens=16, max_model_len=48, num_kvcache_blocks=6,
                    kvcache_block_size=4, chunked_prefill=True, enable_prefix_caching=True)
    workload = [Request(prompt_token_ids=[1, 2, 3, 4, 5, 6, 7, 8, 9] + [i], max_tokens=12, arrival=i,
                        ignore_eos=True) for i in range(4)]
    engine = Engine(RunSpec(config, workload, scheduler="vllm"))
    assert engine.run() == "finished"
    frames = [engine.frames[i] for i in range(len(engine.frames))]
    kinds = {e.kind for f in frames for e in f.events}
    assert {"preempted", "prefix_hit", "finished"} <= kinds
    used = {b for f in frames for r in f.requests for b in r.block_table}
    assert used and NULL_BLOCK_ID not in used and max(used) <= config.num_kvcache_blocks
    assert all(r.status == "finished" for r in frames[-1].requests)
    middle = len(frames) // 2
    replayed = engine.replay(middle)
    again, before = replayed.frames[-1], frames[middle]
    # the frame's free list (rebuilt from ranks, blocks freed to its head included) is the pool's
    assert again.free_block_ids == tuple(replayed.scheduler.pool.free_order())
    def state(frame):
        return frame.batch, frame.events, [r._replace(history=None) for r in frame.requests], frame.free_block_ids

    assert state(again) == state(before)
    rebuilt = engine.branch(middle, num_kvcache_blocks=9)  # a new pool: a new twin, its requests queued again
    assert rebuilt.spec.scheduler == "vllm" and rebuilt.run() == "finished"


def test_make_scheduler_refuses_an_unknown_kind():
    assert isinstance(make_scheduler("vllm", Config()), VllmScheduler)
    with pytest.raises(ValueError, match="article"):
        make_scheduler("orca", Config())


def test_overlapped_scheduling_runs_the_twin_as_vllms_async_scheduler():
    config = Config(max_num_seqs=3, max_num_batched_tokens=16, max_model_len=48, num_kvcache_blocks=8,
                    kvcache_block_size=4, chunked_prefill=True, enable_prefix_caching=True, eos=5)
    workload = [Request(prompt_token_ids=[1, 2, 3, 4, 6, 7][:2 + i] + [i], max_tokens=3 + 2 * i, arrival=i % 2)
                for i in range(5)]
    engine = Engine(RunSpec(config, workload, overlap=True, scheduler="vllm"))
    assert engine.run() == "finished"
    frames = [engine.frames[i] for i in range(len(engine.frames))]
    assert frames[-1].free_block_ids == tuple(engine.scheduler.pool.free_order())
    late = [(f, e) for f in frames for e in f.events if e.kind == "finished_late"]
    assert late and all(r.status == "finished" for r in frames[-1].requests)
    # a length stop is learnt when its token lands, a step late, like an EOS
    frame, event = next((f, e) for f, e in late if f.requests[e.seq_id].finish_reason == "max_tokens")
    before = frames[frame.step - 1]
    english, chinese = " ".join(narrate(frame, before, lang="en")), " ".join(narrate(frame, before, lang="zh"))
    assert f"Request {event.seq_id} finished one step late" in english and "max_tokens" in english
    assert f"请求 {event.seq_id} 晚一步完成" in chinese and "max_tokens" in chinese


def test_requests_of_one_step_are_stamped_in_the_order_added_so_the_latest_is_the_priority_victim():
    """vLLM stamps each request's arrival time when it is added: six requests of priority 1 arriving together are
    ordered as added, and the priority policy's victim is the latest, request 3, which preempts itself at step 5
    (not request 0 to make room for request 3)."""
    engine = Engine(replace(load_scenario(SCENARIOS_DIR / "06_priority.toml").spec_for("fake"), scheduler="vllm"))
    engine.run(5)
    preempted = [e for e in engine.frames[5].events if e.kind == "preempted"]
    assert [(e.seq_id, e.for_seq_id) for e in preempted] == [(3, 3)]
    assert "Request 3 was preempted (priority policy)" in " ".join(narrate(engine.frames[5], lang="en"))
