"""The SGLang twin's parts on their own (the golden traces check the whole against SGLang itself): the radix tree
over token slots, the paged allocator's free order, the new_token_ratio, the settings refused."""

import pytest

from scheduler.sglang import NewTokenRatioTracker, Scheduler, ServerArgs
from scheduler.sglang.allocator import PagedTokenToKVPoolAllocator, TokenToKVPoolAllocator
from scheduler.sglang.radix_cache import RadixCache


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
    assert tree.evict(3) == 3
    assert tree.allocator.available_size() == 59
    assert tree.snapshot() == [[0, [1, 2, 3], [1, 2, 3], 1], [1, [4], [4], 0], [1, [9], [9], 1]]
    tree.dec_lock_ref(node)
    assert tree.evict(100) == 5 and tree.snapshot() == []


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


@pytest.mark.parametrize("field", ["max_total_tokens", "page_size", "max_running_requests"])
def test_settings_below_1_are_refused_by_name(field):
    with pytest.raises(ValueError, match=field):
        ServerArgs(**{field: 0})


def test_a_prompt_sglang_would_refuse_is_refused_at_arrival():
    scheduler = Scheduler(ServerArgs(max_total_tokens=32))
    with pytest.raises(ValueError, match="1 to 25"):
        scheduler.add_request(0, list(range(1, 30)), 4)
