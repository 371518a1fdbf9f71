"""The runner's one primitive to move KV between pools (`Batch.block_copies`, runner/kv_pools.py) on the tiny model:
a request's blocks copied to a CPU pool, their GPU blocks written over by another request, and copied back into
other GPU blocks hold the very K/V they held, so the request decodes on token for token as generate() does."""

import pytest
import torch

from runner.model_runner import ModelRunner
from scheduler import Config, SamplingParams, Sequence
from scheduler.contract import GPU_POOL
from scheduler.interface import BlockCopy
from tests.helpers.tiny_model import DEVICES, TINY_EOS, random_prompts, reference_completion, tiny_model

CPU = "cpu"
SIZE = 4


def _step(runner: ModelRunner, seq: Sequence, n: int):
    """Compute `n` more tokens of `seq` and append the model's next one."""
    seq.num_scheduled_tokens = n
    (token,) = runner.run([seq])
    seq.num_computed_tokens += n
    seq.token_ids.append(token)


@pytest.mark.parametrize("device", DEVICES)
def test_blocks_copied_out_and_back_hold_the_same_kv_and_the_request_decodes_on_exactly(device):
    tiny = tiny_model(device=device)
    runner = ModelRunner(tiny, Config(num_kvcache_blocks=10, kvcache_block_size=SIZE, max_model_len=64,
                                      eos=TINY_EOS), side_pools={CPU: 3})
    prompt, other = random_prompts([6, 7], seed=5)
    seq = Sequence(prompt, SamplingParams(temperature=0.0, max_tokens=8), seq_id=0)
    seq.block_table = [2, 5]
    _step(runner, seq, len(prompt))
    _step(runner, seq, 1)  # 7 tokens computed, in blocks 2 and 5
    before = [runner.pool_block(GPU_POOL, b) for b in seq.block_table]
    runner.copy_blocks([BlockCopy(GPU_POOL, 2, CPU, 0), BlockCopy(GPU_POOL, 5, CPU, 2)])
    assert all(torch.equal(runner.pool_block(CPU, u), kv.cpu()) for u, kv in zip((0, 2), before, strict=True))
    intruder = Sequence(other, SamplingParams(temperature=0.0, max_tokens=1), seq_id=1)
    intruder.block_table = [5, 2]  # the swapped-out request's GPU blocks, written over
    _step(runner, intruder, len(other))
    assert not torch.equal(runner.pool_block(GPU_POOL, 2), before[0])
    runner.copy_blocks([BlockCopy(CPU, 0, GPU_POOL, 7), BlockCopy(CPU, 2, GPU_POOL, 3)])
    assert all(torch.equal(runner.pool_block(GPU_POOL, b), kv) for b, kv in zip((7, 3), before, strict=True))
    seq.block_table = [7, 3, 8]
    for _ in range(4):
        _step(runner, seq, 1)
    assert seq.token_ids[len(prompt):] == reference_completion(tiny, prompt, 6)


def test_a_copy_outside_the_pools_is_refused_and_changes_nothing():
    runner = ModelRunner(tiny_model(), Config(num_kvcache_blocks=4, kvcache_block_size=SIZE), side_pools={CPU: 2})
    for bad, said in ((BlockCopy(GPU_POOL, 0, "disk", 0), "no KV pool 'disk'"),
                      (BlockCopy(CPU, 2, GPU_POOL, 0), "outside pool 'cpu' of 2 blocks")):
        with pytest.raises(ValueError, match=said):
            runner.copy_blocks([BlockCopy(GPU_POOL, 1, CPU, 0), bad])
    assert torch.count_nonzero(runner.pools[CPU][0]) == 0
