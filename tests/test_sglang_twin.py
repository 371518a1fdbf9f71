"""The SGLang twin's parts on their own (the golden traces check the whole against SGLang itself): the radix tree
over token slots, the paged allocator's free order, the new_token_ratio, the settings refused."""

import pytest

from scheduler.sglang import NewTokenRatioTracker, Scheduler, ServerArgs
from scheduler.sglang.allocator import PagedTokenToKVPoolAllocator, TokenToKVPoolAllocator
from scheduler.sglang.radix_cache import RadixCache
from tests.helpers.scheduler_loop import step_sglang_twin


def _insert(tree: RadixCache, tokens: list[int]):
    slots = tree.allocator.alloc(len(tokens))
    tree.insert(tokens, slots, 0)


def test_the_tree_splits_at_the_first_differing_token_and_frees_the_duplicate_slots():
    """SGLang's own probe (../shared/reference/sglang/probe_output.txt, part a) on a 64-slot pool."""
    tree = RadixCache(TokenToKVPoolAllocator(64))
    for tokens in ([1, 2, 3, 4, 5], [1, 2, 3, 9], [7, 8]):
        _insert(tree, tokens)
    assert tree.allocator.available_size() == 56  # 11 slots taken, the 3 of (1, 2, 3) given back
    matched, node = tree.match_prefix([1, 2, 3, 4, 6])
    assert (matched, tree.path_slots(node)) == (4, [1, 2, 3, 4])
    assert tree.snapshot() == [[0, [1, 2, 3], [1, 2, 3], 0], [1, [4], [4], 0], [2, [5], [5], 0],
                               [1, [9], [9], 0], [0, [7, 8], [10, 11], 0]]
    assert tree.evictable_size() == 8


def test_a_locked_path_is_protected_and_eviction_takes_the_least_recent_unlocked_leaves():
    tree = RadixCache(TokenToKVPoolAllocator(64))
    for tokens in ([1, 2, 3, 4, 5], [1, 2, 3, 9], [7, 8]):
        _insert(tree, tokens)
    tree.match_prefix([1, 2, 3, 4, 6])
    _, node = tree.match_prefix([1, 2, 3, 9])
    tree.inc_lock_ref(node)
    assert (tree.evictable_size(), tree.protected_size()) == (4, 4)
    assert tree.evict(3) == [([7, 8], [10, 11]), ([5], [5])]  # the least recent leaves first, what each held
    assert tree.allocator.available_size() == 59
    assert tree.snapshot() == [[0, [1, 2, 3], [1, 2, 3], 1], [1, [4], [4], 0], [1, [9], [9], 1]]
    tree.dec_lock_ref(node)
    assert sum(len(slots) for _, slots in tree.evict(100)) == 5 and tree.snapshot() == []


def test_pages_freed_last_are_reused_first_and_a_free_group_keeps_its_order():
    pool = PagedTokenToKVPoolAllocator(64, 4)  # pages 1..16
    first, second = pool.alloc_extend([(0, 6, -1), (0, 4, -1)])
    assert (first, second) == ([4, 5, 6, 7, 8, 9], [12, 13, 14, 15])
    assert pool.alloc_decode([(6, 9), (4, 15)]) == [10, 16]  # the rest of page 2, then a new page 4
    pool.free([12, 13, 14, 15])
    assert list(pool.free_pages)[:2] == [3, 5]
    pool.free_group_begin()
    pool.free([4, 5, 6, 7])
    pool.free([16])
    pool.free_group_end()
    assert list(pool.free_pages)[:4] == [1, 4, 3, 5]


def test_new_token_ratio_starts_at_0_7_of_the_conservativeness_and_decays_to_its_floor():
    ratio = NewTokenRatioTracker(0.2)
    assert (round(ratio.init, 6), round(ratio.min, 6)) == (0.14, 0.0196)
    for _ in range(700):
        ratio.decay_step()
    assert ratio.current == ratio.min
    ratio.reset()
    assert ratio.current == ratio.init


# SGLang 0.5.23's own defaults (srt/arg_groups/fields/schedule.py; page_size: what it resolves when none is given)
SGLANG_DEFAULTS = {"page_size": 1, "max_prefill_tokens": 16384, "schedule_policy": "fcfs",
                   "schedule_conservativeness": 1.0, "enable_priority_scheduling": False,
                   "schedule_low_priority_values_first": False, "priority_scheduling_preemption_threshold": 10,
                   "disable_priority_preemption": False, "retraction_policy": "length"}


def test_the_twins_defaults_are_sglangs():
    args = ServerArgs()
    assert {name: getattr(args, name) for name in SGLANG_DEFAULTS} == SGLANG_DEFAULTS
    assert args.chunked_prefill_size == -1  # SGLang sizes its own from the GPU's memory; the twin's is off


@pytest.mark.parametrize("field", ["max_total_tokens", "page_size", "max_running_requests"])
def test_settings_below_1_are_refused_by_name(field):
    with pytest.raises(ValueError, match=field):
        ServerArgs(**{field: 0})


def test_a_prompt_over_the_input_limit_is_prefilled_as_a_one_token_stub_then_aborted_leaving_its_token_cached():
    """SGLang's validate_input_length (max_req_input_len = 31 - 5 here): the prompt becomes one token, the stub goes
    through PrefillAdder beside a real request, takes a row and a slot, ends aborted at its result, and its token
    enters the tree."""
    twin = Scheduler(ServerArgs(max_total_tokens=32))
    twin.add_request(0, [5, 6, 7], 4)
    stub = twin.add_request(1, list(range(1, 27)), 4)
    assert (stub.origin_input_ids, stub.to_finish, stub.max_new_tokens) == ([0], "abort", 4)
    batch = twin.get_next_batch_to_run()
    assert [(r.rid, r.extend_len) for r in batch.reqs] == [(0, 3), (1, 1)]
    assert [e.kind for e in twin.events] == ["admitted", "admitted"]
    twin.process_batch_result(batch, [9, 9])
    twin.step_done(batch)
    assert [r.finished_reason for r in batch.reqs] == [None, "abort"]
    assert [0] in [key for _, key, _, _ in twin.tree_cache.snapshot()]
    assert [r.rid for r in twin.get_next_batch_to_run().reqs] == [0]  # the stub left with the next step's filter


PRIORITY = {"max_total_tokens": 128, "max_running_requests": 2, "schedule_policy": "fcfs",
            "enable_priority_scheduling": True}


def _full_batch_then(args: dict, priority: int):
    """Requests 0 (priority 1) and 1 (priority 0) run in a batch of two; request 2 arrives with `priority`."""
    twin = Scheduler(ServerArgs(**{**PRIORITY, **args}))
    twin.add_request(0, [1, 2, 3], 20, priority=1)
    twin.add_request(1, [4, 5, 6], 20, priority=0)
    step_sglang_twin(twin)
    step_sglang_twin(twin)
    twin.add_request(2, [7, 8, 9], 20, priority=priority)
    return twin, step_sglang_twin(twin)


def test_a_more_important_arrival_preempts_the_least_important_running_request():
    twin, batch = _full_batch_then({"priority_scheduling_preemption_threshold": 5}, 9)
    assert [r.rid for r in batch.reqs] == [2] and batch.forward_mode == "extend"
    assert [r.rid for r in twin.running_batch.reqs] == [0]  # 1, priority 0, the lowest, released
    assert [r.rid for r in twin.waiting_queue] == [1]
    preempted = twin.waiting_queue[0]
    assert not preempted.holds_kv and preempted.is_retracted and len(preempted.output_ids) == 2
    assert [(p.rid, r.rid) for p, r in twin.last_adder.preemptions] == [(1, 2)]


@pytest.mark.parametrize("args", [{"priority_scheduling_preemption_threshold": 9},  # 9 - 0 is not more than 9
                                  {"disable_priority_preemption": True},
                                  {"schedule_low_priority_values_first": True}])  # then 9 is the least important
def test_no_preemption_within_the_threshold_with_it_disabled_or_in_the_other_direction(args):
    twin, batch = _full_batch_then(args, 9)
    assert batch.forward_mode == "decode" and sorted(r.rid for r in batch.reqs) == [0, 1]
    assert [r.rid for r in twin.waiting_queue] == [2]


def test_fcfs_and_lof_order_by_priority_first_lower_values_first_when_asked():
    for low_first, order in ((False, [2, 0, 1]), (True, [1, 0, 2])):
        twin = Scheduler(ServerArgs(**{**PRIORITY, "max_running_requests": 1},
                                    schedule_low_priority_values_first=low_first))
        for rid, priority in enumerate((3, 1, 7)):
            twin.add_request(rid, [rid + 1], 1, priority=priority)
        assert [[r.rid for r in step_sglang_twin(twin).reqs][0] for _ in range(3)] == order
    lof = Scheduler(ServerArgs(**{**PRIORITY, "schedule_policy": "lof"}))
    for rid, (priority, out) in enumerate(((1, 5), (2, 3), (2, 9))):
        lof.add_request(rid, [rid + 1], out, priority=priority)
    assert [r.rid for r in step_sglang_twin(lof).reqs] == [2, 1]  # priority 2 first, then the longer output


def test_retraction_by_priority_takes_the_least_important_first():
    def retracted(policy: str) -> list[int]:
        """Request 0 (priority 0) runs 3 steps ahead of request 1 (priority 5) until the pool runs out."""
        twin = Scheduler(ServerArgs(max_total_tokens=24, max_running_requests=2, schedule_policy="fcfs",
                                    schedule_conservativeness=0.05, enable_priority_scheduling=True,
                                    disable_priority_preemption=True, retraction_policy=policy))
        twin.add_request(0, [1, 2], 16, priority=0)
        for step in range(30):
            if step == 3:
                twin.add_request(1, [3, 4], 16, priority=5)
            step_sglang_twin(twin)
            if twin.retracted:
                return [r.rid for r in twin.retracted]
        raise AssertionError("no retraction")
    assert retracted("length") == [1]  # the fewest output tokens
    assert retracted("priority") == [0]  # the least important, though it has more


@pytest.mark.parametrize("args, refused", [({"schedule_policy": "lpm", "enable_priority_scheduling": True},
                                            "must be 'fcfs' or 'lof'"),
                                           ({"retraction_policy": "priority"}, "requires --enable-priority"),
                                           ({"retraction_policy": "oldest"}, "use one of")])
def test_priority_settings_sglang_refuses_are_refused(args, refused):
    with pytest.raises(ValueError, match=refused):
        ServerArgs(**args)
