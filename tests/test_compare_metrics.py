"""The comparison's extra metrics against values worked out by hand on a tiny run with one preemption."""

import pytest

from engine.run.engine import Engine
from engine.run.metrics import internal_fragmentation, percentile, recomputed_tokens
from engine.run.recipe import Request, RunSpec
from scheduler import Config


@pytest.fixture(scope="module")
def frames():
    # Two 3-token prompts, 4 output tokens each, a pool of 2 blocks of 4 slots:
    # step 1 prefills both (3 tokens in one block each), step 2 decodes both (4 tokens each, blocks full),
    # step 3 needs a second block for request 0: request 1 (the tail) is preempted and loses its 4 tokens,
    # step 4 finishes 0, step 5 prefills 1 again (5 tokens), step 6 finishes it.
    config = Config(max_num_seqs=2, max_num_batched_tokens=16, max_model_len=16, num_kvcache_blocks=2,
                    kvcache_block_size=4, enable_prefix_caching=False)
    engine = Engine(RunSpec(config, [Request(prompt_token_ids=(1, 2, 3), max_tokens=4, ignore_eos=True)] * 2))
    assert engine.run() == "finished"
    frames = list(engine.frames)
    assert [f.batch.seq_ids for f in frames] == [(), (0, 1), (0, 1), (0,), (0,), (1,), (1,)]
    assert [e.seq_id for e in frames[3].events_of("preempted")] == [1]
    return frames


def test_percentile_interpolates_between_ranks():
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([1, 2, 3, 4], 99) == pytest.approx(3.97)
    assert percentile([1, 2, 3, 4], 0) == 1 and percentile([1, 2, 3, 4], 100) == 4
    assert percentile([7], 99) == 7
    assert percentile([], 50) is None


def test_recomputed_tokens_counts_what_the_preemption_threw_away(frames):
    assert recomputed_tokens(frames) == 4
    assert recomputed_tokens(frames[:3]) == 0  # before the preemption
    # finishing frees blocks too, but that is not recomputation
    assert frames[4].requests[0].num_computed_tokens == 0 and recomputed_tokens(frames[:5]) == 4


def test_internal_fragmentation_is_the_share_of_empty_slots_in_held_blocks(frames):
    assert internal_fragmentation(frames[0]) == 0.0  # nothing held
    assert internal_fragmentation(frames[1]) == pytest.approx(2 / 8)  # 3 of 4 slots used in each block
    assert internal_fragmentation(frames[2]) == 0.0  # both blocks full
    assert internal_fragmentation(frames[3]) == pytest.approx(3 / 8)  # request 0: 5 tokens in 2 blocks


def test_a_shared_prefix_block_counts_once():
    config = Config(max_num_seqs=2, max_num_batched_tokens=16, max_model_len=16, num_kvcache_blocks=8,
                    kvcache_block_size=4, enable_prefix_caching=True)
    prompt = (1, 2, 3, 4, 5)
    engine = Engine(RunSpec(config, [Request(prompt_token_ids=prompt, max_tokens=4, ignore_eos=True),
                             Request(arrival=1, prompt_token_ids=prompt, max_tokens=4, ignore_eos=True)]))
    engine.run(steps=3)
    frame = engine.frames[-1]
    assert frame.requests[0].block_table[0] == frame.requests[1].block_table[0]  # the prefix hit
    # blocks: shared full block, then request 0's second block and request 1's second block
    filled = 4 + (frame.requests[0].num_computed_tokens - 4) + (frame.requests[1].num_computed_tokens - 4)
    assert internal_fragmentation(frame) == pytest.approx(1 - filled / 12)
