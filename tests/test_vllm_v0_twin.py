"""The V0 twin's own rules (scheduler/vllm_v0/), each in a small scene with V0's numbers: can_allocate's LATER
(head of line) and NEVER (ignored), the one-free-block rule of a decode, no prefill while anything is swapped
(V0's probe scene, its swap pairs), the watermark, priority preemption only in steps that admitted nothing,
recompute or swap and why, V0's error on a full CPU pool, the LRU evictor's order, the settings V0 declares.
tests/test_vllm_v0_twin_golden.py replays V0's own recorded decisions against it."""

import pytest

from scheduler import Config, SamplingParams, Sequence
from scheduler.vllm_v0 import CpuSwapSpaceError, V0Config, V0Status, VllmV0Scheduler
from scheduler.vllm_v0.block_manager import AllocStatus
from scheduler.vllm_v0.evictor import LRUEvictor
from scheduler.vllm_v0.settings import V0SettingsError


def v0(**settings) -> VllmV0Scheduler:
    return VllmV0Scheduler(V0Config(**{"num_gpu_blocks": 8, "block_size": 4, "num_cpu_blocks": 8, "max_num_seqs": 8,
                                       "max_num_batched_tokens": 64, "max_model_len": 64, **settings}))


def req(seq_id: int, n: int, max_tokens: int = 10, priority: int = 0, arrival: int = 0) -> Sequence:
    return Sequence(list(range(10 + 20 * seq_id, 10 + 20 * seq_id + n)),
                    SamplingParams(max_tokens=max_tokens, ignore_eos=True), priority=priority, arrival=arrival,
                    seq_id=seq_id)


def step(sched: VllmV0Scheduler) -> list:
    """One step, the model writing token 7 for every sequence that samples; the step's events."""
    batch = sched.schedule()
    outputs = [7 if s.num_computed_tokens + n >= len(s) else None
               for s, n in zip(batch.seqs, batch.num_scheduled_tokens, strict=True)]
    return list(batch.events) + sched.postprocess(batch.seqs, outputs)


def of(events: list, kind: str) -> list:
    return [e for e in events if e.kind == kind]


def ids(seqs) -> list[int]:
    return [s.seq_id for s in seqs]


def test_a_prompt_that_can_never_fit_is_ignored_and_one_that_fits_later_holds_up_the_queue():
    sched = v0()
    r0, never, later, small = req(0, 20), req(1, 40), req(2, 16), req(3, 4)
    for r in (r0, never, later, small):
        sched.add(r)
    events = step(sched)
    assert ids(sched.running_seqs) == [0] and sched.pool.num_free_units == 3  # 5 blocks of 8 for r0
    (ignored,) = of(events, "ignored")
    assert (ignored.seq_id, ignored.reason, ignored.num_tokens, ignored.limit) == (1, "never", 10, 8)
    assert never.finish_reason == "ignored" and sched.outputs.ignored[0].status is V0Status.FINISHED_IGNORED
    (blocked,) = of(events, "blocked")
    assert (blocked.seq_id, blocked.reason, blocked.needed, blocked.available, blocked.watermark) == (2, "blocks", 4,
                                                                                                     3, 0)
    assert ids(sched.waiting_seqs) == [2, 3]  # the 1-block prompt behind it waits too: V0 admits head of line


def test_a_decode_needs_a_free_block_even_when_its_token_fits_in_its_last_block():
    sched = v0(num_gpu_blocks=2)
    r0 = req(0, 5, max_tokens=2)
    sched.add(r0)
    step(sched)  # prefill: blocks 0 and 1, the second holding 1 token of 4; then 6 tokens
    group = sched.groups[0]
    assert r0.block_table == [0, 1] and sched.pool.num_free_units == 0
    assert sched.block_manager.blocks_touched(group) == 1 and not sched.block_manager.can_append_slots(group)
    events = step(sched)
    (preempted,) = of(events, "preempted")
    assert (preempted.seq_id, preempted.for_seq_id, preempted.mode, preempted.mode_reason,
            preempted.freed_blocks, preempted.num_recompute_tokens) == (0, 0, "recompute", "single_sequence",
                                                                        (0, 1), 6)
    assert ids(sched.waiting_seqs) == [0] and r0.num_computed_tokens == 0 and sched.num_preemptions == 1
    events = step(sched)  # prefilled again: prompt and output, 6 tokens; its second token ends it
    (admitted,) = of(events, "admitted")
    assert (admitted.num_tokens, admitted.recompute) == (6, True) and of(events, "finished")[0].reason == "max_tokens"


def test_no_prefill_while_anything_is_swapped_and_the_swap_pairs_are_v0s():
    """vLLM 0.10.2's own run of this scene (../shared/reference/vllm_v0/probe_output.txt, case (b)): the same
    swap pairs at the same steps; r4, arriving with 2 free blocks, waits until nothing is swapped."""
    sched = v0(preemption_mode="swap")
    arrivals = {0: [req(0, 6, 8), req(1, 6), req(2, 6)], 3: [req(3, 4, 2)], 6: [req(4, 4, 2)]}
    seen = {}
    for k in range(13):
        for r in arrivals.get(k, []):
            sched.add(r)
        events = step(sched)
        seen[k] = (sched.outputs.blocks_to_swap_out, sched.outputs.blocks_to_swap_in, events)
        if k == 4:
            assert ids(sched.swapped_seqs) == [3, 2]
            assert [sched.cpu_block_table(s) for s in sched.swapped_seqs] == [[0], [1, 2]]
            assert [e.mode for e in of(events, "preempted")] == ["swap", "swap"]
    assert seen[4][:2] == ([(6, 0), (4, 1), (5, 2)], [])
    assert seen[5][:2] == ([], [(0, 5)])
    assert seen[9][:2] == ([], [(1, 4), (2, 7)])
    for k in (6, 7, 8):
        (phase,) = of(seen[k][2], "v0_phase")
        assert (phase.phase, phase.reason, phase.swapped_head) == ("decode", "swapped_waiting", 2)
        assert not of(seen[k][2], "admitted")
    assert [e.seq_id for e in of(seen[10][2], "admitted")] == [4]
    assert seen[11][0] == [(0, 2)]


def test_no_swap_in_in_a_step_that_preempted():
    """Two requests swapped out; the one left running preempts again (itself) while one is still swapped: V0
    swaps nothing in that step though the preemption freed blocks."""
    sched = v0(num_gpu_blocks=3, block_size=2, preemption_mode="swap", max_num_seqs=3)
    for r in (req(0, 2, 20), req(1, 2, 20), req(2, 2, 20)):
        sched.add(r)
    blocked = []
    for _ in range(12):
        events = step(sched)
        if sched.outputs.preempted and of(events, "swap_in_blocked"):
            blocked.append(of(events, "swap_in_blocked")[0])
            assert not sched.outputs.blocks_to_swap_in
    assert blocked and all(e.reason == "preempted_this_step" for e in blocked)


def test_the_watermark_keeps_one_block_in_a_hundred_free():
    sched = v0(num_gpu_blocks=100, block_size=1, max_model_len=128, max_num_batched_tokens=256)
    assert sched.block_manager.watermark_blocks == 1
    whole, r0, r1 = req(0, 100), req(1, 95), req(2, 5)
    for r in (whole, r0, r1):
        sched.add(r)
    events = step(sched)
    assert [(e.seq_id, e.reason, e.num_tokens, e.limit) for e in of(events, "ignored")] == [(0, "never", 100, 99)]
    assert ids(sched.running_seqs) == [1]
    (blocked,) = of(events, "blocked")  # 5 blocks free for 5: the watermark's block would go
    assert (blocked.seq_id, blocked.reason, blocked.needed, blocked.available, blocked.watermark) == \
        (2, "watermark", 5, 5, 1)
    assert sched.block_manager.can_allocate(sched.groups[2])[0] is AllocStatus.LATER


def test_priority_preemption_runs_only_in_steps_that_admitted_nothing_so_a_newer_request_waits_inverted():
    sched = v0(num_gpu_blocks=3, block_size=16, policy="priority")
    lo1, lo2, hi = req(0, 8, 20, priority=5), req(1, 8, 20, priority=5, arrival=1), req(2, 24, 4, arrival=1)
    sched.add(lo1)
    step(sched)
    sched.add(lo2)
    sched.add(hi)
    events = step(sched)  # lo2 is admitted ahead of the more important hi, which does not fit: no preemption
    assert [e.seq_id for e in of(events, "admitted")] == [1] and not of(events, "preempted")
    assert [(e.seq_id, e.reason) for e in of(events, "blocked")] == [(2, "blocks")]
    events = step(sched)  # nothing admitted: hi preempts the least important running request, then decodes run
    (preempted,) = of(events, "preempted")
    assert (preempted.seq_id, preempted.for_seq_id, preempted.policy) == (1, 2, "priority")
    assert ids(sched.waiting_seqs) == [2, 1] and ids(sched.running_seqs) == [0]
    assert not of(events, "admitted")
    events = step(sched)
    assert [e.seq_id for e in of(events, "admitted")] == [2]


@pytest.mark.parametrize("mode, expected", [(None, ("recompute", "single_sequence")),
                                            ("recompute", ("recompute", "preemption_mode")),
                                            ("swap", ("swap", "preemption_mode"))])
def test_v0_chooses_recompute_for_a_one_sequence_group_unless_told_to_swap(mode, expected):
    sched = v0(num_gpu_blocks=2, preemption_mode=mode)
    for r in (req(0, 4), req(1, 4)):
        sched.add(r)
    step(sched)
    (preempted,) = of(step(sched), "preempted")  # r0's fifth token needs a block: the tail, r1, goes
    assert (preempted.seq_id, (preempted.mode, preempted.mode_reason)) == (1, expected)
    assert ids(sched.swapped_seqs if expected[0] == "swap" else sched.waiting_seqs) == [1]


def test_a_full_cpu_pool_raises_v0s_error_in_v0s_words():
    sched = v0(num_gpu_blocks=2, num_cpu_blocks=0, preemption_mode="swap")
    for r in (req(0, 4), req(1, 4)):
        sched.add(r)
    step(sched)
    with pytest.raises(CpuSwapSpaceError, match="Aborted due to the lack of CPU swap space. Please increase the swap "
                                                "space to avoid this error."):
        sched.schedule()


def test_prefix_caching_shares_computed_blocks_and_the_evictor_takes_the_oldest_then_deepest():
    sched = v0(enable_prefix_caching=True, num_gpu_blocks=6)
    a = Sequence(list(range(1, 10)), SamplingParams(max_tokens=1, ignore_eos=True), seq_id=0)
    sched.add(a)
    step(sched)  # a: 9 tokens, blocks 0, 1 (full, cached) and 2; finished, freed to the evictor
    assert sched.pool.num_free_units == 6 and sorted(sched.block_manager.gpu.evictor.free_table) == [0, 1]
    b = Sequence(list(range(1, 9)) + [50, 51], SamplingParams(max_tokens=2, ignore_eos=True), seq_id=1)
    sched.add(b)
    events = step(sched)
    (hit,) = of(events, "prefix_hit")
    assert (hit.block_ids, hit.num_tokens) == ((0, 1), 8)
    assert of(events, "admitted")[0].num_cached_tokens == 8 and sched.outputs.num_batched_tokens == 10
    evictor = LRUEvictor()
    for block_id, depth, stamp in ((5, 4, 2.0), (3, 8, 1.0), (4, 4, 1.0), (2, 8, 1.0)):
        evictor.add(block_id, block_id * 10, depth, stamp)
    assert [evictor.evict()[0] for _ in range(3)] == [2, 3, 4]  # oldest; then deepest; then lowest id
    evictor.update(5, 3.0)  # touched while free: V0's heap entry is stale, the block is no longer taken
    with pytest.raises(ValueError, match="No usable cache memory left"):
        evictor.evict()


def test_the_settings_are_v0s_with_v0s_defaults_and_checks():
    default = V0Config()
    assert (default.block_size, default.max_num_seqs, default.max_model_len, default.preemption_mode,
            default.policy, default.enable_prefix_caching, default.enable_chunked_prefill) == \
        (16, 128, 8192, None, "fcfs", False, False)
    assert default.batched_tokens == 8192 and V0Config(enable_chunked_prefill=True).batched_tokens == 2048
    assert V0Config(enable_chunked_prefill=True, max_num_partial_prefills=2).prefill_threshold == 327
    assert default.cpu_blocks == 4 * 2**30 // (46080 * 16) and default.watermark_blocks == 0
    assert V0Config(num_gpu_blocks=250).watermark_blocks == 2
    args = V0Config(preemption_mode="swap", enable_prefix_caching=True).serve_args()
    assert args[args.index("--preemption-mode") + 1] == "swap" and "--enable-prefix-caching" in args
    words = VllmV0Scheduler.info.launch.command(Config(num_kvcache_blocks=32, max_num_seqs=4), "SmolLM2-135M", False)
    assert words[:5] == ["env", "VLLM_USE_V1=0", "vllm", "serve", "SmolLM2-135M"]
    assert words[words.index("--num-gpu-blocks-override") + 1] == "32" and "--no-enable-chunked-prefill" in words
    with pytest.raises(V0SettingsError, match="smaller than max_model_len"):
        V0Config(max_num_batched_tokens=100, max_model_len=200)
    with pytest.raises(V0SettingsError, match="Chunked prefill must be enabled"):
        V0Config(max_num_partial_prefills=2)
